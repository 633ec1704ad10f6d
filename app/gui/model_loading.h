#pragma once
// Everything the explorer needs to show a model, built in one call that may run on a worker
// thread: the graph (any model format, or the model a profile file names), its predictor, and the
// measured profile when the input is one. Plain C++ only, so it can run off the GUI thread.
#include <memory>
#include <optional>
#include <string>

#include "trace_document.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::gui {

struct LoadedModel {
    std::string spec;  // what the user opened: zoo:NAME, a model file, or a profile file
    std::unique_ptr<Graph> graph;
    std::unique_ptr<predictors::TrainingPredictor> predictor;
    std::unique_ptr<Profile> profile;  // when `spec` is a profile file
    // The profile's own settings, which the explorer adopts so that its first figures are the
    // measured ones.
    std::optional<predictors::TrainingPrecision> profilePrecision;
    std::optional<predictors::Optimizer> profileOptimizer;
    int64_t profileBatch = 0;  // the largest measured batch that fitted, 0 when none
    // A PyTorch profiler trace instead of a model: no graph, predictor or profile.
    std::shared_ptr<const TraceDocument> trace;
};

// Throws ModelError naming the input and the problem (unreadable file, unsupported operator, a
// profile of another model, a damaged trace...). A PyTorch profiler trace is read and summarised
// (LoadedModel::trace); the window reads one through traceOpeningWork instead, with progress.
// A profile's model is looked up as recorded and, failing that, beside the profile file
// (profiles travel from a GPU server to a laptop with their model).
LoadedModel loadForExplorer(const std::string& spec, const GpuDatabase& db);

// The file name or zoo name a window title or a recent-files menu shows.
std::string displayName(const std::string& spec);

}  // namespace ts::gui
