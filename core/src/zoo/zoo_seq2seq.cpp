// Translation models: the Transformer "big" (Vaswani et al. 2017) and GNMT v2 (Wu et al. 2016 as
// trained in MLPerf / NVIDIA DeepLearningExamples); and BART-large, built by the Hugging Face builder.
#include <cmath>
#include <string>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

// ---------------------------------------------------------------------------------------------
// Transformer big, written as PyTorch's reference would be:
//
//   class TransformerBig(nn.Module):
//       embedding = nn.Embedding(vocab, 1024)                 # shared by source and target
//       positional_encoding = sinusoidal, dropout 0.1          # no parameters
//       transformer = nn.Transformer(1024, 16, 6, 6, 4096, dropout=0.1, batch_first=True)
//       generator: logits = x @ embedding.weight.T             # tied, no bias
//
// Reference parameter count (verified with torch.nn.Transformer in the project's venv:
// nn.Transformer(1024, 16, 6, 6, 4096) has 176,361,472 parameters):
//   encoder layer: 4d^2+4d (attention) + 2df+f+d (feed-forward) + 4d (2 LayerNorms)  = 12,596,224
//   decoder layer: 8d^2+8d (2 attentions) + 2df+f+d + 6d (3 LayerNorms)                = 16,796,672
//   6 of each + final encoder/decoder LayerNorms (4d) = 176,361,472; + vocab*d embedding
//   = 209,129,472 at vocab 32000 (d = 1024, f = 4096).
// ---------------------------------------------------------------------------------------------
constexpr int64_t kModel = 1024, kHeads = 16, kFeedForward = 4096, kLayers = 6;
constexpr double kDropout = 0.1, kEps = 1e-5;

// nn.MultiheadAttention: packed in_proj (stored [in, 3*out] for MatMul, same element count as
// PyTorch's [3*out, in]), attention dropout, out_proj. Cross-attention projects the query and the
// memory with slices of the packed weight, as F.multi_head_attention_forward does.
int multiheadAttention(ModelBuilder& b, const std::string& name, int query, int memory, int mask) {
    auto s = b.scope(name);
    int w = b.parameter("", "in_proj_weight", {kModel, 3 * kModel});
    int bias = b.parameter("", "in_proj_bias", {3 * kModel});
    std::vector<int> qkv;
    if (query == memory) {
        qkv = splitLastAxis(b, b.add(b.matmul(query, w), bias), 3, kModel);
    } else {
        int q = b.add(b.matmul(query, sliceAxis(b, w, 1, 0, kModel)), sliceAxis(b, bias, 0, 0, kModel));
        int kv =
            b.add(b.matmul(memory, sliceAxis(b, w, 1, kModel, 3 * kModel)), sliceAxis(b, bias, 0, kModel, 3 * kModel));
        std::vector<int> parts = splitLastAxis(b, kv, 2, kModel);
        qkv = {q, parts[0], parts[1]};
    }
    int context = scaledDotProductAttention(b, qkv[0], qkv[1], qkv[2], kHeads, mask, kDropout, "");
    return b.linear("out_proj", context, kModel);
}

int feedForward(ModelBuilder& b, int x) {
    int h = b.dropout("dropout", b.relu(b.linear("linear1", x, kFeedForward)), kDropout);
    return b.linear("linear2", h, kModel);
}

// Post-norm layers (norm_first=False), as in the paper.
int encoderLayer(ModelBuilder& b, int x) {
    x = b.layerNorm("norm1", b.add(x, b.dropout("dropout1", multiheadAttention(b, "self_attn", x, x, -1), kDropout)),
                    kEps);
    return b.layerNorm("norm2", b.add(x, b.dropout("dropout2", feedForward(b, x), kDropout)), kEps);
}

int decoderLayer(ModelBuilder& b, int x, int memory, int causalMask) {
    int y = b.dropout("dropout1", multiheadAttention(b, "self_attn", x, x, causalMask), kDropout);
    x = b.layerNorm("norm1", b.add(x, y), kEps);
    y = b.dropout("dropout2", multiheadAttention(b, "multihead_attn", x, memory, -1), kDropout);
    x = b.layerNorm("norm2", b.add(x, y), kEps);
    return b.layerNorm("norm3", b.add(x, b.dropout("dropout3", feedForward(b, x), kDropout)), kEps);
}

}  // namespace

Graph buildTransformerBig(const ZooArgs& a) {
    const int64_t seq = a.integer("seq", 1, 1024);
    const int64_t vocab = a.integer("vocab", 2, 1'000'000);
    ModelBuilder b(a.model(), SymbolDefaults{1, seq});
    int src = b.input("src_tokens", {Dim::batch(), Dim::seq()}, DType::Int64);
    int tgt = b.input("tgt_tokens", {Dim::batch(), Dim::seq()}, DType::Int64);
    int positions = forwardConstant(b, "positional_encoding.pe", {1, Dim::seq(), kModel}, DType::Float32);
    int causalMask = forwardConstant(b, "tgt_mask", {Dim::seq(), Dim::seq()}, DType::Float32);
    int weight = b.parameter("embedding", "weight", {vocab, kModel});
    auto embed = [&](int tokens) {
        int x = b.scale(b.embeddingWithWeight("embedding", tokens, weight), std::sqrt(double(kModel)), "embedding");
        auto s = b.scope("positional_encoding");
        return b.dropout("dropout", b.add(x, positions), kDropout);
    };
    int memory = embed(src);
    int x = embed(tgt);
    {
        auto transformer = b.scope("transformer");
        {
            auto encoder = b.scope("encoder");
            for (int64_t i = 0; i < kLayers; ++i) {
                auto layer = b.scope("layers." + std::to_string(i));
                memory = encoderLayer(b, memory);
            }
            memory = b.layerNorm("norm", memory, kEps);
        }
        auto decoder = b.scope("decoder");
        for (int64_t i = 0; i < kLayers; ++i) {
            auto layer = b.scope("layers." + std::to_string(i));
            x = decoderLayer(b, x, memory, causalMask);
        }
        x = b.layerNorm("norm", x, kEps);
    }
    int logits = b.matmul(x, b.transpose(weight, {1, 0}, "generator"), "generator");
    return b.finish({logits});
}

namespace {

// ---------------------------------------------------------------------------------------------
// GNMT v2 as in NVIDIA DeepLearningExamples (PyTorch/Translation/GNMT, the MLPerf reference):
// hidden H = 1024, vocab V = 32320, dropout 0.2, one embedding shared by encoder and decoder
// (share_embedding=True), batch_first=False.
//   encoder: rnn_layers.0 LSTM(H, H, bidirectional)     2 * (4H*H + 4H*H + 8H) = 16H^2 + 16H
//            rnn_layers.1 LSTM(2H, H)                   4H*2H + 4H*H + 8H      = 12H^2 + 8H
//            rnn_layers.2-3 LSTM(H, H), residual        2 * (8H^2 + 8H)        = 16H^2 + 16H
//   decoder: att_rnn.rnn LSTM(H, H)                                              8H^2 + 8H
//            att_rnn.attn BahdanauAttention(normalize=True): linear_q, linear_k (no bias),
//                         linear_att [H], normalize_scalar [1], normalize_bias [H]  2H^2 + 2H + 1
//            rnn_layers.0-2 LSTM(2H, H), residual from the second on             36H^2 + 24H
//            classifier.classifier Linear(H, V)                                  HV + V
//   embedder nn.Embedding(V, H), shared                                          VH
//   total = 90H^2 + 74H + 1 + 2VH + V = 160,671,297 for H = 1024, V = 32320.
// Source and target lengths are both the symbolic sequence length S.
// ---------------------------------------------------------------------------------------------
constexpr int64_t kHidden = 1024;
constexpr double kGnmtDropout = 0.2;

// Seq-first [S, N, H] in and out; attention computed batch-first as the reference does.
int bahdanauAttention(ModelBuilder& b, int query, int keys) {
    auto s = b.scope("attn");
    int q = b.transpose(query, {1, 0, 2});                                             // [N, T, H]
    int k = b.transpose(keys, {1, 0, 2});                                              // [N, S, H]
    int pq = b.reshape(b.linear("linear_q", q, kHidden, false), {0, 0, 1, kHidden});   // [N, T, 1, H]
    int pk = b.reshape(b.linear("linear_k", k, kHidden, false), {0, 1, -1, kHidden});  // [N, 1, S, H]
    int linearAtt = b.parameter("", "linear_att", {kHidden});
    int normScalar = b.parameter("", "normalize_scalar", {1});
    int normBias = b.parameter("", "normalize_bias", {kHidden});
    int sum = b.tanh(b.add(b.add(pq, pk), normBias));  // [N, T, S, H]
    // Normalized attention vector: linear_att / ||linear_att|| * normalize_scalar.
    int norm = b.op1("ReduceL2", {linearAtt}, {{"keepdims", int64_t{1}}});
    int att = b.mul(b.op1("Div", {linearAtt, norm}), normScalar);
    int scores = b.matmul(sum, att);                   // [N, T, S]
    int context = b.matmul(b.softmax(scores, -1), k);  // [N, T, H]
    return b.transpose(context, {1, 0, 2});
}

// The reference's criterion (seq2seq/train/smoothing.py LabelSmoothing, smoothing 0.1): the
// log-probabilities over the vocabulary in fp32 (log_softmax(..., dtype=float32), the widest tensor
// of the step), the target's (a gather) and their mean over the vocabulary, mixed and summed.
// Labels are the target tokens (the reference shifts them by one: the same shape).
int labelSmoothingLoss(ModelBuilder& b, int logits, int labels, int64_t vocab) {
    constexpr double kSmoothing = 0.1;
    auto s = b.scope("criterion");
    int logprobs = b.op1("LogSoftmax", {b.reshape(logits, {-1, vocab})}, {{"axis", int64_t{-1}}});
    int nll = b.op1("NegativeLogLikelihoodLoss", {logprobs, b.reshape(labels, {-1})},
                    {{"reduction", std::string("none")}});
    int smooth = b.op1("ReduceMean", {logprobs}, {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{0}}});
    int mixed = b.add(b.scale(nll, 1 - kSmoothing), b.scale(smooth, kSmoothing));
    return b.op1("ReduceSum", {mixed}, {{"keepdims", int64_t{0}}});
}

}  // namespace

Graph buildGnmt(const ZooArgs& a) {
    const int64_t seq = a.integer("seq", 1, 1024);
    const int64_t vocab = a.integer("vocab", 2, 1'000'000);
    ModelBuilder b(a.model(), SymbolDefaults{1, seq});
    int src = b.input("src_tokens", {Dim::seq(), Dim::batch()}, DType::Int64);
    int tgt = b.input("tgt_tokens", {Dim::seq(), Dim::batch()}, DType::Int64);
    int context;
    int embedderWeight;
    {
        auto encoder = b.scope("encoder");
        int x = b.dropout("dropout", b.embedding("embedder", src, vocab, kHidden), kGnmtDropout);
        embedderWeight = b.graph().findValue("encoder.embedder.weight");
        x = b.lstm("rnn_layers.0", x, kHidden, 1, true);
        x = b.lstm("rnn_layers.1", b.dropout("dropout", x, kGnmtDropout), kHidden);
        for (int i = 2; i < 4; ++i) {
            int residual = x;
            x = b.lstm("rnn_layers." + std::to_string(i), b.dropout("dropout", x, kGnmtDropout), kHidden);
            x = b.add(x, residual);
        }
        context = x;
    }
    int logits;
    {
        auto decoder = b.scope("decoder");
        int x = b.embeddingWithWeight("embedder", tgt, embedderWeight);
        int attn;
        {
            auto attRnn = b.scope("att_rnn");
            x = b.lstm("rnn", b.dropout("dropout", x, kGnmtDropout), kHidden);
            attn = bahdanauAttention(b, x, context);
        }
        x = b.dropout("dropout", b.concat({x, attn}, 2), kGnmtDropout);
        x = b.lstm("rnn_layers.0", x, kHidden);
        for (int i = 1; i < 3; ++i) {
            int residual = x;
            x = b.dropout("dropout", b.concat({x, attn}, 2), kGnmtDropout);
            x = b.add(b.lstm("rnn_layers." + std::to_string(i), x, kHidden), residual);
        }
        auto classifier = b.scope("classifier");
        logits = b.linear("classifier", x, vocab);
    }
    return b.finish({logits, labelSmoothingLoss(b, logits, tgt, vocab)});
}

// ---------------------------------------------------------------------------------------------
// BART-large (Lewis et al. 2019) as NVIDIA DeepLearningExamples pre-trains it (PyTorch/LanguageModeling/BART:
// configs/config.json, facebook/bart-large's sizes, no activation dropout; the pre-training scripts'
// --dropout 0.1 --attention_dropout 0.1), built by the Hugging Face builder (importers/hf_seq2seq.cpp), so the zoo
// and a user's config.json are one model: 406,291,456 parameters, transformers' own count. NVIDIA's
// modeling code runs the eager attention (bmm, mask add, softmax, bmm): `attention=math`.
// ---------------------------------------------------------------------------------------------
Graph buildBartLarge(const ZooArgs& a) {
    static const char* const kConfig = R"({"model_type": "bart", "architectures": ["BartForConditionalGeneration"],
        "d_model": 1024, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 16,
        "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 50265,
        "max_position_embeddings": 1024, "activation_function": "gelu", "dropout": 0.1, "attention_dropout": 0.1,
        "activation_dropout": 0.0, "scale_embedding": false, "pad_token_id": 1})";
    std::map<std::string, std::string> options{{"seq", std::to_string(a.integer("seq", 1, 1024))},
                                               {"attention", a.choice("attention", kAttentionBackends)}};
    if (const int64_t target = a.integer("target_seq", 0, 1024); target > 0)
        options["target_seq"] = std::to_string(target);
    return importHfConfigText(kConfig, a.source(), options);
}

}  // namespace ts::zoo
