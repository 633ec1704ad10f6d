// The executor against ONNX's own backend node tests (libonnx-testdata): every test model is imported
// with its inputs' sizes fixed, run with its test inputs fed, and every output compared with the
// reference output (float tolerance for floating types, exact for integers and booleans).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profiler.h"

namespace fs = std::filesystem;

namespace {

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";
// TensorProto codes newer than the ONNX headers this project builds with.
constexpr int kFloat8E4M3FN = 17, kFloat8E5M2 = 19;

bool readTensor(const fs::path& p, onnx::TensorProto& t) {
    std::ifstream in(p, std::ios::binary);
    return in && t.ParseFromIstream(&in);
}

double halfToDouble(uint16_t h) {
    const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0)
        v = std::ldexp(mant, -24);
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = std::ldexp(mant + 1024, exp - 25);
    return sign ? -v : v;
}

double bfloat16ToDouble(uint16_t b) {
    uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

double float8ToDouble(uint8_t b, bool e4m3) {
    const int sign = b >> 7;
    double v;
    if (e4m3) {
        const int exp = (b >> 3) & 0xf, mant = b & 0x7;
        if (exp == 15 && mant == 7) return NAN;
        v = exp == 0 ? std::ldexp(mant, -9) : std::ldexp(mant + 8, exp - 10);
    } else {
        return halfToDouble(static_cast<uint16_t>(uint16_t(b) << 8));
    }
    return sign ? -v : v;
}

// A TensorProto's values as doubles; false for types the executor has no counterpart for.
bool decodeValues(const onnx::TensorProto& t, std::vector<double>& out) {
    int64_t n = 1;
    for (int64_t d : t.dims()) n *= d;
    const std::string& raw = t.raw_data();
    const bool hasRaw = t.has_raw_data();
    auto rawAt = [&](auto tag, int64_t i) {
        decltype(tag) v;
        std::memcpy(&v, raw.data() + i * int64_t(sizeof v), sizeof v);
        return v;
    };
    out.clear();
    for (int64_t i = 0; i < n; ++i) {
        double v = 0;
        switch (t.data_type()) {
            case onnx::TensorProto::FLOAT:
                v = hasRaw ? rawAt(float{}, i) : t.float_data(int(i));
                break;
            case onnx::TensorProto::DOUBLE:
                v = hasRaw ? rawAt(double{}, i) : t.double_data(int(i));
                break;
            case onnx::TensorProto::INT64:
                v = double(hasRaw ? rawAt(int64_t{}, i) : t.int64_data(int(i)));
                break;
            case onnx::TensorProto::UINT64:
                v = double(hasRaw ? rawAt(uint64_t{}, i) : t.uint64_data(int(i)));
                break;
            case onnx::TensorProto::UINT32:
                v = double(hasRaw ? rawAt(uint32_t{}, i) : t.uint64_data(int(i)));
                break;
            case onnx::TensorProto::INT32:
                v = hasRaw ? rawAt(int32_t{}, i) : t.int32_data(int(i));
                break;
            case onnx::TensorProto::INT16:
                v = hasRaw ? rawAt(int16_t{}, i) : int16_t(t.int32_data(int(i)));
                break;
            case onnx::TensorProto::UINT16:
                v = hasRaw ? rawAt(uint16_t{}, i) : uint16_t(t.int32_data(int(i)));
                break;
            case onnx::TensorProto::INT8:
                v = hasRaw ? rawAt(int8_t{}, i) : int8_t(t.int32_data(int(i)));
                break;
            case onnx::TensorProto::UINT8:
                v = hasRaw ? rawAt(uint8_t{}, i) : uint8_t(t.int32_data(int(i)));
                break;
            case onnx::TensorProto::BOOL:
                v = (hasRaw ? rawAt(uint8_t{}, i) : t.int32_data(int(i))) != 0;
                break;
            case onnx::TensorProto::FLOAT16:
                v = halfToDouble(hasRaw ? rawAt(uint16_t{}, i) : uint16_t(t.int32_data(int(i))));
                break;
            case onnx::TensorProto::BFLOAT16:
                v = bfloat16ToDouble(hasRaw ? rawAt(uint16_t{}, i) : uint16_t(t.int32_data(int(i))));
                break;
            case kFloat8E4M3FN:
            case kFloat8E5M2:
                v = float8ToDouble(hasRaw ? rawAt(uint8_t{}, i) : uint8_t(t.int32_data(int(i))),
                                   t.data_type() == kFloat8E4M3FN);
                break;
            default:
                return false;
        }
        out.push_back(v);
    }
    return true;
}

// As the importer test: every input's size fixed to its test data, small inputs (shape vectors,
// scales, k) made initializers so that their values are known, as in an exported model.
bool prepareModel(const fs::path& dir, onnx::ModelProto& model, std::vector<onnx::TensorProto>& inputs,
                  std::vector<onnx::TensorProto>& expected) {
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    if (!in || !model.ParseFromIstream(&in)) return false;
    const fs::path data = dir / "test_data_set_0";
    std::set<std::string> initialized;
    for (const auto& t : model.graph().initializer()) initialized.insert(t.name());
    int k = 0;
    for (int i = 0; i < model.graph().input_size(); ++i) {
        auto* vi = model.mutable_graph()->mutable_input(i);
        if (initialized.count(vi->name())) continue;
        onnx::TensorProto t;
        if (!readTensor(data / ("input_" + std::to_string(k++) + ".pb"), t)) return false;
        t.set_name(vi->name());
        // bfloat16 test data is stored as uint16 (the same bits).
        if (t.data_type() == onnx::TensorProto::UINT16 &&
            vi->type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
            t.set_data_type(onnx::TensorProto::BFLOAT16);
        inputs.push_back(t);
        if (!vi->type().has_tensor_type()) continue;
        auto* shape = vi->mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        int64_t n = 1;
        for (int64_t d : t.dims()) {
            shape->add_dim()->set_dim_value(d);
            n *= d;
        }
        const int type = t.data_type();
        const bool integer = type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32;
        if ((integer ? n <= 4096 : n <= 8) && type != onnx::TensorProto::STRING) {
            onnx::TensorProto* init = model.mutable_graph()->add_initializer();
            *init = t;
        }
    }
    for (int i = 0;; ++i) {
        onnx::TensorProto t;
        if (!readTensor(data / ("output_" + std::to_string(i) + ".pb"), t)) break;
        expected.push_back(t);
    }
    return !expected.empty();
}

// Tests whose reference depends on random draws.
bool isRandomTest(const std::string& name) {
    if (name.rfind("test_bernoulli", 0) == 0 || name.rfind("test_random", 0) == 0) return true;
    return name.rfind("test_training_dropout", 0) == 0 && name.find("zero_ratio") == std::string::npos;
}

std::string describe(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// Empty when equal; otherwise what differs.
std::string compareOutput(const ts::HostTensor& got, const onnx::TensorProto& want) {
    std::vector<int64_t> shape(want.dims().begin(), want.dims().end());
    if (got.shape != shape) return "shape " + describe(got.shape) + ", reference " + describe(shape);
    onnx::TensorProto ref = want;
    // ONNX stores bfloat16 references as uint16 (the same bits).
    if (ref.data_type() == onnx::TensorProto::UINT16 && got.dtype == ts::DType::BFloat16)
        ref.set_data_type(onnx::TensorProto::BFLOAT16);
    std::vector<double> expected;
    if (!decodeValues(ref, expected)) return "reference of unsupported type " + std::to_string(ref.data_type());
    double rtol = 0, atol = 0;
    switch (got.dtype) {
        case ts::DType::Float32:
        case ts::DType::Float64:
            rtol = 1e-3;
            atol = 1e-4;
            break;
        case ts::DType::Float16:
        case ts::DType::BFloat16:
            rtol = 1e-2;
            atol = 1e-3;
            break;
        case ts::DType::Float8E4M3:
        case ts::DType::Float8E5M2:
            rtol = 0.13;
            atol = 1e-3;
            break;
        default:
            break;
    }
    int bad = 0;
    std::string first;
    for (size_t i = 0; i < expected.size(); ++i) {
        const double a = got.values[i], b = expected[i];
        const bool same = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= atol + rtol * std::fabs(b);
        if (!same && bad++ == 0)
            first = "element " + std::to_string(i) + " is " + std::to_string(a) + ", reference " + std::to_string(b);
    }
    if (bad == 0) return "";
    return std::to_string(bad) + " of " + std::to_string(expected.size()) + " elements differ (" + first + ")";
}

// The importer refuses operators whose output size depends on tensor values (no static shape);
// their single-node test models become a graph by hand (output shapes left unknown) and run all the same.
std::optional<ts::Graph> handBuiltGraph(const std::string& name, const onnx::ModelProto& model,
                                        const std::vector<onnx::TensorProto>& inputs,
                                        const std::vector<onnx::TensorProto>& expected) {
    const onnx::GraphProto& gp = model.graph();
    if (gp.node_size() != 1) return std::nullopt;  // initializers added for small inputs are among `inputs`
    const onnx::NodeProto& node = gp.node(0);
    ts::Graph g;
    g.name = name;
    g.source = name;
    for (const onnx::TensorProto& t : inputs) {
        ts::Value v;
        v.name = t.name();
        v.dtype = ts::dtypeFromOnnx(t.data_type());
        for (int64_t d : t.dims()) v.shape.push_back(ts::Dim(d));
        v.kind = ts::ValueKind::Input;
        g.inputs.push_back(g.addValue(v));
    }
    ts::Operation op;
    op.type = node.op_type();
    op.name = node.name().empty() ? node.op_type() : node.name();
    for (const auto& o : model.opset_import())
        if (o.domain().empty()) op.attrs["_opset"] = int64_t{o.version()};
    for (const onnx::AttributeProto& a : node.attribute()) {
        switch (a.type()) {
            case onnx::AttributeProto::INT:
                op.attrs[a.name()] = int64_t{a.i()};
                break;
            case onnx::AttributeProto::FLOAT:
                op.attrs[a.name()] = double{a.f()};
                break;
            case onnx::AttributeProto::STRING:
                op.attrs[a.name()] = a.s();
                break;
            case onnx::AttributeProto::INTS:
                op.attrs[a.name()] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
                break;
            case onnx::AttributeProto::FLOATS:
                op.attrs[a.name()] = std::vector<double>(a.floats().begin(), a.floats().end());
                break;
            default:
                return std::nullopt;
        }
    }
    for (const std::string& in : node.input()) {
        op.inputs.push_back(in.empty() ? -1 : g.findValue(in));
        if (!in.empty() && op.inputs.back() < 0) return std::nullopt;
    }
    for (int k = 0; k < node.output_size(); ++k) {
        ts::Value v;
        v.name = node.output(k);
        v.dtype = size_t(k) < expected.size() ? ts::dtypeFromOnnx(expected[size_t(k)].data_type()) : ts::DType::Int64;
        op.outputs.push_back(g.addValue(v));
    }
    g.addOperation(op);
    for (const auto& out : gp.output()) {
        const int v = g.findValue(out.name());
        if (v < 0) return std::nullopt;
        g.outputs.push_back(v);
    }
    return g;
}

struct Figures {
    int total = 0, skippedRandom = 0, notImported = 0, handBuilt = 0, executed = 0, passed = 0;
    std::map<std::string, std::vector<std::string>> notExecutable;  // reason -> tests
    std::vector<std::string> mismatches, unexpected;
};

Figures runSuite() {
    Figures f;
    const fs::path tmp = fs::temp_directory_path() / ("trainscope-exec-onnx-" + std::to_string(::getpid()));
    fs::create_directories(tmp);
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(kNodeTests))
        if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
        const std::string name = dir.filename().string();
        onnx::ModelProto model;
        std::vector<onnx::TensorProto> inputs, expected;
        if (!prepareModel(dir, model, inputs, expected)) continue;
        ++f.total;
        if (isRandomTest(name)) {
            ++f.skippedRandom;
            continue;
        }
        const fs::path file = tmp / (name + ".onnx");
        {
            std::ofstream out(file, std::ios::binary);
            out << model.SerializeAsString();
        }
        ts::Graph g;
        try {
            g = ts::importOnnx(file.string(), {{"concrete", "1"}});
        } catch (const ts::ModelError& e) {
            std::optional<ts::Graph> byHand;
            if (e.problem().find("data-dependent") != std::string::npos)
                byHand = handBuiltGraph(name, model, inputs, expected);
            if (!byHand) {
                ++f.notImported;  // the importer test accounts for these
                continue;
            }
            ++f.handBuilt;
            g = std::move(*byHand);
        }
        std::map<std::string, ts::HostTensor> feeds;
        bool feedable = true;
        for (const onnx::TensorProto& t : inputs) {
            ts::HostTensor h;
            h.dtype = ts::dtypeFromOnnx(t.data_type());
            h.shape.assign(t.dims().begin(), t.dims().end());
            feedable &= decodeValues(t, h.values);
            const int v = g.findValue(t.name());
            if (v >= 0) h.dtype = g.values[size_t(v)].dtype;
            feeds[t.name()] = std::move(h);
        }
        if (!feedable) {
            f.notExecutable["inputs of a type the executor cannot feed"].push_back(name);
            continue;
        }
        std::vector<ts::HostTensor> outputs;
        try {
            outputs = ts::runForward(g, feeds, 1, 1);
        } catch (const ts::ExecutionError& e) {
            std::string why = e.what();
            // "<file>: <op> (<type>): problem" -> keep the type and the problem
            const size_t open = why.find(" (");
            f.notExecutable[open == std::string::npos ? why : why.substr(open + 1)].push_back(name);
            continue;
        } catch (const std::exception& e) {
            f.unexpected.push_back(name + ": " + e.what());
            continue;
        }
        ++f.executed;
        std::string problem;
        for (size_t i = 0; i < expected.size() && problem.empty(); ++i) {
            if (i >= outputs.size())
                problem = "missing output " + std::to_string(i);
            else if (std::string d = compareOutput(outputs[i], expected[i]); !d.empty())
                problem = "output " + std::to_string(i) + ": " + d;
        }
        if (problem.empty())
            ++f.passed;
        else
            f.mismatches.push_back(name + ": " + problem);
        fs::remove(file);
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return f;
}

}  // namespace

TEST(ExecutorOnnx, BackendNodeTestsMatchReferenceOutputs) {
    if (!ts::executionSupported()) GTEST_SKIP() << "this build has no LibTorch";
    if (!fs::is_directory(kNodeTests)) GTEST_SKIP() << "libonnx-testdata is not installed";
    Figures f = runSuite();
    int notExecutable = 0;
    for (const auto& [why, tests] : f.notExecutable) notExecutable += int(tests.size());
    std::printf(
        "ONNX node tests: %d total, %d skipped (random), %d not importable, %d built by hand (data-dependent), "
        "%d executed, %d passed, %d not executable, %d reference mismatches\n",
        f.total, f.skippedRandom, f.notImported, f.handBuilt, f.executed, f.passed, notExecutable,
        int(f.mismatches.size()));
    for (const auto& [why, tests] : f.notExecutable) {
        std::string list;
        for (const std::string& t : tests) list += " " + t;
        std::printf("  not executable (%zu): %s:%s\n", tests.size(), why.c_str(), list.c_str());
    }
    for (const std::string& m : f.mismatches) std::printf("  mismatch: %s\n", m.c_str());
    for (const std::string& u : f.unexpected) std::printf("  unexpected exception: %s\n", u.c_str());
    EXPECT_GT(f.total, 900);
    EXPECT_TRUE(f.unexpected.empty()) << "failures must be ExecutionErrors naming the operation";
    // Floor just under today's figure (843 of 844 executed): catches regressions.
    EXPECT_GE(f.passed, 840);
    EXPECT_GE(f.executed, 840);
    // Known differences, each explained; any other mismatch fails (they are all listed above).
    const std::map<std::string, std::string> known{
        {"test_identity",
         "the importer folds Identity of an initializer (this test makes small inputs initializers) "
         "into a copy that keeps no contents"},
    };
    for (const std::string& m : f.mismatches) {
        const std::string name = m.substr(0, m.find(':'));
        EXPECT_TRUE(known.count(name)) << "unexpected mismatch " << m;
    }
}
