#include "scenario_options.h"

#include <CLI/CLI.hpp>
#include <cstdint>

#include "trainscope/core/errors.h"
#include "trainscope/core/fine_tuning.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/model_loader.h"

namespace ts::cli {

using namespace ts::predictors;

std::string quoted(const std::string& s) {
    return "'" + s + "'";
}

void addScenarioOptions(CLI::App& cmd, ScenarioOptions& o) {
    cmd.add_option("--optimizer", o.optimizer,
                   "sgd, sgd-momentum, adam, adamw or adam8bit (default: the profile's, else adamw for a language "
                   "model, sgd-momentum for a vision model, sgd otherwise)");
    cmd.add_option("--optimizer-impl", o.optimizerImplementation,
                   "how the optimizer's update runs: foreach (PyTorch's default: a kernel per operation over "
                   "every tensor, Adam with a parameter-sized temporary), for-loop (foreach=False, Hugging "
                   "Face's adamw_hf: kernels per tensor, a temporary the size of the largest) or fused "
                   "(fused=True, apex's FusedAdam: one pass, no temporary)");
    cmd.add_option("--seq", o.seq, "sequence length of a sequence model (default: the profile's, else the model's)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
    cmd.add_option("--gpus", o.gpus,
                   "GPUs in all (default 1): data-parallel replicas, times --tensor-parallel")
        ->check(CLI::Range(1, 65536));
    cmd.add_option("--tensor-parallel", o.tensorParallel,
                   "GPUs of a tensor-parallel group inside one node (Megatron-LM's, PyTorch's ColwiseParallel and "
                   "RowwiseParallel): each holds whole attention heads and a slice of every MLP width and of the "
                   "vocabulary, and each block all-reduces twice forward and twice backward. For a model built "
                   "from a Hugging Face config.json (decoder families); --gpus must be a multiple of it (default 1)")
        ->check(CLI::Range(1, 64));
    cmd.add_flag("--sequence-parallel", o.sequenceParallel,
                 "with --tensor-parallel: sequence parallelism (Megatron-LM's --sequence-parallel; torchtitan's "
                 "tensor parallelism always has it): norms, dropouts and residual adds each run on 1/T of the "
                 "tokens, their activations split too; all-gathers and reduce-scatters replace the all-reduces");
    cmd.add_option("--expert-parallel", o.expertParallel,
                   "GPUs of an expert-parallel group inside one node (torchtitan's, Megatron-LM's "
                   "--expert-model-parallel-size): each holds 1/E of every sparse layer's routed experts, and each "
                   "such layer sends its tokens to their experts' GPUs and back (two all-to-alls forward, two "
                   "backward); its GPUs are data-parallel for the rest of the model. For a mixture-of-experts model "
                   "built from a Hugging Face config.json; --gpus must be a multiple of it (default 1)")
        ->check(CLI::Range(1, 64));
    cmd.add_option("--interconnect", o.interconnect, "between the GPUs: nvlink (default), pcie or infiniband");
    cmd.add_option("--infiniband-gbps", o.infinibandGbps, "InfiniBand rate per GPU in Gb/s (default 400, NDR)")
        ->check(CLI::Range(1.0, 1e5));
    cmd.add_option("--gpus-per-node", o.gpusPerNode,
                   "with --interconnect infiniband: GPUs per node, each with its own NIC (default 8)")
        ->check(CLI::Range(1, 1024));
    cmd.add_flag("--checkpointing{blocks}", o.checkpointing,
                 "activation checkpointing: --checkpointing alone checkpoints every numbered block (Hugging "
                 "Face's gradient_checkpointing, torchtitan's full AC); --checkpointing=POLICY for "
                 "every-other-block (torchtitan's selective layer AC), selective-ops (its selective op AC: "
                 "attention and every other linear layer's output kept, the rest recomputed), sqrt (sqrt(L) "
                 "segments) or none. A model without numbered blocks gets sqrt(L) segments");
    cmd.add_option("--accumulation", o.accumulation,
                   "gradient accumulation: micro-batches per optimizer step (default 1; --batch is the micro-batch)");
    cmd.add_flag("--channels-last", o.channelsLast,
                 "activations in the channels-last memory format (model.to(memory_format=torch.channels_last)): "
                 "tensor-core convolutions then run without cuDNN's layout transposes (default: PyTorch's "
                 "channels-first)");
    cmd.add_flag("--keep-gradients", o.keepGradients,
                 "zero_grad zeroes the gradients instead of freeing them (set_to_none=False, PyTorch's default "
                 "before 2.0): they stay allocated through the next forward (gradient accumulation keeps them "
                 "anyway)");
    cmd.add_flag("--no-master-weights", o.noMasterWeights,
                 "with --precision bf16-params: the optimizer updates the bf16 parameters themselves, with bf16 "
                 "states, and keeps no fp32 master copy (a model loaded in bf16 and trained as it is, as Hugging "
                 "Face's Trainer does with torch_dtype=bfloat16); LoRA adapters stay fp32, as PEFT creates them "
                 "(unless --lora-in-model-dtype)");
    cmd.add_option("--zero", o.zero,
                   "ZeRO stage over the data-parallel GPUs: 1 shards optimizer states, 2 also gradients, 3 also "
                   "parameters (default 0: DDP)");
    cmd.add_flag("--fsdp", o.fsdp, "PyTorch FSDP FULL_SHARD: ZeRO stage 3");
    cmd.add_option("--lora", o.lora, "LoRA adapters of this rank beside the linear layers (base weights frozen)");
    cmd.add_option("--lora-targets", o.loraTargets,
                   "comma-separated module-name substrings of the layers LoRA adapts (default: every linear "
                   "layer of the transformer blocks, PEFT's all-linear)");
    cmd.add_option("--lora-alpha", o.loraAlpha, "LoRA alpha (scaling alpha/rank; default: the rank)");
    cmd.add_option("--lora-dropout", o.loraDropout,
                   "PEFT's lora_dropout: each adapter's input through a dropout of its own, which keeps a mask "
                   "and the dropped input for backward (default 0, PEFT's; recipes often use 0.05 or 0.1)");
    cmd.add_flag("--lora-in-model-dtype", o.loraInModelDtype,
                 "the adapters in the model's dtype (PEFT before 0.11, or get_peft_model(autocast_adapter_dtype="
                 "False)), where by default they are fp32 as PEFT creates them: each adapted layer then casts "
                 "its input to fp32 and back");
    cmd.add_flag("--qlora", o.qlora, "QLoRA: the base model's linear layers in the blocks (adapted or not) and its experts in 4-bit NF4, as bitsandbytes' load_in_4bit stores them (needs --lora)");
    cmd.add_option("--train", o.train,
                   "comma-separated parameter-name substrings: only those train, the rest is frozen "
                   "(with --lora: trained beside the adapters)");
}

namespace {

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

}  // namespace

void applyFineTuning(Graph& g, const ScenarioOptions& o, bool modelIn16Bit) {
    if (o.qlora && o.lora == ScenarioOptions::kNotGiven)
        throw ModelError("--qlora", "needs --lora RANK (QLoRA trains LoRA adapters on 4-bit base weights)");
    if (!o.loraTargets.empty() && o.lora == ScenarioOptions::kNotGiven)
        throw ModelError("--lora-targets", "needs --lora RANK");
    if (o.loraDropout != 0 && o.lora == ScenarioOptions::kNotGiven)
        throw ModelError("--lora-dropout", "needs --lora RANK");
    if (o.loraInModelDtype && o.lora == ScenarioOptions::kNotGiven)
        throw ModelError("--lora-in-model-dtype", "needs --lora RANK");
    if (o.lora != ScenarioOptions::kNotGiven) {
        if (!(o.loraAlpha >= 0)) throw ModelError("--lora-alpha", "must not be negative");
        LoraOptions lora;
        lora.rank = o.lora;
        lora.alpha = o.loraAlpha;
        lora.qlora = o.qlora;
        lora.dropout = o.loraDropout;
        lora.fp32Adapters = !o.loraInModelDtype && !(modelIn16Bit && !o.noMasterWeights);
        lora.targets = splitList(o.loraTargets);
        if (!o.loraTargets.empty() && lora.targets.empty())
            throw ModelError("--lora-targets", "no module name in " + quoted(o.loraTargets));
        g = withLora(g, lora);
        if (!o.train.empty()) trainAlso(g, splitList(o.train), "--train", /*asCopies=*/true);
    } else if (!o.train.empty()) {
        trainOnly(g, splitList(o.train), "--train");
    }
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

std::string modelSpecFor(const std::string& spec, const ScenarioOptions& o) {
    if (o.sequenceParallel && o.tensorParallel <= 1)
        throw ModelError("--sequence-parallel", "splits the tensors between tensor-parallel layers: it needs "
                                                "--tensor-parallel above 1");
    if (o.tensorParallel <= 1 && o.expertParallel <= 1) return spec;
    const ModelSpec parsed = parseModelSpec(spec);
    const std::string& where = parsed.location;
    const bool zoo = where.rfind("zoo:", 0) == 0;
    const bool json = where.size() >= 5 && where.compare(where.size() - 5, 5, ".json") == 0;
    const char* flag = o.tensorParallel > 1 ? "--tensor-parallel" : "--expert-parallel";
    const char* what = o.tensorParallel > 1 ? "tensor parallelism shards models built from a Hugging Face config.json "
                                              "(decoder families)"
                                            : "expert parallelism splits the experts of mixture-of-experts models "
                                              "built from a Hugging Face config.json";
    if (zoo || !json)
        throw ModelError(flag, where + " is " + (zoo ? "a built-in model" : "not a .json file") + ": " + what);
    for (const char* option : {"tensor_parallel", "sequence_parallel", "expert_parallel"})
        if (parsed.params.count(option))
            throw ModelError(flag, "the model " + quoted(spec) + " already sets " + option + ": give it in one place");
    std::string sharded = spec;
    if (o.tensorParallel > 1) sharded = modelSpecWith(sharded, "tensor_parallel", std::to_string(o.tensorParallel));
    if (o.sequenceParallel) sharded = modelSpecWith(sharded, "sequence_parallel", "1");
    if (o.expertParallel > 1) sharded = modelSpecWith(sharded, "expert_parallel", std::to_string(o.expertParallel));
    return sharded;
}

void checkTensorParallel(const ScenarioOptions& o, const Graph& g, const std::string& spec) {
    if (o.tensorParallel > 1 && g.format != "huggingface")
        throw ModelError("--tensor-parallel", spec +
                                                  " is not a Hugging Face config.json: tensor parallelism shards "
                                                  "models built from one (decoder families)");
    if (o.expertParallel > 1 && g.format != "huggingface")
        throw ModelError("--expert-parallel", spec +
                                                  " is not a Hugging Face config.json: expert parallelism splits "
                                                  "the experts of mixture-of-experts models built from one");
}

void checkSequenceOption(const ScenarioOptions& o, const Graph& g) {
    if (o.seq > 0 && g.defaults.seq <= 0)
        throw ModelError("--seq", g.name + " has no sequence dimension, so a length of " + std::to_string(o.seq) +
                                      " does not apply");
}

void checkMasterWeights(const ScenarioOptions& o, bool bf16Params) {
    if (o.noMasterWeights && !bf16Params)
        throw ModelError("--no-master-weights",
                         "applies to --precision bf16-params (the model itself in bf16); under autocast and in fp32 "
                         "the fp32 weights are what the optimizer updates, and fp16-params keeps its fp32 master copy "
                         "(updates of fp16 weights and states underflow)");
}

TrainingScenario scenarioFromOptions(const ScenarioOptions& o, std::optional<Optimizer> profileOptimizer,
                                     Optimizer modelDefault) {
    TrainingScenario s;
    s.optimizer = profileOptimizer.value_or(modelDefault);
    if (!o.optimizer.empty()) {
        auto opt = parseOptimizer(o.optimizer);
        if (!opt)
            throw ModelError("--optimizer", "unknown optimizer " + quoted(o.optimizer) +
                                                " (sgd, sgd-momentum, adam, adamw or adam8bit)");
        s.optimizer = *opt;
    }
    auto implementation = parseOptimizerImplementation(o.optimizerImplementation);
    if (!implementation)
        throw ModelError("--optimizer-impl", "unknown optimizer implementation " + quoted(o.optimizerImplementation) +
                                                 " (" + optimizerImplementationNames() + ")");
    s.optimizerImplementation = *implementation;
    auto link = parseInterconnect(o.interconnect);
    if (!link)
        throw ModelError("--interconnect",
                         "unknown interconnect " + quoted(o.interconnect) + " (nvlink, pcie or infiniband)");
    s.dataParallel.gpus = o.gpus;
    s.dataParallel.interconnect = *link;
    s.dataParallel.infinibandGbps = o.infinibandGbps;
    s.dataParallel.gpusPerNode = o.gpusPerNode;
    if (!o.checkpointing.empty()) {
        auto c = parseCheckpointing(o.checkpointing);
        if (!c)
            throw ModelError("--checkpointing", "unknown checkpointing policy " + quoted(o.checkpointing) + " (" +
                                                    checkpointingNames() + ")");
        s.checkpointing = *c;
    }
    if (o.accumulation < 1 || o.accumulation > (int64_t(1) << 20))
        throw ModelError("--accumulation", "the gradient accumulation steps must be from 1 to 2^20, got " +
                                               std::to_string(o.accumulation));
    s.accumulation = o.accumulation;
    s.channelsLast = o.channelsLast;
    s.keepGradients = o.keepGradients;
    s.masterWeights = !o.noMasterWeights;
    if (o.zero < 0 || o.zero > 3)
        throw ModelError("--zero", "the ZeRO stage must be 0, 1, 2 or 3, got " + std::to_string(o.zero));
    if (o.fsdp && o.zero != 0 && o.zero != 3)
        throw ModelError("--fsdp", "is ZeRO stage 3 (FULL_SHARD); it contradicts --zero " + std::to_string(o.zero));
    s.dataParallel.zeroStage = o.fsdp ? 3 : o.zero;
    return s;
}

}  // namespace ts::cli
