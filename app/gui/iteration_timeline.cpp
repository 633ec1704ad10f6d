#include "iteration_timeline.h"

#include <algorithm>
#include <cmath>

namespace ts::gui {

using namespace ts::predictors;

namespace {

constexpr double kTiny = 1e-9;  // ms: less is nothing to draw

// The host and the GPU stream advancing together: the host dispatches one operation after
// another; the GPU starts each once the host has begun it and its previous work is done.
struct Streams {
    IterationTimeline& out;
    double host = 0;  // when the host is free
    double gpu = 0;   // when the GPU is free

    void idleUntil(double t, std::vector<IterationStretch>& why) {
        if (t > gpu + kTiny) why.push_back({gpu, t - gpu});
        gpu = std::max(gpu, t);
    }
    // One operation's pass: `hostMs` of dispatch, then `gpuMs` on the stream.
    void run(int op, IterationPass pass, const std::string& label, double hostMs, double gpuMs) {
        const double issued = host;
        if (hostMs > kTiny) out.blocks.push_back({IterationLane::Host, pass, host, hostMs, op, label});
        host += std::max(hostMs, 0.0);
        if (gpuMs <= kTiny) return;
        idleUntil(issued, out.hostBound);
        out.blocks.push_back({IterationLane::Gpu, pass, gpu, gpuMs, op, label});
        gpu += gpuMs;
    }
};

// The first `depth` components of a module path ("layer1.0.conv1", 2 -> "layer1.0"); empty when
// the path has fewer.
std::string prefixOf(const std::string& path, int depth) {
    if (path.empty() || depth <= 0) return {};
    size_t end = 0;
    for (int d = 0; d < depth; ++d) {
        if (d > 0) {
            if (end >= path.size()) return {};
            ++end;  // past the dot
        }
        end = path.find('.', end);
        if (end == std::string::npos) end = path.size();
    }
    return path.substr(0, end);
}

// Runs of consecutive GPU blocks of one pass whose operations share a module prefix at `depth`,
// as blocks of `lane` spanning them (operations outside any such module break runs and get none).
std::vector<IterationBlock> groupsAt(const std::vector<IterationBlock>& gpu, const Graph& graph, int depth,
                                     IterationLane lane) {
    std::vector<IterationBlock> out;
    std::string current;
    for (const IterationBlock& b : gpu) {
        const std::string prefix =
            b.op >= 0 && size_t(b.op) < graph.ops.size() ? prefixOf(graph.ops[size_t(b.op)].modulePath, depth) : "";
        const bool extends = !out.empty() && !prefix.empty() && prefix == current && out.back().pass == b.pass;
        if (extends) {
            out.back().ms = b.startMs + b.ms - out.back().startMs;
        } else if (!prefix.empty()) {
            out.push_back({lane, b.pass, b.startMs, b.ms, b.op, prefix});
        }
        current = prefix;
    }
    return out;
}

// The passes, then the module lanes, over the GPU's blocks.
void addGroups(IterationTimeline& t, const Graph& graph) {
    std::vector<IterationBlock> gpu;
    for (const IterationBlock& b : t.blocks)
        if (b.lane == IterationLane::Gpu) gpu.push_back(b);
    // Passes: recomputation belongs to backward, where it runs.
    std::vector<IterationBlock> passes;
    for (const IterationBlock& b : gpu) {
        const IterationPass pass = b.pass == IterationPass::Recompute ? IterationPass::Backward : b.pass;
        if (!passes.empty() && passes.back().pass == pass)
            passes.back().ms = b.startMs + b.ms - passes.back().startMs;
        else
            passes.push_back({IterationLane::Passes, pass, b.startMs, b.ms, -1, {}});
    }
    for (IterationBlock& p : passes) {
        const char* name = p.pass == IterationPass::Forward     ? "forward"
                           : p.pass == IterationPass::Backward  ? "backward"
                           : p.pass == IterationPass::Optimizer ? "optimizer step"
                                                                : "outside the layers";
        p.label = name;
    }
    t.blocks.insert(t.blocks.end(), passes.begin(), passes.end());
    // The module depths: the first that splits the model, and the deepest with few enough runs.
    int deepest = 0;
    for (const Operation& op : graph.ops)
        deepest = std::max(deepest, int(std::count(op.modulePath.begin(), op.modulePath.end(), '.')) + 1);
    double busy = 0;
    for (const IterationBlock& b : gpu) busy += b.ms;
    int first = 0, blocks = 0;
    for (int depth = 1; depth <= deepest; ++depth) {
        const std::vector<IterationBlock> runs = groupsAt(gpu, graph, depth, IterationLane::Blocks);
        std::vector<std::string> distinct;
        double covered = 0;
        for (const IterationBlock& r : runs) {
            if (std::find(distinct.begin(), distinct.end(), r.label) == distinct.end()) distinct.push_back(r.label);
            covered += r.ms;
        }
        if (first == 0 && distinct.size() >= 2) first = depth;
        // A depth only a few operations reach (a residual block's downsample) groups too little;
        // one with about a run per operation repeats the layers.
        const int perPass = int(runs.size()) / std::max<int>(1, int(passes.size()));
        if (first > 0 && perPass <= kMaxBlocks && covered >= 0.5 * busy && 2 * runs.size() <= gpu.size())
            blocks = depth;
    }
    if (first > 0) {
        const std::vector<IterationBlock> modules = groupsAt(gpu, graph, first, IterationLane::Modules);
        t.moduleLane = !modules.empty();
        t.blocks.insert(t.blocks.end(), modules.begin(), modules.end());
    }
    if (blocks > first) {
        const std::vector<IterationBlock> runs = groupsAt(gpu, graph, blocks, IterationLane::Blocks);
        t.blockLane = !runs.empty();
        t.blocks.insert(t.blocks.end(), runs.begin(), runs.end());
    }
}

}  // namespace

std::string shortOpName(const Graph& graph, int op) {
    if (op < 0 || size_t(op) >= graph.ops.size()) return {};
    const std::string& full = graph.ops[size_t(op)].name;
    const size_t slash = full.find('/');
    const std::string path = full.substr(0, slash);
    const size_t dot = path.rfind('.');
    const std::string last = dot == std::string::npos ? path : path.substr(dot + 1);
    const bool index =
        !last.empty() && std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!index) return last;
    // A container's index says little alone: "downsample.0" from "layer2.0.downsample.0/Conv", and
    // the operation from "layer1.0/Add".
    const size_t before = dot == std::string::npos ? std::string::npos : path.rfind('.', dot - 1);
    if (before != std::string::npos) return path.substr(before + 1);
    return slash != std::string::npos ? full.substr(slash + 1) : path;
}

IterationTimeline layOutIteration(const TrainingPrediction& p, const Graph& graph, const std::vector<int>& spanStart,
                                  const std::vector<char>& recomputed, const ProfileRun* kernelRun) {
    IterationTimeline t;
    Streams s{t};
    const std::vector<LayerTime>& layers = p.layers;

    // Forward, in graph order.
    for (const LayerTime& l : layers)
        s.run(l.op, IterationPass::Forward, shortOpName(graph, l.op), l.hostForwardMs, l.forwardMs.value);

    // Backward, span by span from the last: under checkpointing, a span's recomputed operations
    // first run forward again (the predictor's recomputation), then its backward in reverse.
    const bool checkpointing = p.scenario.checkpointing != Checkpointing::None;
    std::vector<int> starts = checkpointing && !spanStart.empty() ? spanStart : std::vector<int>{0};
    auto rerun = [&](int op) { return checkpointing && size_t(op) < recomputed.size() && recomputed[size_t(op)]; };
    const IterationLayout& layout = p.layout;
    auto hasBackward = [](const LayerTime& l) { return l.backwardMs.value > kTiny || l.hostBackwardMs > kTiny; };
    // A bucket is ready when the backward of its last op (the lowest index at or above its first
    // op with a backward pass) is done; one without any is ready when backward begins.
    std::vector<int> lastOp(layout.buckets.size(), -1);
    for (size_t j = 0; j < lastOp.size(); ++j)
        for (const LayerTime& l : layers)
            if (l.op >= layout.buckets[j].firstOp && hasBackward(l)) {
                lastOp[j] = l.op;
                break;
            }
    std::vector<double> ready(layout.buckets.size(), -1);
    for (size_t j = 0; j < ready.size(); ++j)
        if (lastOp[j] < 0) ready[j] = s.gpu;
    size_t end = layers.size();  // layers [.., end) not yet run backward
    for (int seg = int(starts.size()) - 1; seg >= 0; --seg) {
        const int first = starts[size_t(seg)];
        const size_t begin = size_t(std::lower_bound(layers.begin(), layers.end(), first,
                                                     [](const LayerTime& l, int op) { return l.op < op; }) -
                                    layers.begin());
        for (size_t i = begin; i < end; ++i)
            if (rerun(layers[i].op))
                s.run(layers[i].op, IterationPass::Recompute, shortOpName(graph, layers[i].op), layers[i].hostForwardMs,
                      layers[i].forwardMs.value);
        for (size_t i = end; i-- > begin;) {
            const LayerTime& l = layers[i];
            if (!hasBackward(l)) continue;
            s.run(l.op, IterationPass::Backward, shortOpName(graph, l.op), l.hostBackwardMs, l.backwardMs.value);
            for (size_t j = 0; j < ready.size(); ++j)
                if (lastOp[j] == l.op) ready[j] = s.gpu;
        }
        end = begin;
    }

    // The collectives, each once its bucket is ready and the previous one is done; the step waits
    // for the last (DDP's all-reduce, or ZeRO's reduce-scatter).
    double link = 0;
    for (size_t j = 0; j < layout.buckets.size(); ++j) {
        const double start = std::max(ready[j], link);
        const bool scatter = p.scenario.dataParallel.zeroStage > 0;
        t.blocks.push_back({IterationLane::Communication, IterationPass::Communication, start, layout.buckets[j].ms, -1,
                            (scatter ? "reduce-scatter " : "all-reduce ") + std::to_string(j + 1) + "/" +
                                std::to_string(layout.buckets.size())});
        link = start + layout.buckets[j].ms;
    }
    // What the model exposes beyond the buckets (ZeRO's parameter gathers) follows them.
    const double bucketsExposed = std::max(0.0, link - s.gpu);
    if (p.communicationMs.value > bucketsExposed + 1e-6 && !layout.buckets.empty()) {
        const double more = p.communicationMs.value - bucketsExposed;
        t.blocks.push_back({IterationLane::Communication, IterationPass::Communication, std::max(link, s.gpu), more, -1,
                            "parameter all-gather (exposed)"});
        link = std::max(link, s.gpu) + more;
    }
    t.communication = !layout.buckets.empty();
    s.idleUntil(link, t.commWaits);

    // The optimizer step: after the host waited for the GPU (amp-fp16), or as dispatched.
    if (layout.optimizerWaitsForGpu) s.host = std::max(s.host, s.gpu);
    s.run(-1, IterationPass::Optimizer, "optimizer step", layout.optimizerHostMs, p.optimizerMs.value);
    if (p.otherMs.value > kTiny) {
        t.blocks.push_back(
            {IterationLane::Gpu, IterationPass::Other, s.gpu, p.otherMs.value, -1, "outside the layers (measured)"});
        s.gpu += p.otherMs.value;
    }
    // Every step waits for the slowest of the data-parallel GPUs: at the end of the iteration.
    if (p.slowestGpuWaitMs.value > kTiny) {
        const double start = std::max({s.gpu, s.host, link});
        t.blocks.push_back({IterationLane::Communication, IterationPass::Communication, start,
                            p.slowestGpuWaitMs.value, -1, "waiting for the slowest GPU"});
        link = start + p.slowestGpuWaitMs.value;
    }
    t.endMs = std::max({s.gpu, s.host, link});
    addGroups(t, graph);

    // Measured kernels under their layer's GPU block, each its measured share of the block.
    if (kernelRun) {
        std::vector<const LayerProfile*> byOp(graph.ops.size(), nullptr);
        for (const LayerProfile& l : kernelRun->layers)
            if (l.op >= 0 && size_t(l.op) < byOp.size()) byOp[size_t(l.op)] = &l;
        std::vector<IterationBlock> kernels;
        for (const IterationBlock& b : t.blocks) {
            if (b.lane != IterationLane::Gpu || b.op < 0) continue;
            const LayerProfile* layer = size_t(b.op) < byOp.size() ? byOp[size_t(b.op)] : nullptr;
            if (!layer) continue;
            const std::vector<KernelRecord>& ks =
                b.pass == IterationPass::Backward ? layer->backwardKernels : layer->forwardKernels;
            double sum = 0;
            for (const KernelRecord& k : ks) sum += k.durationUs;
            if (sum <= 0) continue;
            double start = b.startMs;
            for (const KernelRecord& k : ks) {
                const double ms = b.ms * k.durationUs / sum;
                std::string label = k.name;
                if (k.launches > 1) label += " \u00d7" + std::to_string(k.launches);
                if (k.tensorCore) label += " (tensor cores)";
                kernels.push_back({IterationLane::Kernels, IterationPass::Kernel, start, ms, b.op, label});
                start += ms;
            }
        }
        t.kernels = !kernels.empty();
        t.blocks.insert(t.blocks.end(), kernels.begin(), kernels.end());
    }
    return t;
}

}  // namespace ts::gui
