// Hugging Face transformer encoders/decoders: BertModel (with pooler), BertForPreTraining,
// BertForQuestionAnswering and GPT2LMHeadModel. Module paths and parameter names follow their
// state_dicts ("encoder.layer.3.attention.self.query", "bert.encoder.layer.3..." under a task head,
// "transformer.h.0.attn.c_attn"); dropout is present as in training mode.
#include <string>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

struct BertConfig {
    int64_t hidden, layers, heads, intermediate;
    int64_t vocab = 30522, maxPositions = 512, typeVocab = 2;
    double dropout = 0.1, eps = 1e-12;
    std::string attention = "efficient";  // transformers' sdpa with a padding mask: memory-efficient
};

int bertEmbeddings(ModelBuilder& b, const BertConfig& c, int ids, int tokenTypes) {
    auto s = b.scope("embeddings");
    int positions = forwardConstant(b, "embeddings.position_ids", {1, Dim::seq()}, DType::Int64);
    int x = b.embedding("word_embeddings", ids, c.vocab, c.hidden);
    x = b.add(x, b.embedding("token_type_embeddings", tokenTypes, c.typeVocab, c.hidden));
    x = b.add(x, b.embedding("position_embeddings", positions, c.maxPositions, c.hidden));
    return b.dropout("dropout", b.layerNorm("LayerNorm", x, c.eps), c.dropout);
}

// HF's extended attention mask: (1 - mask[:, None, None, :]) * large negative, added to the scores.
int bertAdditiveMask(ModelBuilder& b, int attentionMask) {
    int m = b.op1("Cast", {attentionMask}, {{"to", int64_t{1}}});  // ONNX FLOAT
    m = b.reshape(m, {Dim::batch(), 1, 1, Dim::seq()});
    m = b.op1("Sub", {b.constantFloat(1.0), m});
    return b.scale(m, -3.4028234663852886e38);
}

int bertLayer(ModelBuilder& b, const BertConfig& c, int x, int mask) {
    int attended;
    {
        auto attention = b.scope("attention");
        int context;
        {
            auto self = b.scope("self");
            int q = b.linear("query", x, c.hidden);
            int k = b.linear("key", x, c.hidden);
            int v = b.linear("value", x, c.hidden);
            context = attentionOf(b, c.attention, q, k, v, c.heads, mask, false, c.dropout, "dropout");
        }
        auto output = b.scope("output");
        int y = b.dropout("dropout", b.linear("dense", context, c.hidden), c.dropout);
        attended = b.layerNorm("LayerNorm", b.add(y, x), c.eps);
    }
    int h;
    {
        auto intermediate = b.scope("intermediate");
        h = b.gelu(b.linear("dense", attended, c.intermediate), "intermediate_act_fn");
    }
    auto output = b.scope("output");
    int y = b.dropout("dropout", b.linear("dense", h, c.hidden), c.dropout);
    return b.layerNorm("LayerNorm", b.add(y, attended), c.eps);
}

struct BertOutputs {
    int sequence;
    int pooled;  // -1 without the pooler
};

// BertModel in the current module: extended attention mask, embeddings, encoder, optional pooler.
BertOutputs bertModel(ModelBuilder& b, const BertConfig& c, int ids, int tokenTypes, int attentionMask,
                      bool withPooler) {
    int mask = bertAdditiveMask(b, attentionMask);
    int x = bertEmbeddings(b, c, ids, tokenTypes);
    {
        auto encoder = b.scope("encoder");
        auto layerList = b.scope("layer");
        for (int64_t i = 0; i < c.layers; ++i) {
            auto layer = b.scope(std::to_string(i));
            x = bertLayer(b, c, x, mask);
        }
    }
    if (!withPooler) return {x, -1};
    // BertPooler: the first token's hidden state, dense, tanh.
    auto pooler = b.scope("pooler");
    int first = b.op1("Gather", {x, b.constantInts({0})}, {{"axis", int64_t{1}}});
    return {x, b.tanh(b.linear("dense", first, c.hidden), "activation")};
}

// nn.CrossEntropyLoss() as Hugging Face's heads use it: mean over the targets, -100 ignored.
int crossEntropy(ModelBuilder& b, int scores, int targets) {
    return b.op1("SoftmaxCrossEntropyLoss", {scores, targets},
                 {{"reduction", std::string("mean")}, {"ignore_index", int64_t{-100}}});
}

// BertForPreTraining: BertModel as "bert", BertPreTrainingHeads as "cls", and its loss (masked-LM
// cross entropy plus next-sentence prediction). Outputs: loss, prediction_logits [N, S, vocab] (or
// [N, masked, vocab]), seq_relationship_logits [N, 2]. With `masked` > 0 the masked-LM head runs
// only on that many positions per sequence, as NVIDIA's pre-training gathers the masked tokens
// (max_predictions_per_seq) before it; 0: every position, as Hugging Face's model does.
Graph bertForPreTraining(ModelBuilder& b, const BertConfig& c, int ids, int tokenTypes, int attentionMask,
                         int64_t masked) {
    BertOutputs body;
    {
        auto bert = b.scope("bert");
        body = bertModel(b, c, ids, tokenTypes, attentionMask, true);
    }
    if (masked > 0) body.sequence = sliceAxis(b, body.sequence, 1, 0, masked, "cls.predictions");
    const int wordEmbeddings = b.graph().findValue("bert.embeddings.word_embeddings.weight");
    int predictionScores;
    int seqRelationship;
    {
        auto cls = b.scope("cls");
        {
            auto predictions = b.scope("predictions");
            int h;
            {
                auto transform = b.scope("transform");
                h = b.gelu(b.linear("dense", body.sequence, c.hidden), "transform_act_fn");
                h = b.layerNorm("LayerNorm", h, c.eps);
            }
            // The decoder is tied to the word embeddings (no weight of its own); its bias is
            // cls.predictions.bias.
            int bias = b.parameter("", "bias", {c.vocab});
            int logits = b.matmul(h, b.transpose(wordEmbeddings, {1, 0}, "decoder"), "decoder");
            predictionScores = b.add(logits, bias, "decoder");
        }
        seqRelationship = b.linear("seq_relationship", body.pooled, 2);
    }
    int labels = b.input("labels", {Dim::batch(), masked > 0 ? Dim(masked) : Dim::seq()}, DType::Int64);
    int nextSentenceLabel = b.input("next_sentence_label", {Dim::batch()}, DType::Int64);
    int maskedLmLoss = crossEntropy(b, b.reshape(predictionScores, {-1, c.vocab}), b.reshape(labels, {-1}));
    int nextSentenceLoss = crossEntropy(b, seqRelationship, nextSentenceLabel);
    return b.finish({b.add(maskedLmLoss, nextSentenceLoss), predictionScores, seqRelationship});
}

// BertForQuestionAnswering: BertModel without pooler as "bert", qa_outputs (H -> 2) on every token,
// and the loss (mean of the start and end cross entropies over the sequence positions). Outputs:
// loss, start_logits [N, S], end_logits [N, S].
Graph bertForQuestionAnswering(ModelBuilder& b, const BertConfig& c, int ids, int tokenTypes, int attentionMask) {
    BertOutputs body;
    {
        auto bert = b.scope("bert");
        body = bertModel(b, c, ids, tokenTypes, attentionMask, false);
    }
    int logits = b.linear("qa_outputs", body.sequence, 2);
    std::vector<int> startEnd = splitLastAxis(b, logits, 2, 1);
    int lastAxis = b.constantInts({-1}, {Dim(1)});
    int startLogits = b.op1("Squeeze", {startEnd[0], lastAxis});
    int endLogits = b.op1("Squeeze", {startEnd[1], lastAxis});
    int startPositions = b.input("start_positions", {Dim::batch()}, DType::Int64);
    int endPositions = b.input("end_positions", {Dim::batch()}, DType::Int64);
    int loss = b.add(crossEntropy(b, startLogits, startPositions), crossEntropy(b, endLogits, endPositions));
    return b.finish({b.scale(loss, 0.5), startLogits, endLogits});
}

}  // namespace

Graph buildBert(const ZooArgs& a, bool large) {
    BertConfig c = large ? BertConfig{1024, 24, 16, 4096} : BertConfig{768, 12, 12, 3072};
    c.vocab = a.integer("vocab", 2, 1'000'000);
    c.attention = a.choice("attention", kAttentionBackends);
    const std::string head = a.choice("head", {"none", "pretraining", "squad"});
    const int64_t seq = a.integer("seq", 1, c.maxPositions);
    const int64_t masked = a.integer("masked", 0, seq);
    if (masked > 0 && head != "pretraining") a.fail("option 'masked' applies to head=pretraining only");
    ModelBuilder b(a.model(), SymbolDefaults{1, seq});
    int ids = b.input("input_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    int tokenTypes = b.input("token_type_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    int attentionMask = b.input("attention_mask", {Dim::batch(), Dim::seq()}, DType::Int64);
    if (head == "pretraining") return bertForPreTraining(b, c, ids, tokenTypes, attentionMask, masked);
    if (head == "squad") return bertForQuestionAnswering(b, c, ids, tokenTypes, attentionMask);
    BertOutputs out = bertModel(b, c, ids, tokenTypes, attentionMask, true);
    return b.finish({out.sequence, out.pooled});
}

namespace {

struct Gpt2Config {
    int64_t embed, layers, heads;
    int64_t vocab = 50257, maxPositions = 1024;
    double dropout = 0.1, eps = 1e-5;
    std::string attention = "flash";  // transformers' sdpa, causal without a padding mask: flash
};

int gpt2Block(ModelBuilder& b, const Gpt2Config& c, int x, int causalMask) {
    int y = b.layerNorm("ln_1", x, c.eps);
    {
        auto attn = b.scope("attn");
        std::vector<int> qkv = splitLastAxis(b, b.linear("c_attn", y, 3 * c.embed), 3, c.embed);
        int context =
            attentionOf(b, c.attention, qkv[0], qkv[1], qkv[2], c.heads, causalMask, true, c.dropout, "attn_dropout");
        y = b.dropout("resid_dropout", b.linear("c_proj", context, c.embed), c.dropout);
    }
    int attended = b.add(y, x);  // the residual belongs to the block
    int h = b.layerNorm("ln_2", attended, c.eps);
    {
        auto mlp = b.scope("mlp");
        h = b.op1("Gelu", {b.linear("c_fc", h, 4 * c.embed)}, {{"approximate", std::string("tanh")}}, "act");
        h = b.dropout("dropout", b.linear("c_proj", h, c.embed), c.dropout);
    }
    return b.add(h, attended);
}

}  // namespace

Graph buildGpt2(const ZooArgs& a, bool large) {
    Gpt2Config c = large ? Gpt2Config{1280, 36, 20} : Gpt2Config{768, 12, 12};
    c.attention = a.choice("attention", kAttentionBackends);
    const int64_t seq = a.integer("seq", 1, c.maxPositions);
    ModelBuilder b(a.model(), SymbolDefaults{1, seq});
    int ids = b.input("input_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    int wte;
    int x;
    {
        auto transformer = b.scope("transformer");
        int positions = forwardConstant(b, "transformer.position_ids", {1, Dim::seq()}, DType::Int64);
        // Eager attention's additive causal mask (0 on and below the diagonal, -inf above), built in
        // forward(); scaled_dot_product_attention's kernels apply the causal mask themselves.
        int causalMask = c.attention != "math" ? -1
                                               : forwardConstant(b, "transformer.causal_mask",
                                                                 {1, 1, Dim::seq(), Dim::seq()}, DType::Float32);
        x = b.embedding("wte", ids, c.vocab, c.embed);
        wte = b.graph().findValue("transformer.wte.weight");
        x = b.add(x, b.embedding("wpe", positions, c.maxPositions, c.embed));
        x = b.dropout("drop", x, c.dropout);
        {
            auto h = b.scope("h");
            for (int64_t i = 0; i < c.layers; ++i) {
                auto block = b.scope(std::to_string(i));
                x = gpt2Block(b, c, x, causalMask);
            }
        }
        x = b.layerNorm("ln_f", x, c.eps);
    }
    // lm_head shares the token embedding (tied weights, no bias): logits = x @ wte^T.
    int logits = b.matmul(x, b.transpose(wte, {1, 0}, "lm_head"), "lm_head");
    return b.finish({logits});
}

}  // namespace ts::zoo
