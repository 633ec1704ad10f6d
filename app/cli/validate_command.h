#pragma once
// `validate`: every recorded profile predicted from every other one (leave one batch size out,
// other precisions, other GPUs), with the error table, its means and medians and issue 5's targets.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts::cli {

struct ValidateOptions {
    std::string dir;                      // default: the source tree's tests/data/profiles
    std::vector<std::string> gpuDbFiles;  // user GPU files applied after the built-in database
    bool json = false;
};

CLI::App* addValidateCommand(CLI::App& app, ValidateOptions& o);
int runValidate(const ValidateOptions& o);

}  // namespace ts::cli
