// Transformer-XL as NVIDIA DeepLearningExamples trains it on WikiText-103
// (PyTorch/LanguageModeling/Transformer-XL/pytorch: mem_transformer.py's MemTransformerLM with
// attn_type 0 and post-LN, utils/proj_adaptive_softmax.py; wt103_base.yaml and wt103_large.yaml):
//
//   word_emb  AdaptiveEmbedding(267735 words, cutoffs [19997, 39997, 199997], div_val), * sqrt(d)
//   layers.i  RelPartialLearnableDecoderLayer: dec_attn (qkv_net, r_net, o_net without biases,
//             layer_norm) over [memory + current] keys with relative sinusoidal positions and the
//             shared r_w_bias / r_r_bias, then pos_ff (CoreNet.0, ReLU, CoreNet.3, layer_norm)
//   crit      ProjectedAdaptiveLogSoftmax tied to the embedding weights and projections
//             (tie_projs [False, True, True, True]); forward() returns the per-token loss [S, N]
//
// Reference counts (constructors rebuilt in PyTorch, see tests/unit/test_zoo.cpp): base
// 191,950,298, large 285,167,482. Memory: one input per layer, the previous segment's hidden
// states [mem, N, d] (no gradient), concatenated before the current segment as the reference does.
//
// The adaptive softmax is data-dependent: the head (shortlist and cluster logits) runs on every
// token, each tail cluster only on the tokens whose targets fall in it, which a static graph cannot
// select. Instead every token runs a share_i slice of tail cluster i's words, share_i being the
// cluster's share of tokens under Zipf's law (s = 1) over the vocabulary (5.3%, 12.3%, 2.2%): the
// same FLOPs, logits and softmax sizes as share_i of the tokens running the whole cluster, and the
// work follows the sequence length. Each slice's width is rounded to keep its cluster's alignment. With div_val > 1 the
// reference embeds each token in its own cluster only; here every cluster embeds and projects every token, and the sum
// stands for the assembled embedding (the extra tail projections are about 0.2% of the FLOPs).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

struct TxlConfig {
    int64_t layers, model, heads, headDim, inner, divVal;
    double dropout, dropatt;
};

constexpr int64_t kTokens = 267735;  // WikiText-103 word vocabulary (n_token)
// Cluster boundaries: the cutoffs plus n_token, after a leading 0 (cutoff_ends).
constexpr int64_t kClusterEnds[] = {0, 19997, 39997, 199997, kTokens};
constexpr int64_t kClusters = 4;
constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

int64_t clusterSize(int64_t i) {
    return kClusterEnds[i + 1] - kClusterEnds[i];
}

// Embedding width of cluster i: d_embed // div_val**i.
int64_t clusterDim(const TxlConfig& c, int64_t i) {
    int64_t dim = c.model;
    for (int64_t k = 0; k < i; ++k) dim /= c.divVal;
    return dim;
}

// Share of tokens with frequency rank in [lo, hi) when word frequencies follow Zipf's law (s = 1).
double zipfShare(int64_t lo, int64_t hi) {
    auto harmonic = [](int64_t n) {
        return n <= 0 ? 0.0 : std::log(double(n)) + 0.5772156649015329 + 1.0 / (2.0 * double(n));
    };
    return (harmonic(hi) - harmonic(lo)) / harmonic(kTokens);
}

// word_emb: the scaled sum of every cluster's (projected) embedding; see the header comment.
int adaptiveEmbedding(ModelBuilder& b, const TxlConfig& c, int data) {
    auto s = b.scope("word_emb");
    int embed = -1;
    if (c.divVal == 1) {
        embed = b.embedding("emb_layers.0", data, kTokens, c.model);  // d_proj == d_embed: no projection
    } else {
        for (int64_t i = 0; i < kClusters; ++i) {
            const int64_t dim = clusterDim(c, i);
            int e = b.embedding("emb_layers." + std::to_string(i), data, clusterSize(i), dim);
            // F.linear(emb_i, emb_projs[i]) with emb_projs[i] of shape [d_proj, d_emb_i].
            int proj = b.parameter("emb_projs", std::to_string(i), {c.model, dim});
            e = b.matmul(e, b.transpose(proj, {1, 0}, "emb_projs"), "emb_projs");
            embed = embed < 0 ? e : b.add(embed, e);
        }
    }
    return b.scale(embed, std::sqrt(double(c.model)));
}

// RelMultiHeadAttn._rel_shift: prepend a zero column, view [N, h, K+1, S], drop the first row and
// view back as [N, h, S, K].
int relShift(ModelBuilder& b, int x, int64_t heads, const Dim& klen) {
    int zeroPad = forwardConstant(b, b.childPath("zero_pad"), {Dim::batch(), heads, Dim::seq(), 1}, DType::Float32);
    int padded = b.reshape(b.concat({zeroPad, x}, 3), {0, 0, klen + Dim(1), Dim::seq()});
    return b.reshape(sliceAxis(b, padded, 2, 1, kToEnd), {0, 0, Dim::seq(), klen});
}

// RelPartialLearnableMultiHeadAttn (post-LN) on w [S, N, d]; r [K, 1, d] relative positions,
// mems [mem, N, d] or -1.
int relPartialLearnableAttn(ModelBuilder& b, const TxlConfig& c, int w, int r, int rWBias, int rRBias, int mask,
                            int mems, int64_t mem) {
    auto s = b.scope("dec_attn");
    const int64_t width = c.heads * c.headDim;
    const Dim klen = Dim(mem) + Dim::seq();
    int cat = mems >= 0 ? b.concat({mems, w}, 0) : w;
    std::vector<int> qkv = splitLastAxis(b, b.linear("qkv_net", cat, 3 * width, false), 3, width);
    int rHeadK = b.reshape(b.linear("r_net", r, width, false), {-1, c.heads, c.headDim});  // [K, h, d]
    int q = mems >= 0 ? sliceAxis(b, qkv[0], 0, mem, kToEnd) : qkv[0];                     // w_head_q[-qlen:]
    q = b.reshape(q, {0, 0, c.heads, c.headDim});                                          // [S, N, h, d]
    int k = b.reshape(qkv[1], {0, 0, c.heads, c.headDim});                                 // [K, N, h, d]
    int v = b.reshape(qkv[2], {0, 0, c.heads, c.headDim});
    int ac = b.op1("Einsum", {b.add(q, rWBias), k}, {{"equation", std::string("ibnd,jbnd->bnij")}});
    int bd = b.op1("Einsum", {b.add(q, rRBias), rHeadK}, {{"equation", std::string("ibnd,jnd->bnij")}});
    int score = b.scale(b.add(ac, relShift(b, bd, c.heads, klen)), 1.0 / std::sqrt(double(c.headDim)));
    int prob = b.softmax(b.add(score, mask), 3);  // masked_fill_(-inf) above the shifted diagonal
    if (c.dropatt > 0) prob = b.dropout("dropatt", prob, c.dropatt);
    int vec = b.op1("Einsum", {prob, v}, {{"equation", std::string("bnij,jbnd->ibnd")}});
    int out = b.linear("o_net", b.reshape(vec, {0, 0, width}), c.model, false);
    out = b.dropout("drop", out, c.dropout);
    return b.layerNorm("layer_norm", b.add(w, out));
}

// PositionwiseFF (post-LN): CoreNet = Linear, ReLU, Dropout, Linear, Dropout.
int positionwiseFF(ModelBuilder& b, const TxlConfig& c, int x) {
    auto s = b.scope("pos_ff");
    int h;
    {
        auto coreNet = b.scope("CoreNet");
        h = b.dropout("2", b.relu(b.linear("0", x, c.inner), "1"), c.dropout);
        h = b.dropout("4", b.linear("3", h, c.model), c.dropout);
    }
    return b.layerNorm("layer_norm", b.add(x, h));
}

// ProjectedAdaptiveLogSoftmax._compute_logit on rows [B, d]: F.linear(h, weight, bias), or with a
// projection h @ proj @ weight^T + bias (the einsum 'bd,de,ev->bv', contracted left to right).
int computeLogit(ModelBuilder& b, int hidden, int weight, int bias, int proj) {
    if (proj >= 0) hidden = b.matmul(hidden, proj);
    return b.op1("Gemm", {hidden, weight, bias}, {{"transB", int64_t{1}}});
}

// crit on hidden [S, N, d] and target [S, N]: the per-token loss [S, N] that forward() returns, the
// head's plus each tail cluster's (see the header comment).
int adaptiveLogSoftmax(ModelBuilder& b, const TxlConfig& c, int hidden, int target) {
    const Graph& g = b.graph();
    auto s = b.scope("crit");
    int clusterWeight = b.parameter("", "cluster_weight", {kClusters - 1, c.model});
    int clusterBias = b.parameter("", "cluster_bias", {kClusters - 1});
    // Tied weights and projections; with div_val 1 one weight and one bias are sliced per cluster.
    // The first `words` rows of cluster i's weight and bias:
    int sharedBias = c.divVal == 1 ? b.parameter("out_layers_biases", "0", {kTokens}) : -1;
    auto weightOf = [&](int64_t i, int64_t words) {
        if (c.divVal == 1)
            return sliceAxis(b, g.findValue("word_emb.emb_layers.0.weight"), 0, kClusterEnds[i],
                             kClusterEnds[i] + words);
        int weight = g.findValue("word_emb.emb_layers." + std::to_string(i) + ".weight");
        return words == clusterSize(i) ? weight : sliceAxis(b, weight, 0, 0, words);
    };
    auto biasOf = [&](int64_t i, int64_t words) {
        if (c.divVal == 1) return sliceAxis(b, sharedBias, 0, kClusterEnds[i], kClusterEnds[i] + words);
        int bias = b.parameter("out_layers_biases", std::to_string(i), {clusterSize(i)});
        return words == clusterSize(i) ? bias : sliceAxis(b, bias, 0, 0, words);
    };
    auto projOf = [&](int64_t i) {
        if (c.divVal == 1) return -1;                                          // d_proj == d_embed
        if (i == 0) return b.parameter("out_projs", "0", {c.model, c.model});  // tie_projs[0] is False
        return g.findValue("word_emb.emb_projs." + std::to_string(i));
    };
    auto nll = [&](int logits, int targets) {
        int logprob = b.op1("LogSoftmax", {logits}, {{"axis", int64_t{1}}});
        return b.op1("NegativeLogLikelihoodLoss", {logprob, targets}, {{"reduction", std::string("none")}});
    };

    int flatHidden = b.reshape(hidden, {-1, c.model});  // pred_hid.view(-1, d)
    int flatTarget = b.reshape(target, {-1});
    int headWeight = b.concat({weightOf(0, clusterSize(0)), clusterWeight}, 0);
    int headBias = b.concat({biasOf(0, clusterSize(0)), clusterBias}, 0);
    int loss = nll(computeLogit(b, flatHidden, headWeight, headBias, projOf(0)), flatTarget);
    for (int64_t i = 1; i < kClusters; ++i) {
        // A tail token's log-probability adds the tail's to the head's cluster column.
        const double share = zipfShare(kClusterEnds[i], kClusterEnds[i + 1]);
        // The slice keeps the alignment of the cluster's own width (the power of two up to 8 dividing
        // it: 20,000 and 160,000 by 8, 67,738 by 2), so a check of GEMM widths sees the reference's.
        int64_t align = 1;
        while (align < 8 && clusterSize(i) % (align * 2) == 0) align *= 2;
        const int64_t words =
            align * std::max<int64_t>(1, std::llround(share * double(clusterSize(i)) / double(align)));
        int tailLogit = computeLogit(b, flatHidden, weightOf(i, words), biasOf(i, words), projOf(i));
        loss = b.add(loss, nll(tailLogit, flatTarget));
    }
    return b.reshape(loss, {Dim::seq(), -1});  // loss.view(tgt_len, -1)
}

}  // namespace

Graph buildTransformerXl(const ZooArgs& a, bool large) {
    // wt103_large.yaml / wt103_base.yaml: n_layer, d_model, n_head, d_head, d_inner, div_val, dropout, dropatt.
    const TxlConfig c =
        large ? TxlConfig{18, 1024, 16, 64, 4096, 4, 0.2, 0.2} : TxlConfig{16, 512, 8, 64, 2048, 1, 0.1, 0.0};
    const int64_t seq = a.integer("seq", 1, 2048);
    const int64_t mem = a.integer("mem", 0, 2048);
    ModelBuilder b(a.model(), SymbolDefaults{1, seq});
    int data = b.input("data", {Dim::seq(), Dim::batch()}, DType::Int64);
    int target = b.input("target", {Dim::seq(), Dim::batch()}, DType::Int64);
    std::vector<int> mems;
    if (mem > 0)
        for (int64_t i = 0; i < c.layers; ++i)
            mems.push_back(b.input("mems." + std::to_string(i), {mem, Dim::batch(), c.model}));
    const Dim klen = Dim(mem) + Dim::seq();
    int wordEmb = adaptiveEmbedding(b, c, data);
    // Built in forward(): the causal mask triu(ones(S, K), 1 + mem), applied as -inf, and the
    // sinusoids of the relative positions K-1 .. 0 from pos_emb.inv_freq.
    int attnMask = forwardConstant(b, "dec_attn_mask", {Dim::seq(), klen}, DType::Float32);
    int posEmb = forwardConstant(b, "pos_emb", {klen, 1, c.model}, DType::Float32);
    int rWBias = b.parameter("", "r_w_bias", {c.heads, c.headDim});
    int rRBias = b.parameter("", "r_r_bias", {c.heads, c.headDim});
    int x = b.dropout("drop", wordEmb, c.dropout);
    posEmb = b.dropout("drop", posEmb, c.dropout);
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int memory = mems.empty() ? -1 : mems[size_t(i)];
            x = relPartialLearnableAttn(b, c, x, posEmb, rWBias, rRBias, attnMask, memory, mem);
            x = positionwiseFF(b, c, x);
        }
    }
    x = b.dropout("drop", x, c.dropout);
    // pred_hid = hidden[-tgt_len:] is the whole segment: data and target have the same length.
    return b.finish({adaptiveLogSoftmax(b, c, x, target)});
}

}  // namespace ts::zoo
