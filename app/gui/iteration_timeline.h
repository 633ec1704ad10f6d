#pragma once
// What the Timeline draws for a model: one training iteration as predicted, laid out operation by
// operation the way the iteration model composes it (iteration_model.h): the host dispatches each
// operation in turn (forward in graph order; backward in reverse, checkpointing's recomputation of
// a segment before the segment's backward; the optimizer step), and the GPU runs each one once the
// host has begun it and the previous one is done, so it idles where the host is slower. With data
// parallelism each gradient bucket's collective runs on a communication stream once backward has
// readied it, and the step waits for the last. Measured kernels (a profile recorded with CUPTI at
// this precision) sit under their layer at their measured shares of its time. Plain C++ only.
#include <string>
#include <vector>

#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/iteration/training_prediction.h"

namespace ts::gui {

enum class IterationPass { Forward, Recompute, Backward, Optimizer, Communication, Other, Kernel };
// Gpu holds the operations; Passes, Modules and Blocks group its blocks as a trace viewer nests
// scopes: each pass, then the model's modules at two depths (the first that splits the model,
// and the deepest with at most kMaxBlocks runs of operations per pass that still covers half the
// GPU's work), so that names are readable before any zoom.
enum class IterationLane { Host, Passes, Modules, Blocks, Gpu, Kernels, Communication };
inline constexpr int kMaxBlocks = 40;

struct IterationBlock {
    IterationLane lane = IterationLane::Gpu;
    IterationPass pass = IterationPass::Forward;
    double startMs = 0, ms = 0;
    int op = -1;        // graph operation (a group's first), -1 for the parts that are not a layer
    std::string label;  // the operation's short name, the kernel's, the module's path, or the part's
};

struct IterationStretch {
    double startMs = 0, ms = 0;
};

struct IterationTimeline {
    std::vector<IterationBlock> blocks;          // host, GPU, kernels and communication, each in time order
    std::vector<IterationStretch> hostBound;     // the GPU idle, waiting for the host's dispatch
    std::vector<IterationStretch> commWaits;     // the GPU idle, waiting for a collective (exposed)
    double endMs = 0;                            // the later of the GPU's and the host's last work
    bool kernels = false;                        // measured kernels are drawn
    bool communication = false;                  // there are collectives
    bool moduleLane = false, blockLane = false;  // the module lanes have blocks
};

// `spanStart`, `recomputed`: the checkpointing plan of the prediction's scenario
// (ModelAnalysis::plan: the stretches backward takes one at a time, ascending, and the operations
// it runs forward again). `kernelRun`: the measured run whose kernels go under their layers (null: none).
IterationTimeline layOutIteration(const predictors::TrainingPrediction& p, const Graph& graph,
                                  const std::vector<int>& spanStart, const std::vector<char>& recomputed,
                                  const ProfileRun* kernelRun);

// "layer1.0.conv1/Conv" -> "conv1": what fits on a block; tooltips give the whole name.
std::string shortOpName(const Graph& graph, int op);

}  // namespace ts::gui
