#pragma once
// Internal: a Hugging Face transformers config.json read into the figures the model builders need
// (hf_config_reader.cpp), and the builders of each family (hf_models.cpp, hf_decoders.cpp,
// hf_encoders.cpp). docs/huggingface.md.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts {
class ModelBuilder;
}

namespace ts::hf {

// A problem with the config or the options; the caller adds the file name.
struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Qwen is Qwen (v1)'s remote code (QWenLMHeadModel, model_type "qwen"), not part of transformers.
// Gemma3 is the text model (model_type "gemma3_text"); the image-text "gemma3" is refused.
// Mpt is MosaicML's MPT as its remote code (MPTForCausalLM) and LLM Foundry build it; transformers' MptModel
// is its form without biases, with ALiBi.
// Olmo3 is OLMo 2 with sliding windows in three layers of four. Glm4 is GLM-4-0414's dense model: four
// RMSNorms a layer (Gemma 2's arrangement), Phi-3's fused gate_up_proj, half of each head rotated.
// Glm4Moe is GLM-4.5's Glm4MoeForCausalLM: Llama's attention (partial rotary) with DeepSeek-V3's experts.
// Olmoe is OLMoE: OLMo 2's whole-projection q and k norms, pre-norm layers and softmax-routed experts.
// Starcoder2 is StarCoder2: LayerNorms, biases everywhere and a plain GELU MLP around Llama's attention.
// Roberta also builds xlm-roberta (XLM-RoBERTa: RoBERTa's modules under other class names).
// Bart, MBart, T5 and MT5 are the encoder-decoder families (hf_seq2seq.cpp, hf_t5.cpp).
enum class Family {
    Llama,
    Granite,
    SmolLM3,
    Mistral,
    Mixtral,
    Qwen,
    Qwen2,
    Qwen2Moe,
    Qwen3,
    Qwen3Moe,
    DeepseekV3,
    Glm4Moe,
    Olmoe,
    GptOss,
    Olmo2,
    Olmo3,
    Glm4,
    Gemma,
    Gemma2,
    Gemma3,
    Phi,
    Phi3,
    Gpt2,
    GptNeoX,
    Mpt,
    Starcoder2,
    Bert,
    Roberta,
    DistilBert,
    ModernBert,
    Vit,
    Bart,
    MBart,
    T5,
    MT5
};
// Seq2SeqLm: an encoder-decoder's language-model head (BartForConditionalGeneration).
enum class Head { CausalLm, MaskedLm, SequenceClassification, ImageClassification, Base, Seq2SeqLm };

struct Config {
    Family family = Family::Llama;
    std::string modelType;     // as written: "llama"
    std::string architecture;  // the class the head follows: "LlamaForCausalLM"
    Head head = Head::Base;

    int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, intermediate = 0;
    int64_t maxPositions = 0;
    double eps = 1e-5;
    bool tieEmbeddings = false;
    bool qkvBias = false, outputBias = false, mlpBias = false;
    bool qkNorm = false;        // qwen3, gemma3: an RMSNorm over each head of q and k, before the rotary embedding
    bool qkNormWhole = false;   // olmo2: an RMSNorm over all of q's and all of k's projection, before the heads
    bool qkLayerNorm = false;   // phi (qk_layernorm): a LayerNorm over each head of q and k, before the rotary
    // Granite's scalars: the embedding scaled, each sub-layer's output scaled before its residual add, the
    // attention scores scaled by attention_multiplier (not head_dim^-0.5), the logits divided (0 or 1: none).
    double embeddingMultiplier = 1, residualMultiplier = 1, attentionMultiplier = 0, logitsScaling = 1;
    // Gemma 2 and 3: queries scaled by query_pre_attn_scalar^-0.5 (0: head_dim's), tanh soft-capping of
    // the attention scores and of the logits (cap * tanh(x / cap); 0: none), and sliding-window
    // attention (each query sees the `slidingWindow` keys up to itself) in the layers `slidingLayers`
    // marks. Mistral's `sliding_window` applies to every layer.
    double queryPreAttnScalar = 0, attentionSoftcap = 0, finalSoftcap = 0;
    // DeepSeek-V3's multi-head latent attention: queries through a rank-`qLoraRank` bottleneck (0: one
    // q_proj), keys and values from a rank-`kvLoraRank` latent; each query and key head is `qkNopeDim`
    // features without position and `qkRopeDim` rotated ones (one rotated key shared by every head),
    // each value head `vHeadDim`.
    int64_t qLoraRank = 0, kvLoraRank = 0, qkNopeDim = 0, qkRopeDim = 0, vHeadDim = 0;
    int64_t slidingWindow = 0;
    std::vector<bool> slidingLayers;
    bool slidingLayer(int64_t layer) const;
    // SmolLM3's NoPE layers: those whose q and k get no rotary embedding (no_rope_layers' zeros).
    std::vector<bool> noRopeLayers;
    bool ropeLayer(int64_t layer) const {
        const auto i = static_cast<size_t>(layer);
        return layer < 0 || i >= noRopeLayers.size() || !noRopeLayers[i];
    }
    // Sparse mixture-of-experts MLPs (mixtral, qwen2_moe, qwen3_moe): `experts` gated MLPs of width
    // `expertInner`, `topK` of them per token, the top-k probabilities renormalised or not. Qwen2-MoE and
    // Qwen3-MoE keep a dense MLP (`intermediate`) in the layers of `mlpOnlyLayers` and those off their
    // `sparseStep`; Qwen2-MoE adds to every sparse block a shared expert (a gated MLP of width
    // `sharedExpertInner` that every token takes, scaled by a sigmoid gate of its own).
    // DeepSeek-V3's shared experts are one ungated MLP of n_shared_experts x moe_intermediate_size, and its
    // first `firstDenseLayers` layers are dense.
    int64_t experts = 0, topK = 0, expertInner = 0, sparseStep = 1, sharedExpertInner = 0, firstDenseLayers = 0;
    bool normTopK = true;
    // GPT-OSS: a learned attention sink per head (one more logit in each softmax), a router and experts
    // with biases, and the experts' clamped SwiGLU ((up + 1) * g * sigmoid(swigluAlpha * g), the gate
    // clamped above at swigluLimit, the up half to +-swigluLimit) over interleaved gate and up features.
    bool attentionSinks = false, expertBias = false;
    double swigluAlpha = 1.702, swigluLimit = 7.0;
    std::vector<int64_t> mlpOnlyLayers;
    bool moeLayer(int64_t layer) const;
    std::string activation;     // TrainScope operator: "Silu", "Gelu", "GeluTanh", "Relu", "Tanh"
    double rotaryFraction = 1;  // part of each head that rotates (gpt_neox rotary_pct, phi3)
    bool parallelResidual = false;  // gpt_neox
    // MPT: a learned position table (learned_pos_emb, unless ALiBi replaces it), ALiBi's bias on the
    // attention scores, the fused q | k | v projection clamped to +-clipQkv (0: not clamped).
    bool learnedPositions = false, alibi = false;
    double clipQkv = 0;  // also OLMoE's clip_qkv: q, k and v each clamped in place
    // The config asks for the eager attention (MPT's attn_impl "torch"): the default backend is then math;
    // for a FlashAttention-1-class kernel (MPT's "triton"): the efficient backend's rate.
    bool eagerAttention = false, tritonAttention = false;
    int64_t typeVocab = 0;          // bert, roberta token types
    int64_t padTokenId = 0;         // roberta positions start after it
    int64_t numLabels = 2;
    int64_t image = 0, patch = 0, channels = 3, poolerSize = 0;  // vit
    double embeddingDropout = 0, attentionDropout = 0, residualDropout = 0, classifierDropout = 0;
    // ModernBERT: LayerNorms without biases (norm_bias), global attention every few layers and a window of
    // localAttention tokens (half on each side) in the others (slidingLayers), the prediction head's
    // activation and bias, the decoder's bias, and the classifier's pooling (the first token, or the mean).
    bool normBias = true, headBias = true, decoderBias = true, meanPooling = false;
    std::string headActivation;
    int64_t localAttention = 0;
    // BART and mBART: the decoder's own depth, heads and MLP width (layers, heads and intermediate are the
    // encoder's), the word embeddings scaled by sqrt(hidden) or not, a LayerNorm before each sub-layer and
    // after each stack (mBART) or after each residual add (BART), the dropout after the MLP's activation.
    int64_t decoderLayers = 0, decoderHeads = 0, decoderIntermediate = 0;
    bool scaleEmbedding = false, preNorm = false;
    double activationDropout = 0;
    // T5 and mT5: heads of d_kv features (heads x d_kv need not be d_model), a learned bias per head over
    // `relativeBuckets` relative-position buckets added to the scores (no 1/sqrt(d) scaling), a gated MLP
    // (feed_forward_proj "gated-*": wi_0, wi_1) or not (wi), and the decoder's output scaled by
    // d_model^-0.5 before the (always tied) lm_head unless the config unties it.
    int64_t relativeBuckets = 0;
    bool gatedMlp = false, scaleDecoderOutput = false;
    // transformers' loss functions upcast the logits (logits.float()); Qwen (v1)'s CrossEntropyLoss takes
    // them in the model's dtype.
    bool lossInFp32 = true;
    bool fusedLoss = false;  // the option loss=fused: a fused cross-entropy kernel (flash-attn's, Liger's)

    // Options from the model spec.
    int64_t seq = 0;  // sequence length shown by default; 0 for vit (fixed by the image)
    // An encoder-decoder's target (decoder) length, the option target_seq; 0: the same as the source (seq),
    // which the sequence-length symbol then scales together.
    int64_t targetSeq = 0;
    int64_t batch = 1;
    std::string attentionBackend;  // "flash", "efficient", "math"
    // No `attention` option: the backend transformers picks. With sdpa a sliding window is a mask once the
    // sequence outgrows it (PyTorch's flash kernel takes none), so those layers run the efficient kernel
    // over every pair; the flash option is flash-attn's kernel, which skips the tiles outside the window.
    bool attentionByDefault = true;
    // The GPUs of one tensor-parallel group: the graph is then one GPU's shard (hf_tensor_parallel.cpp), with
    // heads, MLP and expert widths and the vocabulary divided, and the group's all-reduces in it.
    int64_t tensorParallel = 1;
    // With tensorParallel: Megatron-LM's sequence parallelism (torchtitan's tensor parallelism has it
    // always): the norms, dropouts and residual adds between the groups' layers each run on 1/T of
    // the tokens; the all-reduces become all-gathers and reduce-scatters.
    bool sequenceParallel = false;
    // The GPUs of one expert-parallel group (mixture-of-experts families): each holds experts /
    // expertParallel of every sparse layer's routed experts, and the layer's tokens go to their experts'
    // GPUs and back by two all-to-alls (hf_tensor_parallel.cpp). Its GPUs are data-parallel for the rest.
    int64_t expertParallel = 1;
};
inline constexpr int64_t kMaxTensorParallel = 64;
inline constexpr int64_t kMaxExpertParallel = 64;

// Reads and checks the config (a parsed JSON object as text) and the spec's options
// (seq, target_seq, batch, head, attention, tensor_parallel, sequence_parallel, expert_parallel). Throws
// ConfigError.
Config readConfig(const std::string& text, const std::map<std::string, std::string>& options);

// Builds the model graph. Throws ConfigError or ShapeError.
Graph buildModel(const Config& c);

// ---- tensor parallelism of the builders (hf_tensor_parallel.cpp) ----
// The group's all-reduces (ops/collective.cpp), `x` itself without tensor parallelism:
// reduceGradient before a column-parallel layer (identity forward, the input's gradient summed
// backward: Megatron-LM's f), reduceOutput after a row-parallel layer or a vocabulary-parallel
// embedding (the partial outputs summed forward: its g); with sequence parallelism an all-gather
// and a reduce-scatter instead.
int reduceGradient(ModelBuilder& b, const Config& c, int x, const std::string& module = "all_reduce_grad");
int reduceOutput(ModelBuilder& b, const Config& c, int x, const std::string& module = "all_reduce");
// One GPU's shard of `full` (itself without tensor or expert parallelism; its experts' share is the
// builders', localExperts).
Config tensorParallelShard(const Config& full);
// Expert parallelism's all-to-alls (ops/collective.cpp) around a sparse layer's experts, `x` itself
// without: expertDispatch sends each token's top_k copies to the GPUs of their experts, expertCombine
// brings the experts' outputs back (each the other's transpose in backward).
int expertDispatch(ModelBuilder& b, const Config& c, int x);
int expertCombine(ModelBuilder& b, const Config& c, int x);
// Sequence parallelism: marks the ops that run on 1/shards of the tokens (sequence_shards).
void markSequenceShards(Graph& g, int64_t shards);

const char* familyName(Family f);

}  // namespace ts::hf
