#pragma once
// Renders training predictions: JSON (one entry per GPU) and a readable table.
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_prediction.h"

namespace ts::cli {

nlohmann::ordered_json intervalJson(const predictors::Interval& i);
nlohmann::ordered_json predictionJson(const predictors::TrainingPrediction& p, bool layers);
nlohmann::ordered_json predictReportJson(const predictors::ModelAnalysis& m,
                                         const std::vector<predictors::TrainingPrediction>& predictions, bool layers);
// One line per GPU; with a single GPU also its memory by category and its slowest layers
// (every layer with `allLayers`).
void printPredictTable(std::ostream& os, const predictors::ModelAnalysis& m,
                       const std::vector<predictors::TrainingPrediction>& predictions, bool allLayers);

}  // namespace ts::cli
