#include "scenario_options.h"

#include <CLI/CLI.hpp>
#include <cstdint>

#include "trainscope/core/errors.h"

namespace ts::cli {

using namespace ts::predictors;

std::string quoted(const std::string& s) {
    return "'" + s + "'";
}

void addScenarioOptions(CLI::App& cmd, ScenarioOptions& o) {
    cmd.add_option("--optimizer", o.optimizer, "sgd (default), sgd-momentum, adam or adamw");
    cmd.add_option("--gpus", o.gpus, "data-parallel GPUs (default 1)")->check(CLI::Range(1, 65536));
    cmd.add_option("--interconnect", o.interconnect, "between the GPUs: nvlink (default), pcie or infiniband");
    cmd.add_option("--infiniband-gbps", o.infinibandGbps, "InfiniBand rate per GPU in Gb/s (default 400, NDR)")
        ->check(CLI::Range(1.0, 1e5));
    cmd.add_flag("--checkpointing", o.checkpointing, "activation checkpointing in sqrt(L) segments");
}

int64_t batchFrom(const std::string& text, int64_t modelDefault) {
    if (text.empty()) return modelDefault;
    if (text == "auto") return 0;
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || v < 1 || v > (int64_t(1) << 30))
        throw ModelError("--batch", "expected a batch size from 1 to 2^30 or 'auto', got " + quoted(text));
    return v;
}

TrainingScenario scenarioFromOptions(const ScenarioOptions& o, std::optional<Optimizer> profileOptimizer) {
    TrainingScenario s;
    s.optimizer = profileOptimizer.value_or(Optimizer::Sgd);
    if (!o.optimizer.empty()) {
        auto opt = parseOptimizer(o.optimizer);
        if (!opt)
            throw ModelError("--optimizer",
                             "unknown optimizer " + quoted(o.optimizer) + " (sgd, sgd-momentum, adam or adamw)");
        s.optimizer = *opt;
    }
    auto link = parseInterconnect(o.interconnect);
    if (!link)
        throw ModelError("--interconnect",
                         "unknown interconnect " + quoted(o.interconnect) + " (nvlink, pcie or infiniband)");
    s.dataParallel.gpus = o.gpus;
    s.dataParallel.interconnect = *link;
    s.dataParallel.infinibandGbps = o.infinibandGbps;
    s.checkpointing = o.checkpointing;
    return s;
}

}  // namespace ts::cli
