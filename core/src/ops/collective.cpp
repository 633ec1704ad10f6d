// Collectives inside one training step's graph: the all-reduces of tensor parallelism, as
// Megatron-LM's conjugate operators (Shoeybi et al. 2019, "Megatron-LM", section 3) and PyTorch's
// ColwiseParallel / RowwiseParallel place them. A graph holding them is one GPU's shard.
//
// AllReduce: one input, its output of the same type and shape. Attributes: group_size (the GPUs
// that reduce, 2 to kMaxGroup), pass ("forward": Megatron's g, the partial sums of a row-parallel
// layer summed, identity backward; "backward": its f, identity forward, the input's gradient
// summed before a column-parallel layer). The traffic over the link is timed by the predictor
// (predictors/.../operation_times.h); here an all-reduce moves its tensor through memory once,
// in the pass that reduces, and saves nothing.
// sequence_parallel (0 or 1): Megatron-LM's sequence parallelism (Korthikanti et al. 2022), where the
// tensors between the groups' layers are split along the sequence: f all-gathers forward and
// reduce-scatters backward, g reduce-scatters forward and all-gathers backward (each half an
// all-reduce of the whole tensor); both passes move the tensor. The graph keeps whole-sequence
// shapes; the split ops carry sequence_shards (ops/registry.cpp).
//
// AllToAll: expert parallelism's exchange around a sparse layer's experts (GShard, Lepikhin et al. 2020;
// torchtitan's and Megatron-LM's token dispatchers). One input [..., H], its output of the same type and
// shape: the graph follows the tokens, while the wire carries each token's `copies` (top_k) routed
// copies, (group_size - 1) / group_size of them to other GPUs. Its backward is the reverse exchange of
// the gradients, so both passes move them. Attributes: group_size (2 to kMaxGroup), copies (>= 1).
#include "ops/registry.h"

namespace ts::ops {
namespace {

constexpr int64_t kMaxGroup = 1024;

bool reducesForward(const Operation& op) {
    return op.attrString("pass", "forward") == "forward";
}

// One floating-point input over a group of 2 to kMaxGroup GPUs: the output has its type and shape.
void inferCollective(InferCtx& c, const std::string& type, const char* verb) {
    c.expectInputs(1, 1);
    const int64_t group = c.op().attrInt("group_size", 0);
    if (group < 2 || group > kMaxGroup)
        throw ShapeError(type + " group_size must be from 2 to " + std::to_string(kMaxGroup) + ", got " +
                         std::to_string(group));
    const Value& x = c.in(0);
    if (!isFloating(x.dtype))
        throw ShapeError(type + " " + verb + " floating-point tensors, got " + std::string(dtypeName(x.dtype)));
    c.setOutput(0, x.dtype, x.shape);
}

void inferAllReduce(InferCtx& c) {
    const std::string pass = c.op().attrString("pass", "forward");
    if (pass != "forward" && pass != "backward")
        throw ShapeError("AllReduce pass must be \"forward\" or \"backward\", got \"" + pass + "\"");
    inferCollective(c, "AllReduce", "sums");
}

OpCost costAllReduce(const CostCtx& c) {
    OpCost cost;
    if (reducesForward(c.op()) || c.op().attrInt("sequence_parallel", 0) != 0) {
        cost.bytesRead = c.inBytes(0);
        cost.bytesWritten = c.outBytes(0);
    }
    return cost;
}

void inferAllToAll(InferCtx& c) {
    const int64_t copies = c.op().attrInt("copies", 1);
    if (copies < 1 || copies > kMaxGroup * 64)
        throw ShapeError("AllToAll copies must be from 1 to " + std::to_string(kMaxGroup * 64) + ", got " +
                         std::to_string(copies));
    inferCollective(c, "AllToAll", "exchanges");
}

// Each pass packs the routed copies into the send buffer and reads them out of the receive buffer.
OpCost costAllToAll(const CostCtx& c) {
    OpCost cost;
    const double copies = double(c.op().attrInt("copies", 1));
    cost.bytesRead = copies * c.inBytes(0);
    cost.bytesWritten = copies * c.outBytes(0);
    return cost;
}

}  // namespace

void registerCollectiveOps(std::vector<OpDef>& t) {
    t.push_back({"AllReduce", inferAllReduce, costAllReduce});
    t.push_back({"AllToAll", inferAllToAll, costAllToAll});
}

}  // namespace ts::ops
