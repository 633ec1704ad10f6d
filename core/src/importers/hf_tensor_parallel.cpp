// Tensor parallelism of the Hugging Face builders (hf_decoders.cpp): the shard's sizes, the group's
// all-reduces placed as Megatron-LM places them, and sequence parallelism's split ops; and expert
// parallelism's all-to-alls. See docs/prediction.md, "Tensor parallelism" and "Expert parallelism".
#include <string>
#include <vector>

#include "importers/hf_config.h"
#include "trainscope/core/builder.h"

namespace ts::hf {

namespace {

int tensorParallelAllReduce(ModelBuilder& b, const Config& c, int x, const char* pass, const std::string& module) {
    if (c.tensorParallel <= 1) return x;
    return b.op1("AllReduce", {x},
                 {{"group_size", c.tensorParallel},
                  {"pass", std::string(pass)},
                  {"sequence_parallel", int64_t{c.sequenceParallel ? 1 : 0}}},
                 module);
}

}  // namespace

int reduceGradient(ModelBuilder& b, const Config& c, int x, const std::string& module) {
    return tensorParallelAllReduce(b, c, x, "backward", module);
}
int reduceOutput(ModelBuilder& b, const Config& c, int x, const std::string& module) {
    return tensorParallelAllReduce(b, c, x, "forward", module);
}

namespace {

int expertAllToAll(ModelBuilder& b, const Config& c, int x, const char* direction) {
    if (c.expertParallel <= 1) return x;
    return b.op1("AllToAll", {x}, {{"group_size", c.expertParallel}, {"copies", c.topK}}, direction);
}

}  // namespace

int expertDispatch(ModelBuilder& b, const Config& c, int x) {
    return expertAllToAll(b, c, x, "dispatch");
}
int expertCombine(ModelBuilder& b, const Config& c, int x) {
    return expertAllToAll(b, c, x, "combine");
}

// One GPU's shard under tensor parallelism: whole heads and key-value groups, a slice of each MLP
// and expert width and of the vocabulary (ceil: PyTorch shards an uneven vocabulary, the last GPU's
// slice smaller); the hidden size, norms and positions are replicated.
Config tensorParallelShard(const Config& full) {
    Config c = full;
    if (full.expertParallel > 1)
        c.architecture += ", one GPU's share of the experts of " + std::to_string(full.expertParallel);
    const int64_t t = full.tensorParallel;
    if (t <= 1) return c;
    c.heads /= t;
    c.kvHeads /= t;
    c.intermediate /= t;
    c.expertInner /= t;
    c.sharedExpertInner /= t;
    c.vocab = (full.vocab + t - 1) / t;
    c.architecture += ", one GPU's shard of " + std::to_string(t);
    return c;
}

// Sequence parallelism: every op downstream of a g (the reduce-scatter after a row-parallel layer or
// the embedding) and upstream of an f (the all-gather before a column-parallel layer) runs on the
// group's 1/T of the tokens: marked with sequence_shards, which divides its costs.
void markSequenceShards(Graph& g, int64_t shards) {
    std::vector<char> split(g.values.size(), 0);
    for (Operation& op : g.ops) {
        bool in = false;
        for (int v : op.inputs) in |= v >= 0 && split[size_t(v)];
        if (op.type == "AllReduce") {
            const bool scatters = op.attrString("pass", "forward") == "forward";
            for (int v : op.outputs) split[size_t(v)] = scatters;
            continue;
        }
        if (!in) continue;
        op.attrs["sequence_shards"] = shards;
        for (int v : op.outputs) split[size_t(v)] = 1;
    }
}

}  // namespace ts::hf
