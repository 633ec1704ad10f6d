// The encoder-decoder families of the Hugging Face builders (hf_models.cpp): bart and mbart, as transformers 5's
// BartForConditionalGeneration / MBartForConditionalGeneration (and BartModel / MBartModel) run them in training.
//
// Per stack: the word embeddings (model.shared, which the encoder's and the decoder's embed_tokens and lm_head
// share when tie_word_embeddings; each its own weight otherwise), times sqrt(d_model) if scale_embedding, plus
// learned positions (embed_positions: max_position_embeddings + 2 rows, offset 2), layernorm_embedding, dropout.
// Encoder layer: self_attn (q_proj, k_proj, v_proj, out_proj, all with biases) over the padding mask, dropout,
// residual add, self_attn_layer_norm; fc1, activation, activation dropout, fc2, dropout, add, final_layer_norm.
// Decoder layer: causal self_attn, then encoder_attn (queries from the decoder, keys and values from the
// encoder's output, the encoder's padding mask) with encoder_attn_layer_norm, then the MLP as the encoder's.
// BART normalises after each residual add; mBART before each sub-layer, with a LayerNorm (layer_norm) after
// each stack. The head: lm_head, plus the final_logits_bias buffer, and CrossEntropyLoss on the logits as
// they are (no fp32 copy). The decoder's length is target_seq (the source's by default); with labels,
// transformers makes decoder_input_ids by shifting them: an input of the same shape here.
#include <cmath>
#include <cstdint>
#include <string>

#include "importers/hf_model_parts.h"
#include "zoo/zoo_common.h"

namespace ts::hf {
namespace {

// The sizes of one stack: the decoder's differ from the encoder's in depth, heads and MLP width.
Config decoderSizes(const Config& c) {
    Config d = c;
    d.layers = c.decoderLayers;
    d.heads = d.kvHeads = c.decoderHeads;
    d.headDim = c.hidden / c.decoderHeads;
    d.intermediate = c.decoderIntermediate;
    return d;
}

int projectHeads(ModelBuilder& b, const Config& c, const std::string& module, int x) {
    return toHeads(b, b.linear(module, x, c.hidden), c.heads, c.headDim);
}

// BartAttention: queries from `x`, keys and values from `memory` (x itself in self-attention).
int bartAttention(ModelBuilder& b, const Config& c, const std::string& module, int x, int memory, int mask,
                  bool causal) {
    auto s = b.scope(module);
    const int q = projectHeads(b, c, "q_proj", x);
    const int k = projectHeads(b, c, "k_proj", memory);
    const int v = projectHeads(b, c, "v_proj", memory);
    return b.linear("out_proj", fromHeads(b, attention(b, c, q, k, v, mask, causal), c.hidden), c.hidden);
}

// One sub-layer with its residual: post-norm (BART) LayerNorm(x + dropout(f(x))), pre-norm (mBART)
// x + dropout(f(LayerNorm(x))).
template <typename SubLayer>
int residual(ModelBuilder& b, const Config& c, const std::string& norm, int x, SubLayer f) {
    if (c.preNorm) return b.add(x, dropout(b, "dropout", f(b.layerNorm(norm, x, c.eps)), c.residualDropout));
    return b.layerNorm(norm, b.add(x, dropout(b, "dropout", f(x), c.residualDropout)), c.eps);
}

int feedForward(ModelBuilder& b, const Config& c, int x) {
    int h = activation(b, c, b.linear("fc1", x, c.intermediate), "activation_fn");
    h = dropout(b, "activation_dropout", h, c.activationDropout);
    return b.linear("fc2", h, c.hidden);
}

// Word embeddings (`wordWeight`: the shared matrix, or -1 for a weight of the stack's own) plus positions,
// layernorm_embedding and dropout, inside the stack's scope.
int embed(ModelBuilder& b, const Config& c, int ids, int wordWeight, const Dim& length) {
    int x = wordWeight >= 0 ? b.embeddingWithWeight("embed_tokens", ids, wordWeight)
                            : b.embedding("embed_tokens", ids, c.vocab, c.hidden);
    if (c.scaleEmbedding) x = b.scale(x, std::sqrt(static_cast<double>(c.hidden)), "embed_tokens");
    const int positions = zoo::forwardConstant(b, b.childPath("embed_positions.position_ids"), {1, length},
                                               DType::Int64);
    x = b.add(x, b.embedding("embed_positions", positions, c.maxPositions + 2, c.hidden));
    return dropout(b, "dropout", b.layerNorm("layernorm_embedding", x, c.eps), c.residualDropout);
}

struct Seq2SeqOut {
    int decoded = -1, shared = -1;
};

Seq2SeqOut seq2seqModel(ModelBuilder& b, const Config& c, const Seq2SeqInputs& in) {
    Seq2SeqOut out;
    if (c.tieEmbeddings) out.shared = b.parameter("shared", "weight", {c.vocab, c.hidden});
    // The encoder's padding mask, added to the scores of its self-attention and of every cross-attention.
    const int mask = extendedMask(b, in.attentionMask);
    int memory;
    {
        auto encoder = b.scope("encoder");
        memory = embed(b, c, in.ids, out.shared, Dim::seq());
        {
            auto layers = b.scope("layers");
            for (int64_t i = 0; i < c.layers; ++i) {
                auto layer = b.scope(std::to_string(i));
                memory = residual(b, c, "self_attn_layer_norm", memory,
                                  [&](int y) { return bartAttention(b, c, "self_attn", y, y, mask, false); });
                memory = residual(b, c, "final_layer_norm", memory, [&](int y) { return feedForward(b, c, y); });
            }
        }
        if (c.preNorm) memory = b.layerNorm("layer_norm", memory, c.eps);
    }
    // The decoder's self-attention is causal without a mask: transformers' sdpa then runs the flash kernel.
    Config d = decoderSizes(c);
    Config self = d;
    if (c.attentionByDefault) self.attentionBackend = "flash";
    auto decoder = b.scope("decoder");
    int x = embed(b, d, in.decoderIds, out.shared, in.target);
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < d.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            x = residual(b, d, "self_attn_layer_norm", x,
                         [&](int y) { return bartAttention(b, self, "self_attn", y, y, -1, true); });
            x = residual(b, d, "encoder_attn_layer_norm", x,
                         [&](int y) { return bartAttention(b, d, "encoder_attn", y, memory, mask, false); });
            x = residual(b, d, "final_layer_norm", x, [&](int y) { return feedForward(b, d, y); });
        }
    }
    if (c.preNorm) x = b.layerNorm("layer_norm", x, c.eps);
    out.decoded = x;
    return out;
}

}  // namespace

Graph buildSeq2Seq(ModelBuilder& b, const Config& c) {
    const Seq2SeqInputs in = seq2seqInputs(b, c);
    if (c.head == Head::Base) return b.finish({seq2seqModel(b, c, in).decoded});
    Seq2SeqOut out;
    {
        auto model = b.scope("model");
        out = seq2seqModel(b, c, in);
    }
    int logits = vocabProjection(b, c, "lm_head", out.decoded, out.shared);
    logits = b.add(logits, b.buffer("", "final_logits_bias", {1, c.vocab}));
    return finishTokenLoss(b, c, logits, in.target);
}

}  // namespace ts::hf
