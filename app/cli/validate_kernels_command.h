#pragma once
// `validate-kernels`: leave-one-GPU-out validation of the cross-GPU scaling models on public
// per-operator measurements, and (--fit-all) regeneration of resources/kernel-scaling.json.
#include <string>
#include <vector>

namespace ts::cli {

struct ValidateKernelsOptions {
    std::vector<std::string> paths;       // CSV files and directories of them
    std::vector<std::string> gpuDbFiles;  // user GPU files applied after the built-in database
    bool json = false;
    bool fitAll = false;           // fit on every GPU and write the scaling table
    bool targetHostKnown = false;  // diagnostic: the target's own floor and bandwidth (not leave-one-out)
    std::string output;            // with --fit-all: where to write it (default: stdout)
    std::string predictions;       // also write every prediction to this CSV file ("" = none)
};

int runValidateKernels(const ValidateKernelsOptions& o);

}  // namespace ts::cli
