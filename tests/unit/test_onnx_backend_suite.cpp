// The ONNX importer on ONNX's own backend test models (libonnx-testdata): every model imports and
// its inferred output shapes and types match the reference outputs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <variant>

#include <onnx/onnx_pb.h>  // ONNX_ML and ONNX_NAMESPACE come from the onnx_proto target

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace fs = std::filesystem;

namespace {

// The model in a file of this process's temporary folder, for the importer to read.
std::string writeModel(const std::string& file, const std::string& bytes) {
    const fs::path dir = fs::temp_directory_path() / ("trainscope-onnx-backend-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / file, std::ios::binary) << bytes;
    return (dir / file).string();
}

bool readTensor(const fs::path& p, onnx::TensorProto& t) {
    std::ifstream in(p, std::ios::binary);
    return in && t.ParseFromIstream(&in);
}

struct BackendResult {
    int total = 0, imported = 0, shapesEqual = 0, uncovered = 0, symbolicAgree = 0;
    std::vector<std::string> failures;
};

// Fixes every graph input to its test data's shape; small inputs (shape vectors, scales, k)
// become initializers so that their values are known, as in an exported model.
bool prepareBackendModel(const fs::path& dir, onnx::ModelProto& model, std::vector<onnx::TensorProto>& expected) {
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    if (!in || !model.ParseFromIstream(&in)) return false;
    fs::path data = dir / "test_data_set_0";
    std::set<std::string> initialized;
    for (const auto& t : model.graph().initializer()) initialized.insert(t.name());
    int k = 0;
    for (int i = 0; i < model.graph().input_size(); ++i) {
        auto* vi = model.mutable_graph()->mutable_input(i);
        if (initialized.count(vi->name())) continue;
        onnx::TensorProto t;
        if (!readTensor(data / ("input_" + std::to_string(k++) + ".pb"), t)) return false;
        if (!vi->type().has_tensor_type()) continue;
        auto* shape = vi->mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        int64_t n = 1;
        for (int64_t d : t.dims()) {
            shape->add_dim()->set_dim_value(d);
            n *= d;
        }
        int type = t.data_type();
        bool smallArgument = (type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32) ? n <= 4096 : n <= 8;
        if (smallArgument && type != onnx::TensorProto::STRING) {
            onnx::TensorProto* init = model.mutable_graph()->add_initializer();
            *init = t;
            init->set_name(vi->name());
        }
    }
    for (int i = 0;; ++i) {
        onnx::TensorProto t;
        if (!readTensor(data / ("output_" + std::to_string(i) + ".pb"), t)) break;
        expected.push_back(t);
    }
    return !expected.empty();
}

bool shapesAndTypesMatch(const ts::Graph& g, const std::vector<onnx::TensorProto>& expected, int64_t batch, std::string* why) {
    if (g.outputs.size() < expected.size()) {
        *why = "has " + std::to_string(g.outputs.size()) + " outputs";
        return false;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
        const ts::Value& v = g.values[g.outputs[i]];
        std::vector<int64_t> dims(expected[i].dims().begin(), expected[i].dims().end());
        if (ts::evalShape(v.shape, batch, 1) != dims) {
            std::string w;
            for (int64_t d : dims) w += std::to_string(d) + " ";
            *why = "output " + std::to_string(i) + " is " + ts::shapeStr(v.shape) + ", reference [" + w + "]";
            return false;
        }
        ts::DType want = ts::dtypeFromOnnx(expected[i].data_type());
        // ONNX's bfloat16 cast tests store their reference outputs as uint16 (same bits).
        if (want == ts::DType::Int16 && v.dtype == ts::DType::BFloat16) want = ts::DType::BFloat16;
        if (v.dtype != want) {
            *why = "output " + std::to_string(i) + " has type " + ts::dtypeName(v.dtype) + ", reference " +
                   ts::dtypeName(want);
            return false;
        }
    }
    return true;
}

BackendResult runBackendSuite(const std::vector<fs::path>& roots) {
    BackendResult r;
    std::vector<fs::path> dirs;
    for (const fs::path& root : roots)
        if (fs::is_directory(root))
            for (const auto& e : fs::directory_iterator(root))
                if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
        onnx::ModelProto model;
        std::vector<onnx::TensorProto> expected;
        if (!prepareBackendModel(dir, model, expected)) continue;
        ++r.total;
        std::string file = writeModel(dir.filename().string() + ".onnx", model.SerializeAsString());
        std::string why;
        try {
            ts::Graph g = ts::importOnnx(file, {{"concrete", "1"}});
            ++r.imported;
            if (shapesAndTypesMatch(g, expected, 1, &why)) ++r.shapesEqual;
            else r.failures.push_back(dir.filename().string() + ": " + why);
        } catch (const ts::ModelError& e) {
            std::string p = e.problem();
            if (p.find("unsupported") != std::string::npos || p.find("not supported") != std::string::npos ||
                p.find("data-dependent") != std::string::npos) {
                ++r.uncovered;
            }
            else
                r.failures.push_back(dir.filename().string() + ": " + p);
            continue;
        }
        // The default (symbolic batch) import must agree at the file's batch size.
        try {
            ts::Graph g = ts::importOnnx(file, {});
            int64_t batch = g.defaults.batch;
            if (shapesAndTypesMatch(g, expected, batch, &why)) ++r.symbolicAgree;
            else r.failures.push_back(dir.filename().string() + " (symbolic batch " + std::to_string(batch) + "): " + why);
        } catch (const ts::ModelError& e) {
            r.failures.push_back(dir.filename().string() + " (symbolic batch): " + e.problem());
        }
        fs::remove(file);
    }
    return r;
}

}  // namespace

TEST(OnnxImport, BackendNodeTestModelsMatchReferenceShapes) {
    const fs::path root = "/usr/share/libonnx-testdata/data";
    if (!fs::is_directory(root / "node")) GTEST_SKIP() << "libonnx-testdata is not installed";
    BackendResult r = runBackendSuite({root / "node", root / "pytorch-converted", root / "pytorch-operator", root / "simple"});
    std::printf("ONNX backend node tests: imported %d / total %d, shapes equal on %d (symbolic batch agrees on %d, "
                "%d unsupported)\n",
                r.imported, r.total, r.shapesEqual, r.symbolicAgree, r.uncovered);
    for (const std::string& f : r.failures) std::printf("  %s\n", f.c_str());
    EXPECT_GT(r.total, 1000);
    // Floor just under today's coverage (961 with every operator family in place): catches regressions.
    EXPECT_GE(r.shapesEqual, 950);
    EXPECT_TRUE(r.failures.empty()) << r.failures.size() << " models failed to import or disagree (listed above)";
}

