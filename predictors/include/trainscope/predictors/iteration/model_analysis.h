#pragma once
// Everything about a model that training predictions need and that does not depend on the GPU:
// per-operation FLOPs and bytes as closed forms of the batch size (costs evaluated at three batch
// sizes once), the element size of every tensor under each precision (autocast's rules), the
// tensors autograd keeps, parameters, checkpoint segments. Built once per model and sequence
// length; every prediction afterwards is arithmetic on these numbers.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trainscope/core/graph.h"
#include "trainscope/predictors/iteration/training_scenario.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"

namespace ts::predictors {

// c0 + c1 n + c2 n^2 of the batch size n: exact for costs whose dimensions are at most quadratic
// in N (every operator of a usual model is linear in N at a fixed sequence length).
struct BatchPoly {
    double c0 = 0, c1 = 0, c2 = 0;
    double at(double n) const { return c0 + n * (c1 + n * c2); }
    BatchPoly& operator+=(const BatchPoly& o);
    BatchPoly operator+(const BatchPoly& o) const;
    BatchPoly operator*(double k) const;
    bool isZero() const { return c0 == 0 && c1 == 0 && c2 == 0; }
    // The quadratic through (1, y1), (2, y2), (3, y3).
    static BatchPoly through(double y1, double y2, double y3);
};

enum class OpKind : uint8_t {
    None,        // moves and computes nothing (views, shape arithmetic): no time
    Memory,      // bandwidth-bound
    Gemm,        // matrix multiply on tensor cores when the precision allows
    Conv,        // convolution (implicit GEMM)
    Recurrent,   // LSTM/GRU/RNN: GEMMs per time step
    Attention,   // scaled_dot_product_attention: two GEMMs per key/query tile and a softmax between
    Collective,  // an all-reduce over the GPUs of a tensor-parallel group (AllReduce) or expert parallelism's
                 // all-to-all (AllToAll), timed over the link
};

// The kernels behind a scaled_dot_product_attention (PyTorch's SDPA backends).
enum class AttentionBackend : uint8_t {
    Math,       // PyTorch's reference: batched GEMMs and softmax as separate kernels through memory
    Flash,      // FlashAttention-2: one fused kernel, scores stay on chip
    Efficient,  // memory-efficient (xFormers/CUTLASS): one fused kernel, scores stay on chip
};

// How autocast treats an operator (PyTorch's CUDA autocast op lists).
enum class AutocastRule : uint8_t { Follow, Lower, Fp32 };
AutocastRule autocastRuleOf(const std::string& onnxType);

// The kernel-scaling class an operator is timed as ("linear", "bmm", "conv", "ln", "softmax", "add",
// "mul", "gelu", "relu", "tanh"), or "" when none describes it.
std::string scalingClassOf(const Graph& g, const Operation& op);

// Bytes of one operation under one precision.
struct OpBytes {
    BatchPoly read;             // forward DRAM traffic: inputs as the kernel reads them
    BatchPoly write;            // outputs at their element size
    BatchPoly readActivations;  // the part of `read` that is not parameters, buffers or constants
    BatchPoly castForward;      // autocast's cast kernels feeding this op (read + write)
    BatchPoly castBackward;     // their backward: gradients cast back
    BatchPoly saved;            // what this op keeps for backward (before de-duplication)
    // Backward traffic autograd adds beside the op's own formula (the stream model's rows):
    BatchPoly gradientReduction;     // Add: the output gradient read to sum it to a broadcast input's shape
    BatchPoly gradientAccumulation;  // outputs used by several ops needing gradients: their sums (2 reads, 1 write)
    BatchPoly message;               // collectives: the tensor summed over the group (output, or its gradient)
    BatchPoly backwardScratch;       // what its backward allocates beside the input gradients (OpCost::backwardScratch)
};

struct AnalyzedOp {
    int op = -1;
    std::string name;
    std::string type;
    OpKind kind = OpKind::None;
    std::string opClass;    // scaling class; "" when the table has no class for it
    bool backward = false;  // an input needs a gradient: the op has a backward pass
    BatchPoly forwardFlops;
    BatchPoly backwardFlops;
    int backwardKernels = 1;  // GEMM/conv: data and weight gradient are two kernels
    double steps = 0;         // recurrent: time steps (one launch each)
    // GEMM and convolution (as an implicit GEMM): the reduction length of one output element and
    // the output columns of one group (channels / groups; a GEMM's last output dimension). They
    // set the size of one wave of output tiles; 0 for other kinds.
    double gemmReduction = 0;
    double gemmColumns = 0;
    bool groupedConv = false;  // a convolution of more than one group (grouped, depthwise)
    // Collectives: the GPUs of the group, and whether backward sums the gradient (Megatron-LM's f)
    // rather than forward the output (its g).
    int collectiveGroup = 0;
    bool reducesInBackward = false;
    // Expert parallelism's all-to-all (AllToAll): both passes move `message`, each token's routed copies.
    bool allToAll = false;
    double collectiveCopies = 1;
    // Sequence parallelism: the collective is an all-gather one way and a reduce-scatter the other,
    // in both passes (each half an all-reduce of `message`).
    bool sequenceParallel = false;
    // A dense 3x3 convolution of stride 1 (no dilation): cuDNN runs it with Winograd's transform in
    // FP32 on CUDA cores, with fewer multiplications than its FLOPs.
    bool winogradEligible = false;
    // PyTorch's instance normalisation views its input as one sample of N x C channels, which a
    // channels-last tensor cannot be: it normalises a contiguous copy and returns a channels-first
    // output (pytorch/pytorch#59168). False where the op keeps the layout ("keeps_layout": 1, apex's
    // InstanceNorm3dNVFuser, which permutes instead).
    bool needsChannelsFirst = false;
    // Batch and instance normalisation on channels-first tensors run one thread block per plane
    // they normalise (cuDNN's bn_fw_tr_1C11 and bn_bw_1C11 kernels and PyTorch's own: a grid of one
    // block per channel in the stored A100 and V100 ResNet traces; instance norm's planes are its
    // N x C channels): planes = normPlanes + n x normPlanesPerSample. 0 for other ops.
    double normPlanes = 0;
    double normPlanesPerSample = 0;
    bool bidirectional = false;                                  // a recurrent layer run in both directions
    AttentionBackend attentionBackend = AttentionBackend::Math;  // OpKind::Attention only
    // Add's backward hands the output gradient to its inputs as it is: a kernel runs only to sum it
    // to the shape of a broadcast input that needs a gradient (a bias, a broadcast scale).
    bool gradientPassThrough = false;
    int reductionKernels = 0;     // those sums
    int accumulationKernels = 0;  // gradient sums where this op's outputs fan out (consumers - 1 each)
    int64_t parameters = 0;       // owned (first user), trainable or not
    double parameterBytes = 0;    // owned parameters that train (get gradients), at their dtype
    double expertParameterBytes = 0;  // of those, routed experts split by expert parallelism
    double frozenElements = 0;    // owned frozen parameters stored at their dtype (see frozenStoredBytes)
    double frozenBytes = 0;
    double nf4Elements = 0;         // owned frozen parameters stored in NF4 (QLoRA)
    double castWeightElements = 0;  // owned parameters autocast casts (this op is in its lower list)
    std::array<OpBytes, kElementPrecisionCount> bytes;
    bool hasWork() const { return kind != OpKind::None; }
    // One output channel per group: no reduction over channels, so no GEMM for a tensor core.
    bool depthwiseConv() const { return kind == OpKind::Conv && groupedConv && gemmColumns <= 1; }
};

// A tensor autograd keeps, counted once however many operations keep it.
struct SavedActivation {
    BatchPoly bytes;
    int freedAfter = -1;  // index of the earliest op keeping it: freed after that op's backward
    int value = -1;       // the graph value it is (-1: a tensor of the op's own, or a cast copy of an input)
};

struct PrecisionMemory {
    std::vector<SavedActivation> saved;
    BatchPoly savedTotal;
    double castWeightBytes = 0;
};

// What one activation-checkpointing policy (Checkpointing, training_scenario.h) recomputes and keeps.
// During the backward of checkpointed region k, autograd holds what is kept, the inputs of regions
// 0..k (later regions' are freed with their backward), and what region k saves again as backward
// reruns its forward.
struct CheckpointPlan {
    std::vector<char> recomputed;  // per op: backward runs its forward again
    // Ascending first ops of the stretches backward takes one at a time (recomputation, then the
    // stretch's backward in reverse); the first is 0.
    std::vector<int> spanStart;
    bool fellBack = false;  // a block policy on a model without numbered blocks: sqrt(L) segments
    std::vector<int> region;         // per op: its checkpointed region, -1 for none
    std::vector<int> regionFirstOp;  // per region: its first op (ascending)
    struct Kept {
        int op = 0;  // the first op keeping it (graph order)
        BatchPoly bytes;
    };
    struct Memory {
        std::vector<Kept> kept;               // saved outside checkpointed regions, and stored outputs
        std::vector<BatchPoly> regionInputs;  // per region: what its checkpoint holds (each tensor
                                              // once, at the first region reading it)
        std::vector<BatchPoly> regionSaved;   // per region: what it saves when rerun
        // The activations alive at the worst moment of backward (kept + the largest
        // inputs-so-far + saved).
        double peak(double n) const;
    };
    std::array<Memory, kElementPrecisionCount> memory;
};

// The parameters of one FSDP unit (a numbered block; unit 0 holds the rest, FSDP's root).
struct ParameterUnit {
    std::string name;
    double trainableElements = 0;
    double trainableBytes = 0;
    double adapterElements = 0;  // of the trainable: adapters the set-up added (Value::adapter)
    double frozenElements = 0;  // stored at their dtype, or in 16 bits under autocast
    double frozenBytes = 0;
    double nf4Elements = 0;
};

class ModelAnalysis {
public:
    // Throws ModelError naming the model when its costs cannot be computed or are not polynomial
    // of degree <= 2 in the batch size.
    ModelAnalysis(const Graph& g, int64_t seq = 0, const KernelScalingTable& table = KernelScalingTable::builtin());

    std::string modelName;
    std::string modelSource;
    int64_t seq = 0;              // the sequence length the costs were evaluated at (1 without one)
    bool sequenceModel = false;   // the model has a sequence dimension
    std::vector<AnalyzedOp> ops;  // one per graph operation, graph order
    std::array<PrecisionMemory, kElementPrecisionCount> memory;
    int64_t parameters = 0;                // all, trainable or frozen (of the graph: one GPU's shard under tensor parallelism)
    int64_t modelParameters = 0;           // the whole model's (Graph::modelParameterCount)
    int64_t modelActiveParameters = 0;     // of those, what one token's forward uses (routed experts at top-k)
    int64_t trainableParameters = 0;       // those that get gradients and optimizer state
    int64_t smallTrainableParameters = 0;  // in tensors of fewer than 4096 elements
    int64_t adapterParameters = 0;         // of the trainable: adapters the set-up added (Value::adapter)
    double parameterBytes = 0;             // trainable parameters at their dtype
    double expertParameterBytes = 0;       // of those, routed experts split by expert parallelism
    double bufferBytes = 0;
    int64_t parameterTensors = 0;      // trainable tensors
    double largestParameterBytes = 0;  // the largest trainable tensor at its dtype
    std::vector<ParameterUnit> units;  // [0]: the root unit (parameters outside numbered blocks)
    // Per unit, the part of it that is routed experts split by expert parallelism (also counted in
    // `units`): their data-parallel group is the others' GPUs / expertParallel. Empty without.
    std::vector<ParameterUnit> expertUnits;
    // expertUnits[u], or an empty unit (no experts split, or none in unit u).
    const ParameterUnit& expertPartOf(size_t u) const {
        static const ParameterUnit kNone;
        return u < expertUnits.size() ? expertUnits[u] : kNone;
    }

    // Bytes of the frozen parameters of `u` as stored under p: NF4, or 16 bits under autocast
    // (fine-tuning loads a frozen base in the compute dtype: no fp32 copy, no autocast cast), or
    // their dtype.
    static double frozenStoredBytes(const ParameterUnit& u, TrainingPrecision p);
    double frozenStoredBytes(TrainingPrecision p) const;
    // Bytes of one copy (weights, gradients or a state) of `elements` trainable elements kept in
    // bf16 without master weights: bf16 but for the `adapters` among them, which PEFT keeps in fp32.
    static double bf16CopyBytes(double elements, double adapters) {
        return 2 * (elements - adapters) + 4 * adapters;
    }
    BatchPoly inputBytes;
    std::vector<int> segmentStart;  // first op index of each sqrt(L) checkpoint segment
    int workingOps = 0;
    int blocks = 0;  // numbered blocks (the block policies' regions)
    // The GPUs of a tensor-parallel group when the graph is one GPU's shard (its AllReduce ops'
    // group size); 1 otherwise.
    int tensorParallel = 1;
    bool sequenceParallel = false;  // its collectives are sequence parallelism's (AnalyzedOp::sequenceParallel)
    // The GPUs of an expert-parallel group when each holds a share of the routed experts (its AllToAll
    // ops' group size); 1 otherwise.
    int expertParallel = 1;
    std::array<CheckpointPlan, kCheckpointingCount> checkpointPlans;  // [None] recomputes nothing

    const CheckpointPlan& plan(Checkpointing c) const { return checkpointPlans[size_t(c)]; }
    const CheckpointPlan::Memory& planMemory(Checkpointing c, TrainingPrecision p) const {
        return plan(c).memory[size_t(elementIndexOf(p))];
    }

    const OpBytes& bytes(const AnalyzedOp& op, TrainingPrecision p) const { return op.bytes[elementIndexOf(p)]; }
    const PrecisionMemory& memoryFor(TrainingPrecision p) const { return memory[elementIndexOf(p)]; }

private:
    void buildCheckpointPlans(const Graph& g, const std::vector<int>& opUnit,
                              const std::vector<std::array<double, 3>>& numel,
                              const std::array<std::vector<int>, kElementPrecisionCount>& es);
};

}  // namespace ts::predictors
