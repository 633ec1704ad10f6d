#pragma once
// Internal: the operator table and helpers shared by the operator-family files.
// Each family file defines one register*Ops function listed in registry.cpp.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "trainscope/core/errors.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/ops.h"

namespace ts::ops {

// What an inference function sees: the operation, its inputs, and its outputs to fill.
struct InferCtx {
    Graph& g;
    int opIndex;

    const Operation& op() const { return g.ops[opIndex]; }
    size_t numInputs() const { return g.ops[opIndex].inputs.size(); }
    size_t numOutputs() const { return g.ops[opIndex].outputs.size(); }
    bool hasInput(size_t i) const { return i < numInputs() && g.ops[opIndex].inputs[i] >= 0; }
    // Throws ShapeError("missing input i") when absent.
    const Value& in(size_t i) const;
    Value& out(size_t i);
    // Sets output i's dtype and shape (and clears known data); checks rank and dimension limits.
    void setOutput(size_t i, DType dtype, Shape shape);
    // Requires at least `min` and at most `max` inputs (max < 0: unbounded).
    void expectInputs(size_t min, int max = -1) const;
};

struct CostCtx {
    const Graph& g;
    int opIndex;
    int64_t n, s;
    const std::vector<bool>& grad;

    const Operation& op() const { return g.ops[opIndex]; }
    bool hasInput(size_t i) const { return i < op().inputs.size() && op().inputs[i] >= 0; }
    int inputValue(size_t i) const { return op().inputs[i]; }
    int outputValue(size_t i) const { return op().outputs[i]; }
    std::vector<int64_t> inShape(size_t i) const;
    std::vector<int64_t> outShape(size_t i) const;
    double inNumel(size_t i) const;   // 0 for an omitted input
    double outNumel(size_t i) const;
    double inBytes(size_t i) const;
    double outBytes(size_t i) const;
    bool inNeedsGrad(size_t i) const;   // false for omitted inputs
    bool anyInputNeedsGrad() const;
    bool inIsParameter(size_t i) const;
    // Sums bytes of all present inputs / outputs.
    double allInputBytes() const;
    double allOutputBytes() const;
};

using InferFn = void (*)(InferCtx&);
using CostFn = OpCost (*)(const CostCtx&);

struct OpDef {
    std::string type;
    InferFn infer;
    CostFn cost;
};

// ---- helpers ----
// Numpy-style broadcasting; throws ShapeError when incompatible.
Shape broadcastShapes(const Shape& a, const Shape& b);
// Normalizes a possibly negative axis for a rank; throws ShapeError when out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank);
// Reads an int-list from an input's known data (e.g. Reshape's shape); throws ShapeError if unknown.
std::vector<Dim> knownInts(const InferCtx& c, size_t input, const char* what);
// Constant int list from known data (throws if symbolic).
std::vector<int64_t> knownConstInts(const InferCtx& c, size_t input, const char* what);

// The shape's values when no dimension is symbolic.
std::optional<std::vector<int64_t>> constantShape(const Shape& s);
// Number of elements when constant and small enough to track contents; -1 otherwise.
int64_t trackableCount(const Shape& s);

// Saves value `v` into cost.saved as the storage autograd keeps for it: nothing for a parameter or a view of
// one, the viewed tensor for a view PyTorch takes without copying (saved_tensors.cpp).
void saveValue(const CostCtx& c, OpCost& cost, int value);
void saveInput(const CostCtx& c, OpCost& cost, size_t i);
void saveOutput(const CostCtx& c, OpCost& cost, size_t i);
// Cost of an elementwise op: flopsPerElement on the largest output, traffic of all tensors.
// Backward costs `backwardFlopsPerElement` per output element when any input needs a gradient.
OpCost elementwiseCost(const CostCtx& c, double flopsPerElement, double backwardFlopsPerElement);
// No arithmetic (views, shape math): zero FLOPs, zero traffic when `isView`.
OpCost zeroCost(const CostCtx& c);

// ---- families (each in its own file) ----
void registerConvPoolOps(std::vector<OpDef>& t);       // conv_pool.cpp
void registerMatMulOps(std::vector<OpDef>& t);         // matmul.cpp
void registerNormalizationOps(std::vector<OpDef>& t);  // normalization.cpp
void registerActivationOps(std::vector<OpDef>& t);     // activation.cpp (unary math too)
void registerElementwiseOps(std::vector<OpDef>& t);    // elementwise.cpp (binary, known-int arithmetic)
void registerReductionOps(std::vector<OpDef>& t);      // reduction.cpp
void registerRecurrentOps(std::vector<OpDef>& t);      // recurrent.cpp
void registerShapeOps(std::vector<OpDef>& t);          // shape.cpp (Reshape, Shape, Concat, ...)
void registerIndexingOps(std::vector<OpDef>& t);       // indexing.cpp (Gather, Slice, ...)
void registerMiscOps(std::vector<OpDef>& t);           // misc.cpp (Constant, Cast, Dropout, ...)
void registerTransformerOps(std::vector<OpDef>& t);    // transformer.cpp (RMSNorm, rotary, attention)
void registerCollectiveOps(std::vector<OpDef>& t);     // collective.cpp (tensor parallelism's all-reduces)

const OpDef* findOpDef(const std::string& type);
const std::unordered_map<std::string, OpDef>& opTable();

}  // namespace ts::ops
