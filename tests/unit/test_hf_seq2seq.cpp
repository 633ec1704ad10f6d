// The encoder-decoders from their config.json (BART, mBART, T5, mT5): the cross-attention's shapes and kernels,
// the decoder's own length (target_seq), T5's relative-position bias through sdpa's mask, and their errors.
// Parameter counts of the published configs are in test_hf_config.cpp; tests/real_models/check_hf_config.py
// compares small configs with transformers itself.
#include <gtest/gtest.h>

#include <string>

#include "hf_config_test_support.h"
#include "trainscope/core/costs.h"

using namespace hftest;

// BART and mBART: an encoder over the source (its padding mask, the efficient kernel) and a decoder over the
// target (target_seq; the source's length by default) whose self-attention is causal without a mask (flash)
// and whose cross-attention reads the encoder's output: queries of the target, keys of the source.
TEST(HfSeq2Seq, BartIsAnEncoderDecoderWithCrossAttention) {
    const ts::Graph g = ts::loadModel(kConfigs + "bart-large.json?seq=1024&target_seq=60");
    EXPECT_EQ(g.name, "BartForConditionalGeneration");
    for (const char* path :
         {"model.encoder.embed_tokens", "model.encoder.embed_positions", "model.encoder.layernorm_embedding",
          "model.encoder.layers.11.self_attn.q_proj", "model.encoder.layers.11.final_layer_norm",
          "model.decoder.layers.0.encoder_attn.k_proj", "model.decoder.layers.11.encoder_attn_layer_norm", "lm_head"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    EXPECT_GE(g.findValue("model.shared.weight"), 0);
    EXPECT_LT(g.findValue("lm_head.weight"), 0);  // tied to the shared matrix
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.findValue("model.encoder.embed_positions.weight"))].shape),
              "[1026, 1024]");
    int self = 0, cross = 0, encoder = 0;
    for (const ts::Operation& op : g.ops) {
        if (op.type != "ScaledDotProductAttention") continue;
        const std::string q = ts::shapeStr(g.values[size_t(op.inputs[0])].shape);
        const std::string k = ts::shapeStr(g.values[size_t(op.inputs[1])].shape);
        if (op.modulePath.find("encoder_attn") != std::string::npos) {
            ++cross;
            EXPECT_EQ(q, "[N, 16, 60, 64]");
            EXPECT_EQ(k, "[N, 16, S, 64]");
            EXPECT_EQ(op.attrString("backend", ""), "efficient");
            EXPECT_EQ(op.attrInt("causal", 1), 0);
        } else if (op.modulePath.rfind("model.decoder", 0) == 0) {
            ++self;
            EXPECT_EQ(k, "[N, 16, 60, 64]");
            EXPECT_EQ(op.attrString("backend", ""), "flash");
            EXPECT_EQ(op.attrInt("causal", 0), 1);
        } else {
            ++encoder;
            EXPECT_EQ(q, "[N, 16, S, 64]");
            EXPECT_EQ(op.attrString("backend", ""), "efficient");
        }
    }
    EXPECT_EQ(encoder, 12);
    EXPECT_EQ(self, 12);
    EXPECT_EQ(cross, 12);
    EXPECT_EQ(ts::shapeStr(g.values[size_t(g.outputs[1])].shape), "[N, 60, 50265]");
    // Without target_seq the decoder follows the sequence length; the attention option reaches every layer.
    const ts::Graph same = ts::loadModel(kConfigs + "bart-large.json?seq=128&attention=math");
    EXPECT_EQ(ts::shapeStr(same.values[size_t(same.outputs[1])].shape), "[N, S, 50265]");
    for (const ts::Operation& op : same.ops) {
        if (op.type == "ScaledDotProductAttention") {
            EXPECT_EQ(op.attrString("backend", ""), "math");
        }
    }

    // mBART normalises before each sub-layer and after each stack.
    const ts::Graph mbart = ts::loadModel(kConfigs + "mbart-large-cc25.json?seq=64");
    EXPECT_TRUE(hasModule(mbart, "model.encoder.layer_norm"));
    EXPECT_TRUE(hasModule(mbart, "model.decoder.layer_norm"));
    EXPECT_FALSE(hasModule(g, "model.encoder.layer_norm"));

    EXPECT_NE(errorOf(kSmallLlama, {{"target_seq", "8"}}).find("option 'target_seq'"), std::string::npos);
    EXPECT_NE(errorOf(R"({"model_type": "bart"})", {{"target_seq", "2048"}}).find("between 1 and 1024"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"model_type": "bart", "architectures": ["BartForSequenceClassification"]})")
                  .find("BartForConditionalGeneration, BartModel"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"model_type": "bart", "d_model": 100, "decoder_attention_heads": 16})")
                  .find("\"d_model\" is not a multiple"),
              std::string::npos);
}

// T5: pre-norm blocks without biases, a relative-position bias made by each stack's first block and reused by
// every layer, which sdpa gets inside a float mask of every head (torch.where of the padding or causal mask):
// the efficient kernel, unscaled scores, and the mask kept for backward.
TEST(HfSeq2Seq, T5AddsItsRelativePositionBiasThroughTheMask) {
    const ts::Graph g = ts::loadModel(kConfigs + "flan-t5-base.json?seq=512&target_seq=128");
    EXPECT_EQ(g.name, "T5ForConditionalGeneration");
    for (const char* path :
         {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias", "encoder.block.0.layer.0.layer_norm",
          "encoder.block.11.layer.1.DenseReluDense.wi_0", "encoder.block.11.layer.1.DenseReluDense.wi_1",
          "decoder.block.0.layer.1.EncDecAttention.k", "decoder.block.11.layer.2.DenseReluDense.wo",
          "encoder.final_layer_norm", "lm_head"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    EXPECT_FALSE(hasModule(g, "encoder.block.1.layer.0.SelfAttention.relative_attention_bias"));
    EXPECT_LT(g.findValue("encoder.block.0.layer.0.SelfAttention.q.bias"), 0);
    const ts::ModelCosts costs = ts::computeCosts(g, 2, 512);
    int encoder = 0, self = 0, cross = 0;
    for (const ts::LayerCost& l : costs.layers) {
        const ts::Operation& op = g.ops[size_t(l.op)];
        if (op.type != "ScaledDotProductAttention") continue;
        ASSERT_EQ(op.inputs.size(), 4u);
        const std::string mask = ts::shapeStr(g.values[size_t(op.inputs[3])].shape);
        EXPECT_EQ(op.attrString("backend", ""), "efficient");
        EXPECT_DOUBLE_EQ(op.attrFloat("scale", 0), 1.0);
        double maskElements = 0;
        if (op.modulePath.find("EncDecAttention") != std::string::npos) {
            ++cross;
            EXPECT_EQ(mask, "[N, 12, 128, S]");
            maskElements = 2.0 * 12 * 128 * 512;
        } else if (op.modulePath.rfind("decoder", 0) == 0) {
            ++self;
            EXPECT_EQ(mask, "[1, 12, 128, 128]");
            maskElements = 12.0 * 128 * 128;
        } else {
            ++encoder;
            EXPECT_EQ(mask, "[N, 12, S, S]");
            maskElements = 2.0 * 12 * 512 * 512;
        }
        // Among what the kernel keeps: the fp32 mask.
        EXPECT_GE(l.activationBytes, maskElements * 4) << op.modulePath;
    }
    EXPECT_EQ(encoder, 12);
    EXPECT_EQ(self, 12);
    EXPECT_EQ(cross, 12);
    // T5 v1.0 (tie_word_embeddings by default): the decoder's output scaled by d_model^-0.5 before lm_head; the
    // ReLU MLP's wi.
    const ts::Graph t5 = ts::loadModel(kConfigs + "t5-base.json?seq=64");
    EXPECT_TRUE(hasModule(t5, "encoder.block.0.layer.1.DenseReluDense.wi"));
    int scaled = 0;
    for (const ts::Operation& op : t5.ops) scaled += op.type == "Mul" && op.modulePath.empty();
    EXPECT_EQ(scaled, 1);
    int unscaled = 0;
    for (const ts::Operation& op : g.ops) unscaled += op.type == "Mul" && op.modulePath.empty();
    EXPECT_EQ(unscaled, 0);
    EXPECT_NE(errorOf(R"({"model_type": "t5", "feed_forward_proj": "gelu-gated"})").find("\"gated-ACT\""),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"model_type": "t5", "feed_forward_proj": "gated-swish-x"})").find("feed_forward_proj"),
              std::string::npos);
}
