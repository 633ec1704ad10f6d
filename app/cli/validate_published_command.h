#pragma once
// `validate-published`: whole-iteration predictions against NVIDIA's published PyTorch training
// throughput (every row a TrainScope model stands for), with per-row errors, summaries and the
// errors of ratios between rows of one model.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts::cli {

struct ValidatePublishedOptions {
    std::vector<std::string> paths;       // default: ../shared/data/training-throughput beside the source tree
    std::vector<std::string> gpuDbFiles;  // user GPU files applied after the built-in database
    std::string mapping;                  // a mapping file instead of the built-in resources/published-runs.json
    bool json = false;
    bool fit = false;                        // fit the constants only whole runs tell, with leave-one-out errors
    std::vector<std::string> fitParameters;  // with --fit: which constants (default: the shipped ones)
    std::string writeErrors;                 // with --fit: write the whole-iteration interval table here
    std::string writeOutOfSample;            // this table's out-of-sample part from these rows (not --fit)
    std::string predictions;                 // also write every compared row to this CSV file ("" = none)
};

CLI::App* addValidatePublishedCommand(CLI::App& app, ValidatePublishedOptions& o);
int runValidatePublished(const ValidatePublishedOptions& o);

}  // namespace ts::cli
