// The encoder families of the Hugging Face builders (hf_models.cpp): bert, roberta (and xlm-roberta), distilbert and
// modernbert (masked LM, sequence classification or the base model, BERT's and RoBERTa's with their pooler) and vit
// (image classification or the base model).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "importers/hf_model_parts.h"
#include "zoo/zoo_common.h"

namespace ts::hf {
namespace {

using zoo::forwardConstant;

// ---- bert, roberta ----

int encoderLayer(ModelBuilder& b, const Config& c, int x, int mask) {
    int attended;
    {
        auto attn = b.scope("attention");
        int context;
        {
            auto self = b.scope("self");
            int q = toHeads(b, b.linear("query", x, c.hidden), c.heads, c.headDim);
            int k = toHeads(b, b.linear("key", x, c.hidden), c.heads, c.headDim);
            int v = toHeads(b, b.linear("value", x, c.hidden), c.heads, c.headDim);
            context = fromHeads(b, attention(b, c, q, k, v, mask, false), c.hidden);
        }
        auto out = b.scope("output");
        int y = dropout(b, "dropout", b.linear("dense", context, c.hidden), c.residualDropout);
        attended = b.layerNorm("LayerNorm", b.add(y, x), c.eps);
    }
    int h;
    {
        auto inter = b.scope("intermediate");
        h = activation(b, c, b.linear("dense", attended, c.intermediate), "intermediate_act_fn");
    }
    auto out = b.scope("output");
    int y = dropout(b, "dropout", b.linear("dense", h, c.hidden), c.residualDropout);
    return b.layerNorm("LayerNorm", b.add(y, attended), c.eps);
}

struct EncoderOut {
    int sequence = -1, pooled = -1, wordEmbeddings = -1;
};

// The body built inside module `name` (the heads' classes hold it as an attribute of that name).
template <typename Body>
EncoderOut inModule(ModelBuilder& b, const std::string& name, Body body) {
    auto s = b.scope(name);
    return body();
}

int firstToken(ModelBuilder& b, int x) {
    return b.op1("Gather", {x, b.constantInts({0})}, {{"axis", int64_t{1}}});
}

// BERT's embeddings module (DistilBERT's too, without token types): word, token-type and position
// embeddings summed, LayerNorm, dropout. Sets out.wordEmbeddings.
int bertEmbeddings(ModelBuilder& b, const Config& c, int ids, int tokenTypes, EncoderOut& out) {
    auto e = b.scope("embeddings");
    int positions = forwardConstant(b, b.childPath("position_ids"), {1, Dim::seq()}, DType::Int64);
    int x = b.embedding("word_embeddings", ids, c.vocab, c.hidden);
    out.wordEmbeddings = b.graph().findValue(b.childPath("word_embeddings") + ".weight");
    if (c.typeVocab > 0) x = b.add(x, b.embedding("token_type_embeddings", tokenTypes, c.typeVocab, c.hidden));
    x = b.add(x, b.embedding("position_embeddings", positions, c.maxPositions, c.hidden));
    return dropout(b, "dropout", b.layerNorm("LayerNorm", x, c.eps), c.residualDropout);
}

EncoderOut bertModel(ModelBuilder& b, const Config& c, int ids, int tokenTypes, int attentionMask, bool pooler) {
    EncoderOut out;
    const int mask = extendedMask(b, attentionMask);
    int x = bertEmbeddings(b, c, ids, tokenTypes, out);
    {
        auto encoder = b.scope("encoder");
        auto list = b.scope("layer");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            x = encoderLayer(b, c, x, mask);
        }
    }
    out.sequence = x;
    if (pooler) {
        auto p = b.scope("pooler");
        out.pooled = b.tanh(b.linear("dense", firstToken(b, x), c.hidden), "activation");
    }
    return out;
}

// ---- distilbert ----

// DistilBertModel: word and position embeddings, LayerNorm, dropout; per layer the attention (q_lin, k_lin,
// v_lin, out_lin; dropout only on the probabilities), sa_layer_norm over it plus its input, the FFN (lin1,
// activation, lin2, dropout) and output_layer_norm over it plus its input. No pooler.
EncoderOut distilbertModel(ModelBuilder& b, const Config& c, int ids, int attentionMask) {
    EncoderOut out;
    const int mask = extendedMask(b, attentionMask);
    int x = bertEmbeddings(b, c, ids, -1, out);  // no token types (typeVocab 0)
    {
        auto transformer = b.scope("transformer");
        auto list = b.scope("layer");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int attended;
            {
                auto attn = b.scope("attention");
                int q = toHeads(b, b.linear("q_lin", x, c.hidden), c.heads, c.headDim);
                int k = toHeads(b, b.linear("k_lin", x, c.hidden), c.heads, c.headDim);
                int v = toHeads(b, b.linear("v_lin", x, c.hidden), c.heads, c.headDim);
                attended = b.linear("out_lin", fromHeads(b, attention(b, c, q, k, v, mask, false), c.hidden), c.hidden);
            }
            attended = b.layerNorm("sa_layer_norm", b.add(attended, x), c.eps);
            int fed;
            {
                auto ffn = b.scope("ffn");
                fed = activation(b, c, b.linear("lin1", attended, c.intermediate), "activation");
                fed = dropout(b, "dropout", b.linear("lin2", fed, c.hidden), c.residualDropout);
            }
            x = b.layerNorm("output_layer_norm", b.add(fed, attended), c.eps);
        }
    }
    out.sequence = x;
    return out;
}

// DistilBERT's heads: the masked LM (vocab_transform, activation, vocab_layer_norm, vocab_projector: the
// word embeddings, tied, with a bias of its own) and the classifier on the first token (pre_classifier,
// ReLU, dropout, classifier).
Graph distilbertHeads(ModelBuilder& b, const Config& c, int ids, int attentionMask) {
    if (c.head == Head::Base) return b.finish({distilbertModel(b, c, ids, attentionMask).sequence});
    const EncoderOut out = inModule(b, "distilbert", [&] { return distilbertModel(b, c, ids, attentionMask); });
    if (c.head == Head::MaskedLm) {
        int h = activation(b, c, b.linear("vocab_transform", out.sequence, c.hidden), "activation");
        h = b.layerNorm("vocab_layer_norm", h, c.eps);
        int logits = vocabProjection(b, c, "vocab_projector", h, out.wordEmbeddings);
        logits = b.add(logits, b.parameter("vocab_projector", "bias", {c.vocab}), "vocab_projector");
        return finishTokenLoss(b, c, logits);
    }
    int h = b.op1("Relu", {b.linear("pre_classifier", firstToken(b, out.sequence), c.hidden)});
    h = dropout(b, "dropout", h, c.classifierDropout);
    return finishClassification(b, c, b.linear("classifier", h, c.numLabels));
}

// ---- modernbert ----

// ModernBertModel: tok_embeddings, a LayerNorm (`norm`) and dropout; per layer attn_norm (none in layer 0),
// the attention (Wqkv: q | k | v, rotary positions over whole heads, the padding mask, and in local
// layers a window of local_attention / 2 keys each side, which sdpa gets as a mask; Wo, out_drop), the
// residual add, mlp_norm, the GLU MLP (Wi to 2 x intermediate, act(input) * gate, drop, Wo) and its add;
// final_norm. LayerNorms without biases unless norm_bias.
EncoderOut modernbertModel(ModelBuilder& b, const Config& c, int ids, int attentionMask) {
    EncoderOut out;
    const int mask = extendedMask(b, attentionMask);
    int x;
    {
        auto e = b.scope("embeddings");
        x = b.embedding("tok_embeddings", ids, c.vocab, c.hidden);
        out.wordEmbeddings = b.graph().findValue(b.childPath("tok_embeddings") + ".weight");
        x = dropout(b, "drop", layerNorm(b, "norm", x, c.eps, c.normBias), c.embeddingDropout);
    }
    // cos and sin of every position, computed once per forward by rotary_emb (a table per layer type, the same
    // sizes).
    const std::string rotary = b.childPath("rotary_emb");
    const int64_t pairs = std::max<int64_t>(1, c.headDim / 2);
    const int cos = forwardConstant(b, rotary + ".cos", {1, Dim::seq(), pairs}, DType::Float32);
    const int sin = forwardConstant(b, rotary + ".sin", {1, Dim::seq(), pairs}, DType::Float32);
    auto rotate = [&](int t) {  // over the head's feature pairs (none in a head of one feature)
        if (c.headDim < 2) return t;
        return b.op1("RotaryEmbedding", {t, cos, sin}, {{"rotary_embedding_dim", c.headDim - c.headDim % 2}});
    };
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            const int normed = i == 0 ? x : layerNorm(b, "attn_norm", x, c.eps, c.normBias);
            int attended;
            {
                auto attn = b.scope("attn");
                std::vector<int> qkv = zoo::splitLastAxis(b, b.linear("Wqkv", normed, 3 * c.hidden, c.qkvBias), 3,
                                                          c.hidden);
                const int q = rotate(toHeads(b, qkv[0], c.heads, c.headDim));
                const int k = rotate(toHeads(b, qkv[1], c.heads, c.headDim));
                const int v = toHeads(b, qkv[2], c.heads, c.headDim);
                const int context = attention(b, c, q, k, v, mask, false);
                if (c.slidingLayer(i)) {
                    Operation& op = b.graph().ops[size_t(b.graph().values[size_t(context)].producer)];
                    op.attrs["window"] = c.slidingWindow;
                    op.attrs["window_as_mask"] = int64_t{1};  // a mask to every kernel here
                }
                attended = b.linear("Wo", fromHeads(b, context, c.hidden), c.hidden, c.outputBias);
                attended = dropout(b, "out_drop", attended, c.attentionDropout);
            }
            x = b.add(x, attended);
            int fed = layerNorm(b, "mlp_norm", x, c.eps, c.normBias);
            {
                auto mlp = b.scope("mlp");
                std::vector<int> parts =
                    zoo::splitLastAxis(b, b.linear("Wi", fed, 2 * c.intermediate, c.mlpBias), 2, c.intermediate);
                fed = dropout(b, "drop", b.mul(activation(b, c, parts[0], "act"), parts[1]), c.residualDropout);
                fed = b.linear("Wo", fed, c.hidden, c.mlpBias);
            }
            x = b.add(x, fed);
        }
    }
    out.sequence = layerNorm(b, "final_norm", x, c.eps, c.normBias);
    return out;
}

// ModernBERT's heads: ModernBertPredictionHead (dense, classifier_activation, norm) then the decoder (the token
// embeddings, tied, with decoder_bias) for the masked LM, or the pooled sequence (the first token, or the
// mean over the unmasked ones) through the head, dropout and the classifier.
Graph modernbertHeads(ModelBuilder& b, const Config& c, int ids, int attentionMask) {
    if (c.head == Head::Base) return b.finish({modernbertModel(b, c, ids, attentionMask).sequence});
    const EncoderOut out = inModule(b, "model", [&] { return modernbertModel(b, c, ids, attentionMask); });
    Config headAct = c;
    headAct.activation = c.headActivation;
    auto predictionHead = [&](int h) {
        auto head = b.scope("head");
        h = activation(b, headAct, b.linear("dense", h, c.hidden, c.headBias), "act");
        return layerNorm(b, "norm", h, c.eps, c.normBias);
    };
    if (c.head == Head::MaskedLm) {
        const int h = predictionHead(out.sequence);
        int logits;
        if (c.tieEmbeddings) {
            logits = vocabProjection(b, c, "decoder", h, out.wordEmbeddings);
            if (c.decoderBias) logits = b.add(logits, b.parameter("decoder", "bias", {c.vocab}), "decoder");
        } else {
            logits = b.linear("decoder", h, c.vocab, c.decoderBias);
        }
        return finishTokenLoss(b, c, logits);
    }
    int pooled;
    if (c.meanPooling) {  // (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        const int m = b.op1("Cast", {attentionMask}, {{"to", int64_t{1}}});
        const int weighted = b.mul(out.sequence, b.reshape(m, {Dim::batch(), Dim::seq(), 1}));
        const int sum = b.op1("ReduceSum", {weighted}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
        const int count = b.op1("ReduceSum", {m}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
        pooled = b.op1("Div", {sum, count});
    } else {
        pooled = firstToken(b, out.sequence);
    }
    const int h = dropout(b, "drop", predictionHead(pooled), c.classifierDropout);
    return finishClassification(b, c, b.linear("classifier", h, c.numLabels));
}

// ---- vit ----

EncoderOut vitModel(ModelBuilder& b, const Config& c, int image, bool pooler) {
    EncoderOut out;
    const int64_t patches = (c.image / c.patch) * (c.image / c.patch);
    int x;
    {
        auto e = b.scope("embeddings");
        int cls = b.parameter("", "cls_token", {1, 1, c.hidden});
        int positions = b.parameter("", "position_embeddings", {1, patches + 1, c.hidden});
        {
            auto pe = b.scope("patch_embeddings");
            x = b.conv2d("projection", image, c.hidden, c.patch, c.patch);
            x = b.transpose(b.reshape(x, {0, c.hidden, patches}), {0, 2, 1});  // flatten(2).transpose(1, 2)
        }
        int tokens = b.op1("Expand", {cls, shapeConstant(b, {Dim::batch(), 1, c.hidden})});
        x = b.add(b.concat({tokens, x}, 1), positions);
        x = dropout(b, "dropout", x, c.residualDropout);
    }
    {
        auto layers = b.scope("layers");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            int y = b.layerNorm("layernorm_before", x, c.eps);
            {
                auto attn = b.scope("attention");
                int q = toHeads(b, b.linear("q_proj", y, c.hidden, c.qkvBias), c.heads, c.headDim);
                int k = toHeads(b, b.linear("k_proj", y, c.hidden, c.qkvBias), c.heads, c.headDim);
                int v = toHeads(b, b.linear("v_proj", y, c.hidden, c.qkvBias), c.heads, c.headDim);
                y = b.linear("o_proj", fromHeads(b, attention(b, c, q, k, v, -1, false), c.hidden), c.hidden);
                y = dropout(b, "dropout", y, c.residualDropout);
            }
            x = b.add(y, x);
            y = b.layerNorm("layernorm_after", x, c.eps);
            {
                auto mlp = b.scope("mlp");
                y = activation(b, c, b.linear("fc1", y, c.intermediate), "act");
                y = dropout(b, "dropout", b.linear("fc2", y, c.hidden), c.residualDropout);
            }
            x = b.add(y, x);
        }
    }
    out.sequence = b.layerNorm("layernorm", x, c.eps);
    if (pooler) {
        auto p = b.scope("pooler");
        out.pooled = b.tanh(b.linear("dense", firstToken(b, out.sequence), c.poolerSize), "activation");
    }
    return out;
}

// The masked-LM decoder: tied, the word embeddings transposed plus the head's "bias"; untied, a Linear
// with its own bias (transformers 5 then also keeps the head's "bias", which the forward never uses and
// which is not counted here).
int mlmDecoder(ModelBuilder& b, const Config& c, int h, int wordEmbeddings) {
    if (!c.tieEmbeddings) return b.linear("decoder", h, c.vocab, true);
    int bias = b.parameter("", "bias", {c.vocab});
    return b.add(vocabProjection(b, c, "decoder", h, wordEmbeddings), bias, "decoder");
}

}  // namespace

Graph buildEncoder(ModelBuilder& b, const Config& c) {
    int ids = b.input("input_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    int tokenTypes = c.typeVocab > 0 ? b.input("token_type_ids", {Dim::batch(), Dim::seq()}, DType::Int64) : -1;
    int attentionMask = b.input("attention_mask", {Dim::batch(), Dim::seq()}, DType::Int64);
    if (c.family == Family::DistilBert) return distilbertHeads(b, c, ids, attentionMask);
    if (c.family == Family::ModernBert) return modernbertHeads(b, c, ids, attentionMask);
    const bool roberta = c.family == Family::Roberta;
    const std::string bodyName = roberta ? "roberta" : "bert";
    if (c.head == Head::Base) {
        EncoderOut out = bertModel(b, c, ids, tokenTypes, attentionMask, true);
        return b.finish({out.sequence, out.pooled});
    }
    // BertForSequenceClassification keeps the pooler; the MLM heads and RoBERTa's classifier do not.
    const bool pooler = !roberta && c.head == Head::SequenceClassification;
    EncoderOut out;
    {
        auto s = b.scope(bodyName);
        out = bertModel(b, c, ids, tokenTypes, attentionMask, pooler);
    }
    if (c.head == Head::MaskedLm) {
        int logits;
        if (roberta) {  // RobertaLMHead: dense, gelu, layer_norm, decoder
            auto head = b.scope("lm_head");
            int h = b.gelu(b.linear("dense", out.sequence, c.hidden), "gelu");
            h = b.layerNorm("layer_norm", h, c.eps);
            logits = mlmDecoder(b, c, h, out.wordEmbeddings);
        } else {  // BertOnlyMLMHead: cls.predictions.transform, decoder, bias
            auto cls = b.scope("cls");
            auto predictions = b.scope("predictions");
            int h;
            {
                auto transform = b.scope("transform");
                h = activation(b, c, b.linear("dense", out.sequence, c.hidden), "transform_act_fn");
                h = b.layerNorm("LayerNorm", h, c.eps);
            }
            logits = mlmDecoder(b, c, h, out.wordEmbeddings);
        }
        return finishTokenLoss(b, c, logits);
    }
    int logits;
    if (roberta) {  // RobertaClassificationHead on the first token: dropout, dense, tanh, dropout, out_proj
        auto head = b.scope("classifier");
        int h = dropout(b, "dropout", firstToken(b, out.sequence), c.classifierDropout);
        h = dropout(b, "dropout", b.tanh(b.linear("dense", h, c.hidden)), c.classifierDropout);
        logits = b.linear("out_proj", h, c.numLabels);
    } else {
        logits = b.linear("classifier", dropout(b, "dropout", out.pooled, c.classifierDropout), c.numLabels);
    }
    return finishClassification(b, c, logits);
}

Graph buildVit(ModelBuilder& b, const Config& c) {
    int image = b.input("pixel_values", {Dim::batch(), c.channels, c.image, c.image});
    if (c.head == Head::Base) {
        EncoderOut out = vitModel(b, c, image, true);
        return b.finish({out.sequence, out.pooled});
    }
    EncoderOut out;
    {
        auto s = b.scope("vit");
        out = vitModel(b, c, image, false);
    }
    return finishClassification(b, c, b.linear("classifier", firstToken(b, out.sequence), c.numLabels));
}


}  // namespace ts::hf
