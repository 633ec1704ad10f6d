// T5 and mT5 (hf_models.cpp's encoder-decoders beside BART): T5ForConditionalGeneration / MT5ForConditionalGeneration
// (and T5Model / MT5Model) as transformers 5 runs them in training with its default sdpa attention.
//
// `shared` (the word embeddings: the encoder's and the decoder's embed_tokens and lm_head, always tied), dropout,
// then blocks of pre-norm sub-layers, each LayerNorm T5's (an RMSNorm without bias): layer.0 SelfAttention (q, k,
// v, o without biases; heads of d_kv features; no 1/sqrt(d) scaling), in the decoder layer.1 EncDecAttention
// (queries from the decoder, keys and values from the encoder's output), and the last layer DenseReluDense (wi,
// or the gated wi_0 and wi_1; dropout; wo); each adds its dropped output to the residual. Each stack's first
// block holds relative_attention_bias, a [buckets, heads] table: looked up over the [T, S] bucket of every
// query-key pair (bidirectional in the encoder, causal in the decoder) it is a [1, heads, T, S] bias every
// layer of the stack adds to its scores; the cross-attention's bias is zeros. sdpa takes it through its mask:
// each attention call makes torch.where(mask, bias, min) (integrations/sdpa_attention.py), a float mask
// [N, heads, T, S] under the padding mask ([1, heads, T, T] under the decoder's causal one) that the
// efficient kernel reads and keeps for backward. final_layer_norm and dropout close each stack; the decoder's
// output is scaled by d_model^-0.5 unless the config unties the embeddings, then lm_head and CrossEntropyLoss
// on the logits as they are.
#include <cmath>
#include <cstdint>
#include <string>

#include "importers/hf_model_parts.h"
#include "zoo/zoo_common.h"

namespace ts::hf {
namespace {

using zoo::forwardConstant;

constexpr double kMaskMin = -3.4028234663852886e38;  // torch.finfo(float32).min, where the mask hides

// One stack's attention mask for sdpa: where(condition, bias, min) with the bias of every head.
int positionBiasMask(ModelBuilder& b, int condition, int bias) {
    return b.op1("Where", {condition, bias, b.constantFloat(kMaskMin)});
}

// T5Attention over `x` (self) or `memory` (cross): q, k, v, o without biases, the bias as sdpa's mask. The
// stack's bias is made by its first attention (`makeBias`, in that module) and reused by the others.
template <typename MakeBias>
int t5Attention(ModelBuilder& b, const Config& c, const std::string& module, int x, int memory, int condition,
                int& bias, MakeBias makeBias) {
    auto s = b.scope(module);
    if (bias < 0) bias = makeBias();
    const int64_t inner = c.heads * c.headDim;
    const int q = toHeads(b, b.linear("q", x, inner, false), c.heads, c.headDim);
    const int k = toHeads(b, b.linear("k", memory, inner, false), c.heads, c.headDim);
    const int v = toHeads(b, b.linear("v", memory, inner, false), c.heads, c.headDim);
    const int context = attention(b, c, q, k, v, positionBiasMask(b, condition, bias), false);
    b.graph().ops[size_t(b.graph().values[size_t(context)].producer)].attrs["scale"] = 1.0;  // T5 does not scale
    return b.linear("o", fromHeads(b, context, inner), c.hidden, false);
}

// layer.N: T5's LayerNorm, the sub-layer, dropout, the residual add.
template <typename SubLayer>
int preNormResidual(ModelBuilder& b, const Config& c, const std::string& layer, int x, SubLayer f) {
    auto s = b.scope(layer);
    const int y = f(rmsNorm(b, c, "layer_norm", x, c.hidden));
    return b.add(x, dropout(b, "dropout", y, c.residualDropout));
}

int denseActDense(ModelBuilder& b, const Config& c, int x) {
    auto s = b.scope("DenseReluDense");
    int h;
    if (c.gatedMlp)
        h = b.mul(activation(b, c, b.linear("wi_0", x, c.intermediate, false), "act"),
                  b.linear("wi_1", x, c.intermediate, false));
    else
        h = activation(b, c, b.linear("wi", x, c.intermediate, false), "act");
    return b.linear("wo", dropout(b, "dropout", h, c.residualDropout), c.hidden, false);
}

// The first block's relative_attention_bias over the stack's [T, S] buckets: [1, heads, T, S].
int relativeBias(ModelBuilder& b, const Config& c, const Dim& t, const Dim& s) {
    const int buckets = forwardConstant(b, b.childPath("relative_position_bucket"), {t, s}, DType::Int64);
    const int values = b.embedding("relative_attention_bias", buckets, c.relativeBuckets, c.heads);  // [T, S, H]
    return b.reshape(b.transpose(values, {2, 0, 1}), {1, c.heads, t, s});
}

// One T5Stack: embed_tokens (the shared matrix), dropout, the blocks, final_layer_norm, dropout. `memory` -1
// for the encoder; the decoder's cross-attention reads it under `memoryCondition`.
int t5Stack(ModelBuilder& b, const Config& c, int ids, int shared, const Dim& length, int condition, int memory,
            int memoryCondition, const Dim& memoryLength) {
    const bool decoder = memory >= 0;
    int x = dropout(b, "dropout", b.embeddingWithWeight("embed_tokens", ids, shared), c.residualDropout);
    int selfBias = -1, crossBias = -1;
    {
        auto blocks = b.scope("block");
        for (int64_t i = 0; i < (decoder ? c.decoderLayers : c.layers); ++i) {
            auto block = b.scope(std::to_string(i));
            auto layers = b.scope("layer");
            x = preNormResidual(b, c, "0", x, [&](int y) {
                return t5Attention(b, c, "SelfAttention", y, y, condition, selfBias,
                                   [&] { return relativeBias(b, c, length, length); });
            });
            if (decoder) {
                x = preNormResidual(b, c, "1", x, [&](int y) {
                    // No relative bias across: zeros, as transformers makes them.
                    return t5Attention(b, c, "EncDecAttention", y, memory, memoryCondition, crossBias, [&] {
                        return forwardConstant(b, b.childPath("position_bias"), {1, c.heads, length, memoryLength},
                                               DType::Float32);
                    });
                });
            }
            x = preNormResidual(b, c, decoder ? "2" : "1", x, [&](int y) { return denseActDense(b, c, y); });
        }
    }
    return dropout(b, "dropout", rmsNorm(b, c, "final_layer_norm", x, c.hidden), c.residualDropout);
}

}  // namespace

Graph buildT5(ModelBuilder& b, const Config& c) {
    const Seq2SeqInputs in = seq2seqInputs(b, c);
    const Dim& target = in.target;
    const int shared = b.parameter("shared", "weight", {c.vocab, c.hidden});
    // The padding mask as sdpa's boolean [N, 1, 1, S]; the decoder's causal [T, T].
    const int padding = b.reshape(b.op1("Cast", {in.attentionMask}, {{"to", int64_t{9}}}),
                                    {Dim::batch(), 1, 1, Dim::seq()});
    const int causal = forwardConstant(b, "causal_mask", {target, target}, DType::Bool);
    int memory;
    {
        auto encoder = b.scope("encoder");
        memory = t5Stack(b, c, in.ids, shared, Dim::seq(), padding, -1, -1, Dim::seq());
    }
    int decoded;
    {
        auto decoder = b.scope("decoder");
        decoded = t5Stack(b, c, in.decoderIds, shared, target, causal, memory, padding, Dim::seq());
    }
    if (c.head == Head::Base) return b.finish({decoded});
    if (c.scaleDecoderOutput) decoded = b.scale(decoded, 1 / std::sqrt(static_cast<double>(c.hidden)));
    return finishTokenLoss(b, c, vocabProjection(b, c, "lm_head", decoded, shared), target);
}

}  // namespace ts::hf
