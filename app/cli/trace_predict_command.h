#pragma once
// `predict TRACE`: a PyTorch profiler trace's steps predicted on other GPUs (predictors/trace), and
// `validate-traces A B`: the kernel moves checked on the operators two traces of different GPUs share.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts::cli {

struct PredictOptions;

// predict's handling of a trace path. `o.precision`: "" or as-recorded, fp32, tf32, fp32-strict.
int runPredictTrace(const PredictOptions& o);

struct ValidateTracesOptions {
    std::string a, b;
    bool json = false;
    std::vector<std::string> gpuDbFiles;
};
CLI::App* addValidateTracesCommand(CLI::App& app, ValidateTracesOptions& o);
int runValidateTraces(const ValidateTracesOptions& o);

}  // namespace ts::cli
