// The decoder families with LayerNorms (hf_decoders.cpp dispatches to them): gpt2, gpt_neox, phi, mpt and
// starcoder2, each body from the token embedding to its final norm.
#include <cstdint>
#include <vector>

#include "importers/hf_model_parts.h"
#include "zoo/zoo_common.h"

namespace ts::hf {

using zoo::forwardConstant;
using zoo::splitLastAxis;

// ---- gpt2 ----

std::pair<int, int> gpt2Model(ModelBuilder& b, const Config& c, int ids) {
    int positions = forwardConstant(b, b.childPath("position_ids"), {1, Dim::seq()}, DType::Int64);
    int x = reduceOutput(b, c, b.embedding("wte", ids, c.vocab, c.hidden), "wte");
    const int embedWeight = b.graph().findValue(b.childPath("wte") + ".weight");
    x = b.add(x, b.embedding("wpe", positions, c.maxPositions, c.hidden));
    x = dropout(b, "drop", x, c.embeddingDropout);
    {
        auto h = b.scope("h");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto block = b.scope(std::to_string(i));
            int y = b.layerNorm("ln_1", x, c.eps);
            {
                auto attn = b.scope("attn");
                const int64_t width = c.heads * c.headDim;  // the hidden size, or its shard
                // Conv1D layers: weight [in, out], as the MatMul here stores it.
                std::vector<int> qkv =
                    splitLastAxis(b, b.linear("c_attn", reduceGradient(b, c, y), 3 * width), 3, width);
                int context =
                    attention(b, c, toHeads(b, qkv[0], c.heads, c.headDim), toHeads(b, qkv[1], c.heads, c.headDim),
                              toHeads(b, qkv[2], c.heads, c.headDim), -1, true);
                y = reduceOutput(b, c, b.linear("c_proj", fromHeads(b, context, width), c.hidden));
                y = dropout(b, "resid_dropout", y, c.residualDropout);
            }
            x = b.add(y, x);
            y = b.layerNorm("ln_2", x, c.eps);
            {
                auto mlp = b.scope("mlp");
                y = activation(b, c, b.linear("c_fc", reduceGradient(b, c, y), c.intermediate), "act");
                y = dropout(b, "dropout", reduceOutput(b, c, b.linear("c_proj", y, c.hidden)), c.residualDropout);
            }
            x = b.add(y, x);
        }
    }
    return {b.layerNorm("ln_f", x, c.eps), embedWeight};
}

// ---- mpt ----

// MPTModel (MosaicML's remote code and LLM Foundry; transformers' MptModel is the form without biases,
// with ALiBi): wte, the position table wpe (none with ALiBi), emb_drop; per block norm_1, attn (Wqkv:
// q | k | v of the query and key-value heads, clamped at clip_qkv; out_proj), resid_attn_dropout and
// the residual add, norm_2, ffn (up_proj, GELU, down_proj; MPTGLU's gate_proj beside up_proj),
// resid_ffn_dropout and its add; norm_f. Every bias, the LayerNorms' too, unless no_bias. ALiBi adds a
// bias to the scores: inside the flash kernel, and on the eager path one add per score, which the
// causal mask's cost already counts there.
std::pair<int, int> mptModel(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("wte", ids, c.vocab, c.hidden), "wte");
    const int embedWeight = b.graph().findValue(b.childPath("wte") + ".weight");
    if (c.learnedPositions) {
        const int positions = forwardConstant(b, b.childPath("position_ids"), {1, Dim::seq()}, DType::Int64);
        x = b.add(x, b.embedding("wpe", positions, c.maxPositions, c.hidden));
    }
    x = dropout(b, "emb_drop", x, c.embeddingDropout);
    {
        auto blocks = b.scope("blocks");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto block = b.scope(std::to_string(i));
            int y = layerNorm(b, "norm_1", x, c.eps, c.normBias);
            {
                auto attn = b.scope("attn");
                const int64_t qWidth = c.heads * c.headDim, kvWidth = c.kvHeads * c.headDim;
                int qkv = b.linear("Wqkv", reduceGradient(b, c, y), qWidth + 2 * kvWidth, c.qkvBias);
                if (c.clipQkv > 0) qkv = b.op1("Clip", {qkv}, {{"min", -c.clipQkv}, {"max", c.clipQkv}});
                const int sizes = b.constantInts({qWidth, kvWidth, kvWidth}, {Dim(3)});
                std::vector<int> parts = b.op("Split", {qkv, sizes}, {{"axis", int64_t{-1}}}, 3);
                const int context = attention(b, c, toHeads(b, parts[0], c.heads, c.headDim),
                                              toHeads(b, parts[1], c.kvHeads, c.headDim),
                                              toHeads(b, parts[2], c.kvHeads, c.headDim), -1, true);
                y = reduceOutput(b, c, b.linear("out_proj", fromHeads(b, context, qWidth), c.hidden, c.outputBias));
            }
            x = b.add(dropout(b, "resid_attn_dropout", y, c.residualDropout), x);
            y = layerNorm(b, "norm_2", x, c.eps, c.normBias);
            {
                auto ffn = b.scope("ffn");
                const int in = reduceGradient(b, c, y);
                y = activation(b, c, b.linear(c.gatedMlp ? "gate_proj" : "up_proj", in, c.intermediate, c.mlpBias),
                               "act");
                if (c.gatedMlp) y = b.mul(y, b.linear("up_proj", in, c.intermediate, c.mlpBias));
                y = reduceOutput(b, c, b.linear("down_proj", y, c.hidden, c.mlpBias));
            }
            x = b.add(dropout(b, "resid_ffn_dropout", y, c.residualDropout), x);
        }
    }
    return {layerNorm(b, "norm_f", x, c.eps, c.normBias), embedWeight};
}

// ---- starcoder2 ----

// Starcoder2Model: embed_tokens, embedding_dropout; per layer input_layernorm (LayerNorm), self_attn (Llama's
// grouped-query attention with biases where use_bias, a sliding window in every layer where set) and its
// residual_dropout, the residual add, post_attention_layernorm, mlp (c_fc, act, c_proj, residual_dropout),
// the add; norm.
std::pair<int, int> starcoder2Model(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("embed_tokens", ids, c.vocab, c.hidden), "embed_tokens");
    const int embedWeight = b.graph().findValue(b.childPath("embed_tokens") + ".weight");
    x = dropout(b, "embedding_dropout", x, c.embeddingDropout);
    const Rotary r = rotaryTables(b, c, "rotary_emb");
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int y = llamaAttention(b, c, b.layerNorm("input_layernorm", x, c.eps), r, i);
            x = b.add(x, dropout(b, "self_attn.residual_dropout", y, c.residualDropout));
            y = b.layerNorm("post_attention_layernorm", x, c.eps);
            {
                auto mlp = b.scope("mlp");
                y = activation(b, c, b.linear("c_fc", reduceGradient(b, c, y), c.intermediate, c.mlpBias), "act");
                y = dropout(b, "residual_dropout", reduceOutput(b, c, b.linear("c_proj", y, c.hidden, c.mlpBias)),
                            c.residualDropout);
            }
            x = b.add(x, y);
        }
    }
    return {b.layerNorm("norm", x, c.eps), embedWeight};
}

// ---- phi ----

// PhiModel: per layer one LayerNorm feeding the attention (q, k, v and dense with biases, q_layernorm and
// k_layernorm over each head where qk_layernorm, partial rotary) and the MLP (fc1, act, fc2) in parallel,
// both outputs through resid_dropout and added to the residual; final_layernorm.
std::pair<int, int> phiModel(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("embed_tokens", ids, c.vocab, c.hidden), "embed_tokens");
    const int embedWeight = b.graph().findValue(b.childPath("embed_tokens") + ".weight");
    x = dropout(b, "embed_dropout", x, c.embeddingDropout);
    const Rotary r = rotaryTables(b, c, "rotary_emb");
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            const int y = b.layerNorm("input_layernorm", x, c.eps);
            int attended;
            {
                auto attn = b.scope("self_attn");
                const int in = reduceGradient(b, c, y);
                int q = toHeads(b, b.linear("q_proj", in, c.heads * c.headDim, true), c.heads, c.headDim);
                int k = toHeads(b, b.linear("k_proj", in, c.kvHeads * c.headDim, true), c.kvHeads, c.headDim);
                const int v = toHeads(b, b.linear("v_proj", in, c.kvHeads * c.headDim, true), c.kvHeads, c.headDim);
                if (c.qkLayerNorm) {
                    q = b.layerNorm("q_layernorm", q, c.eps);
                    k = b.layerNorm("k_layernorm", k, c.eps);
                }
                const int context = attention(b, c, rotate(b, r, q), rotate(b, r, k), v, -1, true);
                attended =
                    reduceOutput(b, c, b.linear("dense", fromHeads(b, context, c.heads * c.headDim), c.hidden, true));
            }
            attended = dropout(b, "resid_dropout", attended, c.residualDropout);
            int fed;
            {
                auto mlp = b.scope("mlp");
                fed = activation(b, c, b.linear("fc1", reduceGradient(b, c, y), c.intermediate, true), "activation_fn");
                fed = reduceOutput(b, c, b.linear("fc2", fed, c.hidden, true));
            }
            fed = dropout(b, "resid_dropout", fed, c.residualDropout);
            x = b.add(b.add(attended, fed), x);
        }
    }
    return {b.layerNorm("final_layernorm", x, c.eps), embedWeight};
}

// ---- gpt_neox ----

std::pair<int, int> gptNeoXModel(ModelBuilder& b, const Config& c, int ids) {
    int x = reduceOutput(b, c, b.embedding("embed_in", ids, c.vocab, c.hidden), "embed_in");
    const int embedWeight = b.graph().findValue(b.childPath("embed_in") + ".weight");
    x = dropout(b, "emb_dropout", x, c.residualDropout);
    const Rotary r = rotaryTables(b, c, "rotary_emb");
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int attended;
            {
                int y = b.layerNorm("input_layernorm", x, c.eps);
                auto attn = b.scope("attention");
                // query_key_value interleaves per head: [N, T, heads, 3*dim] -> q, k, v of [N, heads, T, dim].
                const int64_t width = c.heads * c.headDim;  // the hidden size, or its shard
                int qkv = b.linear("query_key_value", reduceGradient(b, c, y), 3 * width, c.qkvBias);
                qkv = b.transpose(b.reshape(qkv, {0, 0, c.heads, 3 * c.headDim}), {0, 2, 1, 3});
                std::vector<int> parts = splitLastAxis(b, qkv, 3, c.headDim);
                int context = attention(b, c, rotate(b, r, parts[0]), rotate(b, r, parts[1]), parts[2], -1, true);
                attended = reduceOutput(b, c, b.linear("dense", fromHeads(b, context, width), c.hidden, c.outputBias));
            }
            attended = dropout(b, "post_attention_dropout", attended, c.residualDropout);
            auto mlp = [&](int in) {
                int y = b.layerNorm("post_attention_layernorm", in, c.eps);
                auto s = b.scope("mlp");
                y = activation(b, c, b.linear("dense_h_to_4h", reduceGradient(b, c, y), c.intermediate, c.mlpBias),
                               "act");
                return reduceOutput(b, c, b.linear("dense_4h_to_h", y, c.hidden, c.mlpBias));
            };
            if (c.parallelResidual) {  // x + attn(ln1(x)) + mlp(ln2(x))
                int m = dropout(b, "post_mlp_dropout", mlp(x), c.residualDropout);
                x = b.add(b.add(m, attended), x);
            } else {
                x = b.add(attended, x);
                x = b.add(dropout(b, "post_mlp_dropout", mlp(x), c.residualDropout), x);
            }
        }
    }
    return {b.layerNorm("final_layer_norm", x, c.eps), embedWeight};
}

}  // namespace ts::hf
