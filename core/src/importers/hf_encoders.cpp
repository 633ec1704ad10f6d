// The encoder families of the Hugging Face builders (hf_models.cpp): bert and roberta (masked LM, sequence classification or the
// base model with its pooler) and vit (image classification or the base model).
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

int firstToken(ModelBuilder& b, int x) {
    return b.op1("Gather", {x, b.constantInts({0})}, {{"axis", int64_t{1}}});
}

EncoderOut bertModel(ModelBuilder& b, const Config& c, int ids, int tokenTypes, int attentionMask, bool pooler) {
    EncoderOut out;
    // The extended attention mask: (1 - mask[:, None, None, :]) * the dtype's lowest value, added to the scores.
    int mask = b.op1("Cast", {attentionMask}, {{"to", int64_t{1}}});
    mask = b.reshape(mask, {Dim::batch(), 1, 1, Dim::seq()});
    mask = b.scale(b.op1("Sub", {b.constantFloat(1.0), mask}), -3.4028234663852886e38);
    int x;
    {
        auto e = b.scope("embeddings");
        int positions = forwardConstant(b, b.childPath("position_ids"), {1, Dim::seq()}, DType::Int64);
        x = b.embedding("word_embeddings", ids, c.vocab, c.hidden);
        out.wordEmbeddings = b.graph().findValue(b.childPath("word_embeddings") + ".weight");
        if (c.typeVocab > 0) x = b.add(x, b.embedding("token_type_embeddings", tokenTypes, c.typeVocab, c.hidden));
        x = b.add(x, b.embedding("position_embeddings", positions, c.maxPositions, c.hidden));
        x = dropout(b, "dropout", b.layerNorm("LayerNorm", x, c.eps), c.residualDropout);
    }
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
