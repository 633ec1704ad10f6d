// TorchScript importer (LibTorch). How each executed ATen operation becomes canonical operations is
// in torchscript_emit.cpp; what the two share is in torchscript_import.h.
//
// A TorchScript archive has no input shapes, and many shapes in it (views of size() results) are
// only known by running it. So the importer runs the forward graph node by node on the CPU with small
// random inputs at two batch sizes (and two sequence lengths for token models), descending into each
// submodule's method call to know the module path, and while doing so emits canonical ONNX-style
// operations for every tensor operation it executes (a trace that follows the branches taken). Each
// measured dimension is then fitted as c*N^a*S^b+k so the batch (and sequence) stay symbolic.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "importers/pickle_check.h"
#include "torchscript_import.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace ts {
namespace torchscript_import {
namespace {

std::string firstLine(const std::string& s) {
    std::string line = s.substr(0, s.find('\n'));
    return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace

DType dtypeOf(at::ScalarType t) {
    switch (t) {
        case at::kFloat: return DType::Float32;
        case at::kHalf: return DType::Float16;
        case at::kBFloat16: return DType::BFloat16;
        case at::kDouble: return DType::Float64;
        case at::kLong: return DType::Int64;
        case at::kInt: return DType::Int32;
        case at::kShort: return DType::Int16;
        case at::kChar: return DType::Int8;
        case at::kByte: return DType::UInt8;
        case at::kBool: return DType::Bool;
        default: return DType::Unknown;
    }
}

int onnxDtypeCode(DType t) {
    switch (t) {
        case DType::Float32: return 1;
        case DType::UInt8: return 2;
        case DType::Int8: return 3;
        case DType::Int16: return 5;
        case DType::Int32: return 6;
        case DType::Int64: return 7;
        case DType::Bool: return 9;
        case DType::Float16: return 10;
        case DType::Float64: return 11;
        case DType::BFloat16: return 16;
        default: return 0;
    }
}

// ---------------------------------------------------------------------------------------------
// Fitting measured dimensions to c*N^a*S^b + k.

namespace {

std::optional<Dim> fitDim(const std::vector<int64_t>& d, const std::vector<RunPoint>& runs) {
    bool allEqual = true;
    for (int64_t x : d) allEqual &= x == d[0];
    if (allEqual) return Dim(d[0]);
    auto monomial = [](int a, int b) {
        Dim m(1);
        for (int i = 0; i < a; ++i) m = m * Dim::batch();
        for (int i = 0; i < b; ++i) m = m * Dim::seq();
        return m;
    };
    std::optional<Dim> withOffset;
    for (int a = 0; a <= 2; ++a)
        for (int b = 0; b <= 2; ++b) {
            if (a == 0 && b == 0) continue;
            Dim m = monomial(a, b);
            std::vector<int64_t> mv;
            for (const RunPoint& r : runs) mv.push_back(m.eval(r.batch, r.seq));
            // Solve d = c*m + k from two runs with different m, then check every run.
            size_t j = 1;
            while (j < mv.size() && mv[j] == mv[0]) ++j;
            if (j == mv.size() || (d[j] - d[0]) % (mv[j] - mv[0]) != 0) continue;
            int64_t c = (d[j] - d[0]) / (mv[j] - mv[0]);
            int64_t k = d[0] - c * mv[0];
            if (c == 0) continue;
            bool ok = true;
            for (size_t i = 0; i < d.size(); ++i) ok &= c * mv[i] + k == d[i];
            if (!ok) continue;
            if (k == 0) return Dim(c) * m;
            if (!withOffset) withOffset = Dim(c) * m + Dim(k);
        }
    return withOffset;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Setup

void TorchScriptImporter::load() {
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) throw ModelError(path_, "no such file");
    if (std::filesystem::is_directory(path_, ec)) throw ModelError(path_, "is a directory, not a model file");
    checkPickles();
    try {
        module_ = tj::load(path_, c10::Device(c10::kCPU));
    } catch (const c10::Error& e) {
        throw ModelError(path_, "not a TorchScript archive: " + firstLine(e.what_without_backtrace()));
    } catch (const std::exception& e) {
        throw ModelError(path_, "not a TorchScript archive: " + firstLine(e.what()));
    }
    auto method = module_.find_method("forward");
    if (!method) throw ModelError(path_, "the TorchScript module has no forward method");
    jit_ = method->graph();
    inlined_ = jit_->copy();
    tj::Inline(*inlined_);
}

// LibTorch's unpickler trusts the lengths inside the archive's pickles: check them first.
void TorchScriptImporter::checkPickles() {
    try {
        caffe2::serialize::PyTorchStreamReader reader(path_);
        for (const std::string& name : reader.getAllRecords()) {
            if (name.size() < 4 || name.compare(name.size() - 4, 4, ".pkl") != 0) continue;
            auto [data, size] = reader.getRecord(name);
            if (auto problem = findPickleLengthProblem(static_cast<const uint8_t*>(data.get()), size))
                throw ModelError(path_, "corrupted TorchScript archive: " + name + ": " + *problem);
        }
    } catch (const c10::Error& e) {
        throw ModelError(path_, "not a TorchScript archive: " + firstLine(e.what_without_backtrace()));
    }
}

void TorchScriptImporter::collectNamedTensors() {
    for (const auto& p : module_.named_parameters(true))
        named_.emplace(p.value.unsafeGetTensorImpl(), std::make_pair(p.name, ValueKind::Parameter));
    for (const auto& b : module_.named_buffers(true))
        named_.emplace(b.value.unsafeGetTensorImpl(), std::make_pair(b.name, ValueKind::Buffer));
}

// The module attribute a GetAttr chain from `self` reaches (for guessing input shapes before running).
std::optional<IValue> TorchScriptImporter::resolveAttr(const tj::Value* v) const {
    if (v == inlined_->inputs()[0]) return module_._ivalue();
    const tj::Node* n = v->node();
    if (n->kind() != c10::prim::GetAttr) return std::nullopt;
    auto parent = resolveAttr(n->input(0));
    if (!parent || !parent->isObject()) return std::nullopt;
    const auto& obj = parent->toObjectRef();
    const std::string& name = n->s(c10::attr::name);
    if (!obj.type()->hasAttribute(name)) return std::nullopt;
    return obj.getAttr(name);
}

namespace {

// "3x224x224" -> {3, 224, 224}
std::vector<int64_t> parseDims(const std::string& text, const std::string& key) {
    std::vector<int64_t> dims;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, 'x')) {
        size_t used = 0;
        int64_t v = -1;
        try {
            v = std::stoll(item, &used);
        } catch (const std::exception&) {
        }
        if (used != item.size() || v < 1 || v > limits::kMaxDimValue)
            throw ImportError("option " + key + "='" + text + "' must be dimensions like 3x224x224");
        dims.push_back(v);
    }
    if (dims.empty() || dims.size() > 6)
        throw ImportError("option " + key + "='" + text + "' must be dimensions like 3x224x224");
    return dims;
}

int64_t parsePositive(const std::string& text, const std::string& key) {
    size_t used = 0;
    int64_t v = -1;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || v < 1 || v > limits::kMaxDimValue)
        throw ImportError("option " + key + "='" + text + "' must be a positive integer");
    return v;
}

}  // namespace

// Input shapes: from input=CxHxW, else from the first layer that consumes each input (a convolution's
// weight [Cout, Cin/g, k, k] -> [N, Cin, 224, 224]; an embedding -> int64 ids [N, S]; a linear layer ->
// [N, in_features]).
void TorchScriptImporter::planInputs() {
    for (const auto& [key, value] : params_)
        if (key != "input" && key != "seq" && key != "batch")
            throw ImportError("unknown option '" + key + "' (TorchScript files take input=CxHxW, seq=, batch=)");
    g_.defaults.batch = params_.count("batch") ? parsePositive(params_.at("batch"), "batch") : 1;
    const auto& inputs = inlined_->inputs();
    if (inputs.size() < 2) throw ImportError("the forward method takes no tensor input");
    bool anyTokens = false;
    for (size_t i = 1; i < inputs.size(); ++i) {
        InputPlan plan;
        plan.name = inputs[i]->debugNameBase();
        if (i == 1 && params_.count("input")) {
            plan.shape.push_back(Dim::batch());
            for (int64_t d : parseDims(params_.at("input"), "input")) plan.shape.push_back(Dim(d));
            plans_.push_back(plan);
            continue;
        }
        // Breadth-first over consumers, a few levels deep (size() calls, casts, views come first).
        std::vector<const tj::Value*> frontier{inputs[i]};
        int64_t vocab = 0;
        for (int depth = 0; depth < 4 && plan.shape.empty() && !frontier.empty(); ++depth) {
            std::vector<const tj::Value*> next;
            for (const tj::Value* v : frontier)
                for (const tj::Use& use : v->uses()) {
                    const tj::Node* u = use.user;
                    std::string kind = u->kind().toQualString();
                    auto weightOf = [&](size_t idx) -> std::optional<at::Tensor> {
                        if (idx >= u->inputs().size()) return std::nullopt;
                        auto w = resolveAttr(u->input(idx));
                        if (w && w->isTensor()) return w->toTensor();
                        return std::nullopt;
                    };
                    if (kind == "aten::embedding" && use.offset == 1) {
                        if (auto w = weightOf(0)) vocab = vocab ? std::min(vocab, w->size(0)) : w->size(0);
                    } else if (plan.shape.empty() && use.offset == 0 &&
                               (kind == "aten::_convolution" || kind == "aten::conv2d" || kind == "aten::conv1d" ||
                                kind == "aten::conv3d")) {
                        if (auto w = weightOf(1)) {
                            int64_t groups = 1;
                            size_t gi = kind == "aten::_convolution" ? 8 : 6;
                            if (auto gv = tj::toIValue(u->input(gi)); gv && gv->isInt()) groups = gv->toInt();
                            plan.shape = {Dim::batch(), Dim(w->size(1) * groups)};
                            int64_t spatial = w->dim() == 3 ? 1024 : w->dim() == 5 ? 112 : 224;
                            for (int64_t k = 2; k < w->dim(); ++k) plan.shape.push_back(Dim(spatial));
                        }
                    } else if (plan.shape.empty() && use.offset == 0 && kind == "aten::linear") {
                        if (auto w = weightOf(1)) plan.shape = {Dim::batch(), Dim(w->size(1))};
                    }
                    for (const tj::Value* o : u->outputs()) next.push_back(o);
                }
            frontier = std::move(next);
        }
        if (vocab > 0) {
            plan.tokens = true;
            plan.vocab = vocab;
            plan.shape = {Dim::batch(), Dim::seq()};
        }
        anyTokens |= plan.tokens;
        plans_.push_back(plan);
    }
    for (InputPlan& plan : plans_) {
        if (!plan.shape.empty()) continue;
        if (!anyTokens)
            throw ImportError("cannot tell the shape of input '" + plan.name +
                              "'; give it as an option, e.g. model.pt?input=3x224x224");
        plan.tokens = true;  // masks and token types of a token model: [N, S] int64
        plan.shape = {Dim::batch(), Dim::seq()};
    }
    g_.defaults.seq = anyTokens ? (params_.count("seq") ? parsePositive(params_.at("seq"), "seq") : 128) : 0;
    if (anyTokens)
        runs_ = {{2, 8}, {3, 8}, {2, 12}};
    else
        runs_ = {{2, 0}, {3, 0}};
    for (const InputPlan& plan : plans_) {
        Value v;
        v.name = plan.name;
        v.kind = ValueKind::Input;
        v.dtype = plan.tokens ? DType::Int64 : DType::Float32;
        v.shape = plan.shape;
        int idx = g_.addValue(v);
        origin_.push_back({});
        g_.inputs.push_back(idx);
        // Refuse absurd inputs before allocating them.
        if (numel(plan.shape).eval(3, 12) > (int64_t(1) << 28))
            throw ImportError("input '" + plan.name + "' of shape " + shapeStr(plan.shape) + " is too large to run");
    }
}

// ---------------------------------------------------------------------------------------------
// Interpretation: runs the inlined graph node by node, following the branches actually taken.

void TorchScriptImporter::execute(int run, const std::vector<IValue>& inputs) {
    currentRun_ = run;
    step_ = 0;
    measured_.emplace_back();
    std::unordered_map<const tj::Value*, IValue> env;
    env[jit_->inputs()[0]] = module_._ivalue();
    frameSelf_ = jit_->inputs()[0];
    framePath_.clear();
    for (size_t i = 0; i < inputs.size(); ++i) {
        env[jit_->inputs()[i + 1]] = inputs[i];
        if (run == 0) handles_[jit_->inputs()[i + 1]] = Handle{g_.inputs[i], {}};
    }
    runBlock(jit_->block(), env);
    if (run == 0) {
        std::function<void(const Handle&)> addOutputs = [&](const Handle& h) {
            if (h.value >= 0) g_.outputs.push_back(h.value);
            for (const Handle& item : h.items) addOutputs(item);
        };
        for (const tj::Value* out : jit_->outputs())
            if (auto it = handles_.find(out); it != handles_.end()) addOutputs(it->second);
    }
    if (run > 0 && step_ != static_cast<int>(stepNodes_.size()))
        throw ImportError("the model executes different operations at different batch sizes");
}

void TorchScriptImporter::runBlock(tj::Block* block, std::unordered_map<const tj::Value*, IValue>& env) {
    for (tj::Node* n : block->nodes()) runNode(n, env);
}

// Integer arguments that may follow the batch or the sequence length (a slice's bounds, such as
// BERT's position_ids[:, :seq_length]): recorded at every run after the output sizes, in an extra
// slot, and fitted like dimensions, so that they do not keep the first run's values.
std::vector<int64_t> followedInts(const tj::Node* n, const std::vector<IValue>& in) {
    if (n->kind().ns() != c10::namespaces::aten) return {};
    const std::string name = n->kind().toUnqualString();
    if (name == "slice" && in.size() > 3)
        return {in[2].isNone() ? 0 : in[2].toInt(), in[3].isNone() ? INT64_MAX : in[3].toInt()};
    if (name == "narrow" && in.size() > 3) return {in[2].toInt(), in[2].toInt() + in[3].toInt()};
    return {};
}

namespace {

void flattenTensors(const IValue& v, std::vector<at::Tensor>& out) {
    if (v.isTensor()) out.push_back(v.toTensor());
    else if (v.isTensorList())
        for (const at::Tensor& t : v.toTensorVector()) out.push_back(t);
}

}  // namespace

void TorchScriptImporter::runNode(tj::Node* n, std::unordered_map<const tj::Value*, IValue>& env) {
    auto kind = n->kind();
    std::vector<IValue> in;
    in.reserve(n->inputs().size());
    for (const tj::Value* v : n->inputs()) {
        auto it = env.find(v);
        if (it == env.end()) throw ImportError("internal: value %" + v->debugName() + " used before it is set");
        in.push_back(it->second);
    }
    auto handleOf = [&](size_t i) -> Handle {
        auto it = handles_.find(n->input(i));
        return it == handles_.end() ? Handle{} : it->second;
    };
    const bool build = currentRun_ == 0;
    if (kind == c10::prim::If) {
        tj::Block* taken = n->blocks()[in[0].toBool() ? 0 : 1];
        runBlock(taken, env);
        for (size_t i = 0; i < n->outputs().size(); ++i) {
            env[n->output(i)] = env.at(taken->outputs()[i]);
            if (build) handles_[n->output(i)] = handles_.count(taken->outputs()[i]) ? handles_[taken->outputs()[i]] : Handle{};
        }
        return;
    }
    if (kind == c10::prim::CallMethod || kind == c10::prim::CallFunction) {
        runCall(n, in, env);
        return;
    }
    if (kind == c10::prim::Loop) {
        tj::Block* body = n->blocks()[0];
        int64_t maxTrips = in[0].toInt();
        bool cond = in[1].toBool();
        std::vector<IValue> carried(in.begin() + 2, in.end());
        std::vector<Handle> carriedHandles;
        for (size_t i = 2; i < in.size(); ++i) carriedHandles.push_back(handleOf(i));
        for (int64_t trip = 0; cond && trip < maxTrips; ++trip) {
            env[body->inputs()[0]] = IValue(trip);
            for (size_t i = 0; i < carried.size(); ++i) {
                env[body->inputs()[i + 1]] = carried[i];
                if (build) handles_[body->inputs()[i + 1]] = carriedHandles[i];
            }
            runBlock(body, env);
            cond = env.at(body->outputs()[0]).toBool();
            for (size_t i = 0; i < carried.size(); ++i) {
                carried[i] = env.at(body->outputs()[i + 1]);
                if (build) carriedHandles[i] = handles_.count(body->outputs()[i + 1]) ? handles_[body->outputs()[i + 1]] : Handle{};
            }
        }
        for (size_t i = 0; i < n->outputs().size(); ++i) {
            env[n->output(i)] = carried[i];
            if (build) handles_[n->output(i)] = carriedHandles[i];
        }
        return;
    }

    // Container and attribute plumbing: no canonical operation, handles follow the tensors.
    std::vector<IValue> out;
    bool plumbing = true;
    if (kind == c10::prim::Constant) {
        out.push_back(*tj::toIValue(n->output()));
    } else if (kind == c10::prim::GetAttr) {
        out.push_back(in[0].toObjectRef().getAttr(n->s(c10::attr::name)));
    } else if (kind == c10::prim::ListConstruct || kind == c10::prim::TupleConstruct ||
               kind == c10::prim::DictConstruct) {
        if (kind == c10::prim::ListConstruct) {
            c10::impl::GenericList list(n->output()->type()->expectRef<c10::ListType>().getElementType());
            for (const IValue& v : in) list.push_back(v);
            out.emplace_back(std::move(list));
        } else if (kind == c10::prim::TupleConstruct) {
            out.emplace_back(c10::ivalue::Tuple::create(std::vector<IValue>(in.begin(), in.end())));
        } else {
            const auto& dictType = n->output()->type()->expectRef<c10::DictType>();
            c10::impl::GenericDict dict(dictType.getKeyType(), dictType.getValueType());
            for (size_t i = 0; i + 1 < in.size(); i += 2) dict.insert_or_assign(in[i], in[i + 1]);
            out.emplace_back(std::move(dict));
        }
        if (build) {
            Handle h;
            const size_t first = kind == c10::prim::DictConstruct ? 1 : 0, stride = first + 1;
            for (size_t i = first; i < in.size(); i += stride) h.items.push_back(handleOf(i));
            handles_[n->output()] = h;
        }
    } else if (kind == c10::prim::ListUnpack || kind == c10::prim::TupleUnpack) {
        if (kind == c10::prim::ListUnpack)
            for (const IValue& v : in[0].toListRef()) out.push_back(v);
        else
            for (const IValue& v : in[0].toTupleRef().elements()) out.push_back(v);
        if (build) {
            Handle h = handleOf(0);
            for (size_t i = 0; i < n->outputs().size() && i < h.items.size(); ++i) handles_[n->output(i)] = h.items[i];
        }
    } else if (kind == c10::prim::TupleIndex || (kind.toQualString() == std::string("aten::__getitem__") &&
                                                 in[1].isInt() && (in[0].isList() || in[0].isTuple()))) {
        int64_t idx = in[1].toInt();
        size_t count = in[0].isList() ? in[0].toListRef().size() : in[0].toTupleRef().elements().size();
        if (idx < 0) idx += static_cast<int64_t>(count);
        if (idx < 0 || idx >= static_cast<int64_t>(count)) throw ImportError("index out of range while running the model");
        out.push_back(in[0].isList() ? in[0].toListRef()[idx] : in[0].toTupleRef().elements()[idx]);
        if (build) {
            Handle h = handleOf(0);
            if (static_cast<size_t>(idx) < h.items.size()) handles_[n->output()] = h.items[idx];
        }
    } else if (kind == c10::prim::RaiseException) {
        throw ImportError("the model raised an exception while running on the guessed inputs (module '" +
                          modulePath(n) + "'); give the input shape, e.g. ?input=3x224x224");
    } else if (kind == c10::prim::Uninitialized) {
        out.emplace_back();
    } else {
        plumbing = false;
    }
    if (!plumbing) {
        tj::Stack stack(in.begin(), in.end());
        auto it = operations_.find(n);
        if (it == operations_.end()) {
            if (!n->maybeOperator()) unsupported(n);
            it = operations_.emplace(n, n->getOperation()).first;
        }
        try {
            it->second(stack);
        } catch (const c10::Error& e) {
            throw ImportError("running " + std::string(kind.toQualString()) + " in module '" + modulePath(n) +
                              "' failed: " + firstLine(e.what_without_backtrace()));
        }
        out.assign(stack.end() - static_cast<std::ptrdiff_t>(n->outputs().size()), stack.end());
        std::vector<at::Tensor> tensors;
        for (const IValue& v : out) flattenTensors(v, tensors);
        if (!tensors.empty() && kind != c10::prim::NumToTensor) {
            std::vector<std::vector<int64_t>> sizes;
            for (const at::Tensor& t : tensors) sizes.push_back(t.sizes().vec());
            if (std::vector<int64_t> ints = followedInts(n, in); !ints.empty()) sizes.push_back(std::move(ints));
            if (build) {
                stepNodes_.push_back(n);
                measured_[0].push_back(std::move(sizes));
                emit(n, in, out, step_);
            } else {
                if (step_ >= static_cast<int>(stepNodes_.size()) || stepNodes_[step_] != n)
                    throw ImportError("the model executes different operations at different batch sizes");
                measured_[currentRun_].push_back(std::move(sizes));
            }
            ++step_;
        }
    }
    if (out.size() != n->outputs().size()) throw ImportError("internal: wrong output count of " + std::string(kind.toQualString()));
    for (size_t i = 0; i < out.size(); ++i) env[n->output(i)] = std::move(out[i]);
}

// ---------------------------------------------------------------------------------------------
// The canonical graph

std::string TorchScriptImporter::modulePath(tj::Node*) const { return framePath_; }

// Interprets a call to a submodule's method (or a function) in its own frame. The callee's module path
// is the caller's plus the attribute chain from the caller's `self` to the callee object, so ModuleList
// items ("encoder.layer.3") keep their full path.
void TorchScriptImporter::runCall(tj::Node* n, const std::vector<IValue>& in,
                                  std::unordered_map<const tj::Value*, IValue>& env) {
    const bool method = n->kind() == c10::prim::CallMethod;
    tj::Function* fn = nullptr;
    if (method) {
        auto cls = n->input(0)->type()->cast<c10::ClassType>();
        if (!cls) unsupported(n);
        fn = &cls->getMethod(n->s(c10::attr::name));
    } else {
        auto fnType = n->input(0)->type()->cast<c10::FunctionType>();
        if (!fnType) unsupported(n);
        fn = fnType->function();
    }
    tj::GraphFunction* graphFn = tj::tryToGraphFunction(*fn);
    if (!graphFn) unsupported(n);
    std::shared_ptr<tj::Graph> callee = graphFn->graph();
    const size_t first = method ? 0 : 1;  // CallFunction's first input is the function itself
    if (callee->inputs().size() != in.size() - first) throw ImportError("internal: call arity mismatch");
    std::string path = framePath_;
    if (method) {
        std::vector<std::string> names;
        const tj::Value* v = n->input(0);
        while (v != frameSelf_ && v->node()->kind() == c10::prim::GetAttr) {
            names.push_back(v->node()->s(c10::attr::name));
            v = v->node()->input(0);
        }
        if (v == frameSelf_)
            for (auto it = names.rbegin(); it != names.rend(); ++it) path += (path.empty() ? "" : ".") + *it;
    }
    std::unordered_map<const tj::Value*, IValue> calleeEnv;
    for (size_t i = first; i < in.size(); ++i) {
        calleeEnv[callee->inputs()[i - first]] = in[i];
        if (currentRun_ == 0) {
            auto h = handles_.find(n->input(i));
            handles_[callee->inputs()[i - first]] = h == handles_.end() ? Handle{} : h->second;
        }
    }
    const tj::Value* savedSelf = frameSelf_;
    std::string savedPath = framePath_;
    if (method) frameSelf_ = callee->inputs()[0];
    framePath_ = path;
    runBlock(callee->block(), calleeEnv);
    frameSelf_ = savedSelf;
    framePath_ = savedPath;
    for (size_t i = 0; i < n->outputs().size(); ++i) {
        env[n->output(i)] = calleeEnv.at(callee->outputs()[i]);
        if (currentRun_ == 0) {
            auto h = handles_.find(callee->outputs()[i]);
            handles_[n->output(i)] = h == handles_.end() ? Handle{} : h->second;
        }
    }
}

void TorchScriptImporter::unsupported(tj::Node* n) const {
    std::string outName = n->outputs().empty() ? "" : "%" + n->output(0)->debugName() + ", ";
    std::string mod = modulePath(n);
    throw ImportError("unsupported operator '" + std::string(n->kind().toQualString()) + "' (node " + outName +
                      "module '" + (mod.empty() ? "<top>" : mod) + "')");
}

int TorchScriptImporter::addOp(const std::string& type, std::vector<int> inputs, int numOutputs, tj::Node* n,
                               int step, std::map<std::string, Attribute> attrs, int firstSlot) {
    Operation op;
    op.type = type;
    op.modulePath = modulePath(n);
    std::string base = op.modulePath + "/" + type;
    int count = opNameCount_[base]++;
    op.name = count == 0 ? base : base + "_" + std::to_string(count);
    op.inputs = std::move(inputs);
    op.attrs = std::move(attrs);
    for (int i = 0; i < numOutputs; ++i) {
        Value v;
        v.name = op.name + (numOutputs == 1 ? ":out" : ":out" + std::to_string(i));
        op.outputs.push_back(g_.addValue(v));
        origin_.push_back({step, firstSlot + i});
    }
    return g_.addOperation(std::move(op));
}

int TorchScriptImporter::constInts(const std::string& opName, const std::string& what, const std::vector<int64_t>& data,
                                   bool scalar) {
    Value v;
    v.name = opName + "/" + what + "_" + std::to_string(g_.values.size());
    v.kind = ValueKind::Constant;
    v.dtype = DType::Int64;
    if (!scalar) v.shape = {Dim(static_cast<int64_t>(data.size()))};
    v.intData = std::vector<Dim>(data.begin(), data.end());
    origin_.push_back({});
    return g_.addValue(v);
}

int TorchScriptImporter::constFloat(const std::string& opName, const std::string& what, double x) {
    Value v;
    v.name = opName + "/" + what + "_" + std::to_string(g_.values.size());
    v.kind = ValueKind::Constant;
    v.floatData = std::vector<double>{x};
    origin_.push_back({});
    return g_.addValue(v);
}

// A parameter, buffer or constant tensor (known by its TensorImpl so tied weights stay one value).
int TorchScriptImporter::constantTensor(const at::Tensor& t, const std::string& fallbackName) {
    const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
    // Only named tensors are cached by address: temporaries' addresses are reused.
    if (auto it = tensorValue_.find(impl); it != tensorValue_.end()) return it->second;
    Value v;
    v.kind = ValueKind::Constant;
    v.name = fallbackName + "_" + std::to_string(g_.values.size());
    if (auto it = named_.find(impl); it != named_.end()) {
        v.name = it->second.first;
        v.kind = it->second.second;
    }
    v.dtype = dtypeOf(t.scalar_type());
    for (int64_t d : t.sizes()) v.shape.push_back(Dim(d));
    if (v.kind == ValueKind::Constant && t.numel() <= limits::kMaxKnownValueElements) {
        at::Tensor flat = t.detach().contiguous().reshape({-1});
        if (at::isIntegralType(t.scalar_type(), true)) {
            std::vector<Dim> data;
            for (int64_t i = 0; i < flat.numel(); ++i) data.push_back(Dim(flat[i].item<int64_t>()));
            v.intData = data;
        } else if (at::isFloatingType(t.scalar_type())) {
            std::vector<double> data;
            for (int64_t i = 0; i < flat.numel(); ++i) data.push_back(flat[i].item<double>());
            v.floatData = data;
        }
    }
    origin_.push_back({});
    int idx = g_.addValue(v);
    if (v.kind != ValueKind::Constant) tensorValue_[impl] = idx;
    return idx;
}

// The canonical value of tensor input i (a scalar becomes a constant).
int TorchScriptImporter::tensorInput(tj::Node* n, size_t i, const IValue& v) {
    if (auto it = handles_.find(n->input(i)); it != handles_.end() && it->second.value >= 0) return it->second.value;
    if (v.isTensor()) {
        int idx = constantTensor(v.toTensor(), std::string(n->kind().toUnqualString()) + "/const");
        handles_[n->input(i)] = Handle{idx, {}};
        return idx;
    }
    if (v.isDouble() || v.isInt() || v.isBool()) return constFloat(std::string(n->kind().toUnqualString()), "scalar", v.toScalar().toDouble());
    return -1;
}

int TorchScriptImporter::constShaped(const std::string& opName, const std::string& what, DType dtype, Shape shape) {
    Value v;
    v.name = opName + "/" + what + "_" + std::to_string(g_.values.size());
    v.kind = ValueKind::Constant;
    v.dtype = dtype;
    v.shape = std::move(shape);
    origin_.push_back({});
    return g_.addValue(v);
}

// ---------------------------------------------------------------------------------------------

void TorchScriptImporter::finishShapes() {
    for (size_t vi = 0; vi < g_.values.size(); ++vi) {
        const ShapeOrigin& o = origin_[vi];
        if (o.step < 0) continue;
        std::vector<std::vector<int64_t>> perRun;
        for (const auto& run : measured_) perRun.push_back(run.at(o.step).at(o.slot));
        for (const auto& s : perRun)
            if (s.size() != perRun[0].size())
                throw ImportError("the rank of '" + g_.values[vi].name + "' changes with the batch size");
        Shape shape;
        for (size_t d = 0; d < perRun[0].size(); ++d) {
            std::vector<int64_t> samples;
            for (const auto& s : perRun) samples.push_back(s[d]);
            shape.push_back(fitDim(samples, runs_).value_or(Dim(samples[0])));
        }
        g_.values[vi].shape = std::move(shape);
    }
    for (auto [constant, activation] : shapeConstants_)
        g_.values[constant].intData = g_.values[activation].shape;
    for (const FollowedConstant& c : followedConstants_) {
        std::vector<int64_t> samples;
        for (const auto& run : measured_) samples.push_back(run.at(c.step).at(c.slot).at(c.index));
        g_.values[c.value].intData = std::vector<Dim>{fitDim(samples, runs_).value_or(Dim(samples[0]))};
    }
}

Graph TorchScriptImporter::run() {
    load();
    collectNamedTensors();
    g_.name = std::filesystem::path(path_).stem().string();
    g_.source = path_;
    g_.format = "torchscript";
    planInputs();
    c10::NoGradGuard noGrad;
    at::manual_seed(0);
    for (size_t r = 0; r < runs_.size(); ++r) {
        std::vector<IValue> inputs;
        for (const InputPlan& plan : plans_) {
            std::vector<int64_t> sizes = evalShape(plan.shape, runs_[r].batch, runs_[r].seq);
            if (plan.tokens) inputs.emplace_back(at::randint(0, plan.vocab, sizes, at::kLong));
            else inputs.emplace_back(at::randn(sizes));
        }
        execute(static_cast<int>(r), inputs);
    }
    finishShapes();
    if (g_.ops.empty()) throw ImportError("the model has no tensor operations");
    return std::move(g_);
}

}  // namespace torchscript_import

bool torchScriptSupported() { return true; }

Graph importTorchScript(const std::string& path, const std::map<std::string, std::string>& params) {
    using torchscript_import::firstLine;
    using torchscript_import::ImportError;
    try {
        return torchscript_import::TorchScriptImporter(path, params).run();
    } catch (const ModelError&) {
        throw;
    } catch (const ImportError& e) {
        throw ModelError(path, e.what());
    } catch (const ShapeError& e) {
        throw ModelError(path, e.what());
    } catch (const c10::Error& e) {
        throw ModelError(path, firstLine(e.what_without_backtrace()));
    } catch (const std::exception& e) {
        throw ModelError(path, firstLine(e.what()));
    }
}

}  // namespace ts
