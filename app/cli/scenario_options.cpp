#include "scenario_options.h"

#include "trainscope/core/errors.h"

namespace ts::cli {

using namespace ts::predictors;

std::string quoted(const std::string& s) {
    return "'" + s + "'";
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
