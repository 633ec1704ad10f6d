#pragma once
// `report`: the hardware-choice report for a model (or a profile): which GPU, at what batch size
// and precision, for what time and cost, ranked; for a PyTorch profiler trace, which GPU to run the
// recorded job on, for what time per step and cost (predictors/choice/trace_choice.h). csv and json
// in every build; html and pdf need the GUI build (Qt 6 and QCustomPlot, the trainscope_report
// library).
#include <cstdint>
#include <string>
#include <vector>

#include "scenario_options.h"

namespace CLI {
class App;
}

namespace ts::cli {

struct ReportOptions {
    std::string model;   // MODEL or PROFILE, as for predict, or a TRACE
    std::string format;  // html, pdf, csv or json; default: from the output's suffix
    std::string output;
    std::vector<std::string> gpus;        // ids or names, or all (default)
    std::string batch;                    // N, or auto (also when empty): chosen per GPU
    std::vector<std::string> precisions;  // default: every precision each GPU supports
    ScenarioOptions scenario;             // optimizer, sequence length, data-parallel GPUs, interconnect, ...
    double epochs = 0;                    // 0: not given (1 epoch)
    double datasetSamples = 0;            // 0: not given (TrainingGoal's default, ImageNet-1k)
    double tokens = 0;                    // 0: not given (a language model's default goal in tokens)
    std::vector<std::string> gpuDbFiles;
};

CLI::App* addReportCommand(CLI::App& app, ReportOptions& o);
int runReport(const ReportOptions& o);

}  // namespace ts::cli
