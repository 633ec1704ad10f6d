#pragma once
// The one model graph every input format becomes.
//
// Operations follow ONNX operator semantics (type names and attributes as in the
// ONNX operator specification, e.g. "Conv", "Gemm", "LayerNormalization") so
// that one shape inference and one cost model serve every importer. A few
// operators ONNX lacks in opset 17 are added with the same conventions
// ("Gelu", "Embedding"; see ops.h).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "trainscope/core/dim.h"
#include "trainscope/core/dtype.h"

namespace ts {

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>>;

enum class ValueKind : uint8_t {
    Activation,  // produced by an operation
    Input,       // a model input (data, token ids, masks)
    Parameter,   // trainable weight: counted in parameters, gets a gradient
    Buffer,      // non-trainable state (BatchNorm running statistics)
    Constant,    // constant tensor baked into the graph (shape vectors, scalars)
};

struct Value {
    std::string name;
    DType dtype = DType::Float32;
    Shape shape;
    ValueKind kind = ValueKind::Activation;
    int producer = -1;  // index of the producing operation, -1 for inputs, parameters, constants
    // Known contents of small integer tensors (shape computations: Shape -> Gather -> Concat -> Reshape),
    // row-major, possibly symbolic. Absent when unknown or too large to track.
    std::optional<std::vector<Dim>> intData;
    // Known contents of small floating tensors (scalars such as a Pow exponent).
    std::optional<std::vector<double>> floatData;
    // Fine-tuning (fine_tuning.h): a parameter that needs no gradient (a frozen base weight), and
    // one stored in 4-bit NF4 and dequantised at each use (QLoRA).
    bool frozen = false;
    bool nf4 = false;
    // An adapter the set-up added (LoRA's A and B), and whether it stays fp32 whatever dtype the model
    // is loaded in (PEFT's default since 0.11, autocast_adapter_dtype) or takes the model's.
    bool adapter = false;
    bool keptInFp32 = false;
    // Trained as PEFT's modules_to_save trains it: a copy, beside the frozen original it keeps.
    bool besideFrozenOriginal = false;
};

struct Operation {
    std::string type;        // ONNX operator type, e.g. "Conv"
    std::string name;        // unique within the graph, e.g. "layer1.0.conv1/Conv"
    std::string modulePath;  // PyTorch module path, e.g. "layer1.0.conv1"; "" for top level
    std::vector<int> inputs;   // value indices; -1 for an omitted optional input
    std::vector<int> outputs;  // value indices
    std::map<std::string, Attribute> attrs;

    // Attribute access with defaults; throw ShapeError on a type mismatch.
    int64_t attrInt(const std::string& key, int64_t def) const;
    double attrFloat(const std::string& key, double def) const;
    std::string attrString(const std::string& key, const std::string& def) const;
    std::vector<int64_t> attrInts(const std::string& key, const std::vector<int64_t>& def = {}) const;
    bool hasAttr(const std::string& key) const { return attrs.count(key) != 0; }
};

// Values of the symbols at which a model is shown by default (the user's ?seq=, --batch).
struct SymbolDefaults {
    int64_t batch = 1;
    int64_t seq = 0;  // 0: the model has no sequence dimension
};

class Graph {
public:
    std::string name;    // "resnet50", file stem for imported files
    std::string source;  // "zoo:resnet50", a path
    std::string format;  // "zoo", "onnx", "torchscript", "json"
    SymbolDefaults defaults;
    // What the source could not give exactly, in sentences for the user (an importer's caveats:
    // "the file holds only 16 of the rows of parameter 'transformer.wpe.weight' ...").
    std::vector<std::string> notes;
    // One GPU's shard of a model split by tensor or expert parallelism (a Hugging Face config built with
    // tensor_parallel or expert_parallel): the GPUs of each group and the whole model's parameters; 1, 1
    // and 0 otherwise.
    struct ParallelShard {
        int group = 1;        // tensor-parallel
        int expertGroup = 1;  // expert-parallel: each GPU holds 1/expertGroup of the routed experts
        int64_t wholeParameters = 0, wholeActiveParameters = 0;
    } shard;

    std::vector<Value> values;
    std::vector<Operation> ops;  // topologically ordered
    std::vector<int> inputs;     // model inputs (ValueKind::Input)
    std::vector<int> outputs;

    int addValue(Value v);
    // Appends an operation, sets producer of its outputs. Does not infer shapes.
    int addOperation(Operation op);
    // Index of the value with this name, or -1.
    int findValue(const std::string& name) const;

    // For every value, the operation that owns it if it is a parameter: its first user, so that
    // tied weights are counted once; -1 for other values and unused parameters.
    std::vector<int> parameterOwners() const;
    int64_t parameterCount() const;  // elements of all Parameter values that some operation uses
    // The whole model's: shard.wholeParameters for a shard, else parameterCount().
    int64_t modelParameterCount() const { return shard.wholeParameters > 0 ? shard.wholeParameters : parameterCount(); }
    // The parameters one token's forward uses: parameterCount() with each mixture-of-experts layer's routed
    // experts counted at top_k of their number (what MoE model cards call active parameters, embeddings
    // included: Qwen3-30B-A3B's 3.3 billion). parameterCount() itself for a dense model.
    int64_t activeParameterCount() const;
    int64_t modelActiveParameterCount() const {
        return shard.wholeActiveParameters > 0 ? shard.wholeActiveParameters : activeParameterCount();
    }

    // Throws std::logic_error when an invariant is broken (dangling index, op using a value
    // produced later, duplicate value names). Used by tests and after import.
    void validate() const;

private:
    std::map<std::string, int> valueIndex_;
};

}  // namespace ts
