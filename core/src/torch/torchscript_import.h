#pragma once
// What the TorchScript importer's two translation units share (both include LibTorch): the importer
// class, which interprets a TorchScript graph and builds the canonical graph
// (torchscript_importer.cpp), and its translation of each executed ATen operation
// (torchscript_emit.cpp).
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts::torchscript_import {

namespace tj = torch::jit;
using c10::IValue;

// A problem found while importing; importTorchScript adds the file name.
struct ImportError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

DType dtypeOf(at::ScalarType t);
int onnxDtypeCode(DType t);
// Integer arguments that may follow the batch or the sequence length (torchscript_importer.cpp).
std::vector<int64_t> followedInts(const tj::Node* n, const std::vector<IValue>& in);

struct RunPoint {
    int64_t batch, seq;
};

// What a TorchScript value stands for in the canonical graph: a tensor value, or a container of them.
struct Handle {
    int value = -1;
    std::vector<Handle> items;
    bool empty() const { return value < 0 && items.empty(); }
};

// Where a canonical activation's shape comes from once all runs are measured.
struct ShapeOrigin {
    int step = -1;  // executed tensor operation (-1: shape fixed at creation)
    int slot = 0;   // its flattened tensor output
};

struct InputPlan {
    std::string name;
    bool tokens = false;  // int64 ids [N, S]
    int64_t vocab = 2;    // ids drawn from [0, vocab)
    Shape shape;          // symbolic
};

class TorchScriptImporter {
public:
    TorchScriptImporter(std::string path, const std::map<std::string, std::string>& params)
        : path_(std::move(path)), params_(params) {}

    Graph run();

private:
    // ---- setup ----
    void load();
    void checkPickles();
    void collectNamedTensors();
    void planInputs();
    std::optional<IValue> resolveAttr(const tj::Value* v) const;
    // ---- interpretation ----
    void execute(int run, const std::vector<IValue>& inputs);
    void runBlock(tj::Block* block, std::unordered_map<const tj::Value*, IValue>& env);
    void runNode(tj::Node* n, std::unordered_map<const tj::Value*, IValue>& env);
    void runCall(tj::Node* n, const std::vector<IValue>& in, std::unordered_map<const tj::Value*, IValue>& env);
    // ---- canonical graph ----
    void emit(tj::Node* n, const std::vector<IValue>& in, const std::vector<IValue>& out, int step);
    int tensorInput(tj::Node* n, size_t i, const IValue& v);
    int constInts(const std::string& opName, const std::string& what, const std::vector<int64_t>& data,
                  bool scalar = false);
    int constShaped(const std::string& opName, const std::string& what, DType dtype, Shape shape);
    int constFloat(const std::string& opName, const std::string& what, double x);
    int constantTensor(const at::Tensor& t, const std::string& name);
    int addOp(const std::string& type, std::vector<int> inputs, int numOutputs, tj::Node* n, int step,
              std::map<std::string, Attribute> attrs = {}, int firstSlot = 0);
    std::string modulePath(tj::Node* n) const;
    void finishShapes();
    [[noreturn]] void unsupported(tj::Node* n) const;

    std::string path_;
    std::map<std::string, std::string> params_;
    tj::Module module_;
    std::shared_ptr<tj::Graph> jit_;        // forward, as saved: calls into submodules' methods
    std::shared_ptr<tj::Graph> inlined_;    // forward with every call inlined (to find first layers)
    const tj::Value* frameSelf_ = nullptr;  // `self` of the method being interpreted
    std::string framePath_;                 // its module path
    std::vector<InputPlan> plans_;
    std::vector<RunPoint> runs_;
    std::unordered_map<const c10::TensorImpl*, std::pair<std::string, ValueKind>> named_;
    std::unordered_map<const c10::TensorImpl*, int> tensorValue_;  // params/buffers already in the graph
    std::unordered_map<const tj::Node*, tj::Operation> operations_;

    int currentRun_ = 0;
    int step_ = 0;
    std::vector<const tj::Node*> stepNodes_;                                // run 0's executed tensor ops
    std::vector<std::vector<std::vector<std::vector<int64_t>>>> measured_;  // [run][step][slot] = sizes
    std::unordered_map<const tj::Value*, Handle> handles_;
    std::map<std::string, int> opNameCount_;
    std::vector<ShapeOrigin> origin_;                  // per canonical value
    std::vector<std::pair<int, int>> shapeConstants_;  // (int constant, activation whose shape it holds)
    struct FollowedConstant {                          // an int constant fitted from an argument recorded at every run
        int value, step, slot, index;
    };
    std::vector<FollowedConstant> followedConstants_;
    Graph g_;
};

}  // namespace ts::torchscript_import
