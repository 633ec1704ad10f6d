#pragma once
// Renders training predictions: JSON (one entry per GPU) and a readable table.
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "trainscope/predictors/iteration/layer_bounds.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_prediction.h"

namespace ts::cli {

// What bounds each layer's passes on a prediction's GPU (layer_bounds.h), parallel to the
// predictions; an empty list where the GPU has no per-layer figures.
using LayerBoundLists = std::vector<std::vector<predictors::LayerBound>>;

nlohmann::ordered_json intervalJson(const predictors::Interval& i);
nlohmann::ordered_json predictionJson(const predictors::TrainingPrediction& p, bool layers,
                                      const std::vector<predictors::LayerBound>& bounds = {});
nlohmann::ordered_json predictReportJson(const predictors::ModelAnalysis& m,
                                         const std::vector<predictors::TrainingPrediction>& predictions, bool layers,
                                         const LayerBoundLists& bounds = {});
// One line per GPU (tokens/s too for a sequence model); with a single GPU also its memory by
// category and its slowest layers (every layer with `allLayers`) with what bounds each pass.
void printPredictTable(std::ostream& os, const predictors::ModelAnalysis& m,
                       const std::vector<predictors::TrainingPrediction>& predictions, bool allLayers,
                       const LayerBoundLists& bounds = {});

}  // namespace ts::cli
