#pragma once
// `trainscope-cli profile`: measure a model's training on the local GPU (or the CPU) and write the
// profile file (and optionally a Chrome/Perfetto trace).
#include <CLI/CLI.hpp>
#include <string>

namespace ts::cli {

struct ProfileCommandOptions {
    std::string model;
    std::string device = "cpu";
    std::string batch;        // "N", "N,M,...", or "auto"
    int64_t batchCap = 0;     // with auto: the largest batch tried
    int64_t seq = 0;
    std::string precision = "fp32";
    std::string optimizer = "sgd";
    std::string output;
    std::string trace;
    bool noLayers = false;
    bool noKernels = false;
    bool quick = false;       // fewer repeats (smoke tests, slow CPUs)
    int warmup = 3;
    int maxRepeats = 50;
};

CLI::App* addProfileCommand(CLI::App& app, ProfileCommandOptions& o);
int runProfile(const ProfileCommandOptions& o);

}  // namespace ts::cli
