#include "trace_input.h"

#include "scenario_options.h"
#include "trainscope/core/errors.h"
#include "trainscope/predictors/trace/trace_prediction.h"

namespace ts::cli {

void refuseModelOptionsForTrace(const ScenarioOptions& s) {
    auto refuse = [&](const std::string& option, const std::string& why) { throw ModelError(option, why); };
    const std::string noGraph = "a trace records one run of its job and holds no model graph; ";
    if (!s.optimizer.empty()) refuse("--optimizer", noGraph + "its optimizer steps are kept as recorded");
    const std::string parallel = noGraph + "its data parallelism is kept as recorded";
    if (s.gpus != 1) refuse("--gpus", parallel);
    if (s.zero != 0) refuse("--zero", parallel);
    if (s.fsdp) refuse("--fsdp", parallel);
    if (s.tensorParallel != 1) refuse("--tensor-parallel", noGraph + "its parallelism is kept as recorded");
    if (s.sequenceParallel) refuse("--sequence-parallel", noGraph + "its parallelism is kept as recorded");
    if (s.expertParallel != 1) refuse("--expert-parallel", noGraph + "its parallelism is kept as recorded");
    const std::string links = noGraph + "its collectives keep the rate they reached, within each GPU's own ring";
    if (s.interconnect != "nvlink") refuse("--interconnect", links);
    if (s.infinibandGbps != 400) refuse("--infiniband-gbps", links);
    if (s.gpusPerNode != 8) refuse("--gpus-per-node", links);
    const std::string fineTuning = noGraph + "fine-tuning set-ups apply to a model";
    if (s.lora != ScenarioOptions::kNotGiven) refuse("--lora", fineTuning);
    if (s.qlora) refuse("--qlora", fineTuning);
    if (!s.loraTargets.empty()) refuse("--lora-targets", fineTuning);
    if (s.loraAlpha != 0) refuse("--lora-alpha", fineTuning);
    if (!s.train.empty()) refuse("--train", fineTuning);
    if (!s.checkpointing.empty()) refuse("--checkpointing", noGraph + "checkpointing applies to a model");
    if (s.accumulation != 1) refuse("--accumulation", noGraph + "accumulation applies to a model");
    if (s.channelsLast) refuse("--channels-last", noGraph + "its kernels ran in the memory format it recorded");
    if (s.optimizerImplementation != "foreach")
        refuse("--optimizer-impl", noGraph + "its optimizer's kernels are the ones it recorded");
    if (s.keepGradients) refuse("--keep-gradients", noGraph + "the memory figures apply to a model");
    if (s.noMasterWeights) refuse("--no-master-weights", noGraph + "the memory figures apply to a model");
    if (s.seq > 0) refuse("--seq", noGraph + "its sequence length cannot be changed");
}

predictors::TraceChange traceChangeFrom(const std::string& precision, const std::string& batch) {
    std::optional<predictors::TraceChange> change = predictors::parseTracePrecision(precision);
    if (!change)
        throw ModelError("--precision",
                         "a trace moves to one of as-recorded, fp32, fp32-strict, tf32, amp-fp16 or amp-bf16; " +
                             quoted(precision) + " is not one of them (fp8 needs Transformer Engine and the model, bf16-params the model)");
    if (batch == "auto")
        throw ModelError("--batch", "a trace has no memory model to find the largest batch that fits: give a number");
    if (!batch.empty()) change->batch = batchFrom(batch, 0);
    return *change;
}

TraceInput loadTraceInput(const std::string& path, const GpuDatabase& db) {
    TraceInput in;
    in.trace = readKinetoTrace(path);
    in.origin = matchTraceGpu(in.trace, db, &in.match);
    if (std::string why = predictors::tracePredictionProblem(in.trace, in.origin); !why.empty())
        throw ModelError(path, why);
    return in;
}

}  // namespace ts::cli
