#pragma once
// Fine-tuning set-ups as transformations of the model graph: which parameters train (the others
// are frozen: no gradient, no optimizer state, no weight-gradient kernels), LoRA adapters beside
// linear layers, QLoRA's 4-bit NF4 storage of the frozen base weights. A transformation rather
// than a rule of the predictors, so that the module tree shows the adapters and every consumer
// (costs, inspect, the predictors) sees one model.
#include <cstdint>
#include <string>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts {

// Freezes every parameter, then unfreezes those whose name contains one of `trainable` (module
// paths or parameter names: "lm_head", "h.35.", ".bias"). Throws ModelError naming
// `optionName` when a pattern matches no parameter.
void trainOnly(Graph& g, const std::vector<std::string>& trainable, const std::string& optionName = "--train");

// Unfreezes the parameters whose name contains one of `trainable`, leaving the others as they are.
// asCopies: each is trained as PEFT's modules_to_save trains a module beside adapters, a copy next
// to its frozen original (which stays in memory). Throws ModelError as trainOnly.
void trainAlso(Graph& g, const std::vector<std::string>& trainable, const std::string& optionName = "--train",
               bool asCopies = false);

struct LoraOptions {
    int64_t rank = 0;
    double alpha = 0;  // PEFT's lora_alpha; the adapter's output is scaled by alpha / rank (0: alpha = rank)
    // Module-path substrings of the linear layers that get adapters; empty: every linear layer of
    // the transformer blocks (modules under a numbered child, "h.3.", "layer.11."), as PEFT's
    // "all-linear" (which leaves the output layer out).
    std::vector<std::string> targets;
    bool qlora = false;  // the base's linear layers in the blocks (adapted or not) and experts in 4-bit NF4
    // PEFT's lora_dropout: each adapter's input goes through a dropout of its own (a one-byte mask and
    // the dropped input saved for backward, per adapted layer); 0: none (PEFT's default).
    double dropout = 0;
    // The adapters are fp32, as PEFT creates them (autocast_adapter_dtype): each adapted layer casts
    // its input to fp32 (the dropout runs there), A and B run under the Trainer's bf16 autocast in a
    // bf16 model (a bf16 copy of their input saved), the sum is cast back to the base output's dtype.
    // false: the adapters are in the model's dtype, as FSDP's or DeepSpeed's bf16 mixed precision
    // runs them: no casts.
    bool fp32Adapters = true;
};

// Bytes per element of a weight in NF4 as bitsandbytes stores it with double quantisation (the
// QLoRA recipe): 4 bits, one 8-bit absmax per 64-element block, one fp32 constant per 256 blocks.
inline constexpr double kNf4BytesPerElement = 0.5 + 1.0 / 64 + 4.0 / (64 * 256);

// The block a module belongs to: its path up to the first numbered child ("transformer.h.3" for
// "transformer.h.3.attn.c_attn"), a block of a ModuleList as FSDP wraps them; "" outside any.
std::string blockOf(const std::string& modulePath);

// The linear layers LoRA adapts under `o`: operations (MatMul or Gemm) whose weight is a
// parameter, in graph order.
std::vector<int> loraTargets(const Graph& g, const LoraOptions& o);

// The graph with PEFT's LoRA: every parameter frozen; beside each target y = x W, the adapter
// y += (dropout(x) A) B * alpha/r (x cast to fp32 first with fp32Adapters, the sum cast back) with
// A [in, r] and B [r, out] trainable (PEFT stores lora_A.weight
// [r, in] and lora_B.weight [out, r]: the same elements), named <module>.lora_A.default.weight and
// <module>.lora_B.default.weight. With qlora the base weights of every linear layer in the blocks
// (the default targets, whatever the targets given: bitsandbytes quantises the model before LoRA
// adapts it) and of every MixtureOfExperts in them are marked nf4. Throws
// ModelError (naming --lora, --lora-targets or --lora-dropout) for a rank below 1, targets that match
// nothing or a dropout outside [0, 1).
Graph withLora(const Graph& g, const LoraOptions& o);

}  // namespace ts
