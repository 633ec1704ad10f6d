// The model graphs of Hugging Face transformers families, built from a config (hf_config_reader.cpp).
// Module paths and parameter names follow transformers 5's modules ("model.layers.0.self_attn.q_proj",
// "transformer.h.0.attn.c_attn", "bert.encoder.layer.0.attention.self.query", "vit.layers.0.mlp.fc1"),
// so that parameter counts equal sum(p.numel() for p in model.parameters()). Attention is one
// ScaledDotProductAttention operator (transformers' default "sdpa" implementation) and dropout is
// present as in training wherever the config gives it a probability above zero.
// This file: what the builders share, and the dispatch by family.
#include <cmath>
#include <cstdint>
#include <set>

#include "importers/hf_model_parts.h"

namespace ts::hf {

int dropout(ModelBuilder& b, const std::string& module, int x, double p) {
    return p > 0 ? b.dropout(module, x, p) : x;
}

int activation(ModelBuilder& b, const Config& c, int x, const std::string& module) {
    if (c.activation == "Silu") return b.op1("Silu", {x}, {}, module);
    if (c.activation == "GeluTanh") return b.op1("Gelu", {x}, {{"approximate", std::string("tanh")}}, module);
    if (c.activation == "GeluTanhComposite") {
        // NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), step by step as transformers
        // runs it: pow saves x, tanh its output, the last product both factors.
        const double sqrt2OverPi = std::sqrt(2.0 / 3.14159265358979323846);
        int cube = b.op1("Pow", {x, b.constantFloat(3.0)}, {}, module);
        int inner = b.scale(b.add(x, b.scale(cube, 0.044715, module), module), sqrt2OverPi, module);
        int onePlus = b.add(b.tanh(inner, module), b.constantFloat(1.0), module);
        return b.mul(b.scale(x, 0.5, module), onePlus, module);
    }
    if (c.activation == "Gelu") return b.gelu(x, module);
    if (c.activation == "Relu") return b.relu(x, module);
    return b.tanh(x, module);
}

// [N, T, heads*dim] -> [N, heads, T, dim] and back.
int toHeads(ModelBuilder& b, int x, int64_t heads, int64_t dim) {
    return b.transpose(b.reshape(x, {0, 0, heads, dim}), {0, 2, 1, 3});
}
int fromHeads(ModelBuilder& b, int x, int64_t width) {
    return b.reshape(b.transpose(x, {0, 2, 1, 3}), {0, 0, width});
}

int attention(ModelBuilder& b, const Config& c, int q, int k, int v, int mask, bool causal, int sinks) {
    std::vector<int> in{q, k, v};
    if (mask >= 0 || sinks >= 0) in.push_back(mask);
    if (sinks >= 0) in.push_back(sinks);
    std::map<std::string, Attribute> attrs{{"backend", c.attentionBackend},
                                           {"causal", int64_t{causal ? 1 : 0}},
                                           {"scale", 1.0 / std::sqrt(static_cast<double>(c.headDim))},
                                           {"dropout", c.attentionDropout}};
    // The eager attentions that take the softmax without dtype=float32 (GPT-OSS's with the scores' own).
    static const std::set<Family> modelDtypeSoftmax = {Family::GptOss,     Family::Gpt2, Family::Bert,
                                                       Family::Roberta,    Family::Bart, Family::MBart,
                                                       Family::DistilBert, Family::T5,   Family::MT5};
    if (modelDtypeSoftmax.count(c.family)) attrs["probs_dtype"] = std::string("model");
    return b.op1("ScaledDotProductAttention", in, attrs);
}

int layerNorm(ModelBuilder& b, const std::string& module, int x, double eps, bool bias) {
    if (bias) return b.layerNorm(module, x, eps);
    const int64_t features = b.graph().values[size_t(x)].shape.back().constant();
    return b.op1("LayerNormalization", {x, b.parameter(module, "weight", {features})},
                 {{"axis", int64_t{-1}}, {"epsilon", eps}}, module);
}

int shapeConstant(ModelBuilder& b, const Shape& shape) {
    Value v;
    v.name = "constant:" + std::to_string(b.graph().values.size());
    v.dtype = DType::Int64;
    v.shape = {Dim(static_cast<int64_t>(shape.size()))};
    v.kind = ValueKind::Constant;
    v.intData = shape;
    return b.graph().addValue(std::move(v));
}

// ---- heads ----

int crossEntropy(ModelBuilder& b, int scores, int targets) {
    return b.op1("SoftmaxCrossEntropyLoss", {scores, targets},
                 {{"reduction", std::string("mean")}, {"ignore_index", int64_t{-100}}});
}

// Logits over the vocabulary: the embedding matrix transposed when tied, else a weight of its own.
int vocabProjection(ModelBuilder& b, const Config& c, const std::string& module, int x, int embedWeight) {
    if (c.tieEmbeddings) return b.matmul(x, b.transpose(embedWeight, {1, 0}, module), module);
    return b.linear(module, x, c.vocab, false);
}

// Token-level loss over [N, S, vocab] logits with [N, S] labels (transformers shifts the labels of a
// causal LM by one: S-1 positions; here all S count). transformers' loss functions take the logits
// in fp32 (logits.float()): a kernel and an fp32 copy wherever the model runs in 16 bits; Qwen (v1)
// takes them as they are.
Graph finishTokenLoss(ModelBuilder& b, const Config& c, int logits, const Dim& length) {
    int labels = b.input("labels", {Dim::batch(), length}, DType::Int64);
    int scores = b.reshape(logits, {-1, c.vocab});
    if (c.lossInFp32) scores = b.op1("Cast", {scores}, {{"to", int64_t{1}}, {"dtype_role", std::string("fp32")}});
    int loss = crossEntropy(b, scores, b.reshape(labels, {-1}));
    if (c.fusedLoss) b.graph().ops.back().attrs["fused"] = int64_t{1};
    return b.finish({loss, logits});
}

int extendedMask(ModelBuilder& b, int attentionMask) {
    int mask = b.op1("Cast", {attentionMask}, {{"to", int64_t{1}}});
    mask = b.reshape(mask, {Dim::batch(), 1, 1, Dim::seq()});
    return b.scale(b.op1("Sub", {b.constantFloat(1.0), mask}), -3.4028234663852886e38);
}

Seq2SeqInputs seq2seqInputs(ModelBuilder& b, const Config& c) {
    Seq2SeqInputs in;
    if (c.targetSeq > 0) in.target = Dim(c.targetSeq);
    in.ids = b.input("input_ids", {Dim::batch(), Dim::seq()}, DType::Int64);
    in.attentionMask = b.input("attention_mask", {Dim::batch(), Dim::seq()}, DType::Int64);
    in.decoderIds = b.input("decoder_input_ids", {Dim::batch(), in.target}, DType::Int64);
    return in;
}

Graph finishClassification(ModelBuilder& b, const Config& c, int logits) {
    int labels = b.input("labels", {Dim::batch()}, DType::Int64);
    return b.finish({crossEntropy(b, logits, labels), logits});
}

Graph buildModel(const Config& full) {
    const Config c = tensorParallelShard(full);
    ModelBuilder b(c.architecture, SymbolDefaults{c.batch, c.seq});
    switch (c.family) {
        case Family::Bert:
        case Family::Roberta:
        case Family::DistilBert:
        case Family::ModernBert: return buildEncoder(b, c);
        case Family::Vit: return buildVit(b, c);
        case Family::Bart:
        case Family::MBart: return buildSeq2Seq(b, c);
        case Family::T5:
        case Family::MT5: return buildT5(b, c);
        default: break;
    }
    Graph g = buildDecoder(b, c);
    if (full.sequenceParallel) markSequenceShards(g, full.tensorParallel);
    if (full.tensorParallel > 1 || full.expertParallel > 1) {
        // The whole model's parameters (goals per parameter, reports): the model built unsplit.
        Config whole = full;
        whole.tensorParallel = 1;
        whole.sequenceParallel = false;
        whole.expertParallel = 1;
        const Graph unsplit = buildModel(whole);
        g.shard = {int(full.tensorParallel), int(full.expertParallel), unsplit.parameterCount(),
                   unsplit.activeParameterCount()};
    }
    return g;
}

}  // namespace ts::hf
