// Zoo models at the configurations NVIDIA DeepLearningExamples publishes training throughput for:
// BERT with its pretraining and SQuAD heads, Transformer-XL base/large and NCF. Default parameter
// counts are in test_zoo.cpp's reference tables; these are the options, shapes and module paths.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "zoo_test_support.h"

namespace {

bool hasModule(const ts::Graph& g, const std::string& path) {
    for (const auto& op : g.ops)
        if (op.modulePath == path) return true;
    return false;
}

std::string outputShape(const ts::Graph& g, size_t i) {
    return ts::shapeStr(g.values.at(g.outputs.at(i)).shape);
}

std::string valueShape(const ts::Graph& g, const std::string& name) {
    int v = g.findValue(name);
    return v < 0 ? "(missing " + name + ")" : ts::shapeStr(g.values[size_t(v)].shape);
}

using zoo_test::errorOf;

int countOps(const ts::Graph& g, const std::string& type) {
    int n = 0;
    for (const auto& op : g.ops) n += op.type == type;
    return n;
}

}  // namespace

// Counts from transformers 5.24 in the project's venv, sum(p.numel() for p in m.parameters()):
// BertForPreTraining / BertForQuestionAnswering / BertModel on BertConfig(vocab_size=V) for base and
// BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
// vocab_size=V) for large.
TEST(ZooNlp, BertHeadsHaveHuggingFaceParameterCounts) {
    EXPECT_EQ(ts::loadModel("zoo:bert_large?head=pretraining&vocab=30528").parameterCount(), 336'232'258);
    EXPECT_EQ(ts::loadModel("zoo:bert_large?head=pretraining").parameterCount(), 336'226'108);
    EXPECT_EQ(ts::loadModel("zoo:bert_base?head=pretraining").parameterCount(), 110'106'428);
    EXPECT_EQ(ts::loadModel("zoo:bert_large?head=squad&seq=384").parameterCount(), 334'094'338);
    EXPECT_EQ(ts::loadModel("zoo:bert_large?head=squad&vocab=30528").parameterCount(), 334'100'482);
    EXPECT_EQ(ts::loadModel("zoo:bert_base?head=squad").parameterCount(), 108'893'186);
    EXPECT_EQ(ts::loadModel("zoo:bert_large?vocab=30528").parameterCount(), 335'148'032);
    EXPECT_EQ(ts::loadModel("zoo:bert_large?head=none").parameterCount(), 335'141'888);
}

TEST(ZooNlp, BertPretrainingHeadsAndLoss) {
    ts::Graph g = ts::loadModel("zoo:bert_large?head=pretraining&vocab=30528&seq=512");
    ASSERT_EQ(g.outputs.size(), 3u);
    EXPECT_EQ(outputShape(g, 0), "[]");  // masked-LM plus next-sentence loss
    EXPECT_EQ(outputShape(g, 1), "[N, S, 30528]");
    EXPECT_EQ(outputShape(g, 2), "[N, 2]");
    EXPECT_EQ(countOps(g, "SoftmaxCrossEntropyLoss"), 2);
    for (const char* path : {"bert.embeddings.word_embeddings", "bert.encoder.layer.23.attention.self.query",
                             "bert.pooler.dense", "cls.predictions.transform.dense",
                             "cls.predictions.transform.LayerNorm", "cls.predictions.decoder", "cls.seq_relationship"})
        EXPECT_TRUE(hasModule(g, path)) << path;
    // The decoder is tied to the word embeddings and has only its bias.
    EXPECT_EQ(valueShape(g, "cls.predictions.bias"), "[30528]");
    EXPECT_LT(g.findValue("cls.predictions.decoder.weight"), 0);
    EXPECT_EQ(valueShape(g, "bert.embeddings.word_embeddings.weight"), "[30528, 1024]");
    EXPECT_EQ(g.values[g.inputs.back()].name, "next_sentence_label");
}

TEST(ZooNlp, BertSquadHeadHasNoPooler) {
    ts::Graph g = ts::loadModel("zoo:bert_large?head=squad&seq=384");
    EXPECT_EQ(g.defaults.seq, 384);
    ASSERT_EQ(g.outputs.size(), 3u);
    EXPECT_EQ(outputShape(g, 0), "[]");
    EXPECT_EQ(outputShape(g, 1), "[N, S]");  // start logits
    EXPECT_EQ(outputShape(g, 2), "[N, S]");  // end logits
    EXPECT_TRUE(hasModule(g, "qa_outputs"));
    EXPECT_EQ(valueShape(g, "qa_outputs.bias"), "[2]");
    EXPECT_FALSE(hasModule(g, "bert.pooler.dense"));
    EXPECT_LT(g.findValue("bert.pooler.dense.weight"), 0);
    // The default head is today's BertModel, names without the "bert." prefix.
    ts::Graph plain = ts::loadModel("zoo:bert_base");
    EXPECT_TRUE(hasModule(plain, "pooler.dense"));
    EXPECT_FALSE(hasModule(plain, "bert.pooler.dense"));
}

TEST(ZooNlp, TransformerXlFollowsNvidiasModules) {
    ts::Graph base = ts::loadModel("zoo:transformer_xl_base");
    EXPECT_EQ(base.defaults.seq, 192);
    EXPECT_EQ(ts::shapeStr(base.values[base.inputs[0]].shape), "[S, N]");  // data, sequence first
    ASSERT_EQ(base.inputs.size(), 2u + 16u);                               // data, target, mems per layer
    EXPECT_EQ(valueShape(base, "mems.15"), "[192, N, 512]");
    EXPECT_EQ(valueShape(base, "word_emb.emb_layers.0.weight"), "[267735, 512]");
    EXPECT_EQ(valueShape(base, "r_w_bias"), "[8, 64]");
    EXPECT_EQ(valueShape(base, "crit.cluster_weight"), "[3, 512]");
    EXPECT_EQ(valueShape(base, "crit.out_layers_biases.0"), "[267735]");
    for (const char* path : {"layers.0.dec_attn.qkv_net", "layers.0.dec_attn.r_net", "layers.15.dec_attn.o_net",
                             "layers.15.dec_attn.layer_norm", "layers.3.pos_ff.CoreNet.0", "layers.3.pos_ff.CoreNet.3",
                             "layers.3.pos_ff.layer_norm", "crit"})
        EXPECT_TRUE(hasModule(base, path)) << path;
    // Keys and values cover the memory and the current segment: K = mem + S.
    ts::Graph g = ts::loadModel("zoo:transformer_xl_base?mem=100");
    for (const auto& op : g.ops)
        if (op.modulePath == "layers.0.dec_attn.qkv_net") {
            const ts::Shape& qkv = g.values[size_t(op.outputs[0])].shape;
            EXPECT_EQ(qkv[0], ts::Dim(100) + ts::Dim::seq());
            EXPECT_EQ(qkv[2], ts::Dim(3 * 512));
        }
    EXPECT_EQ(g.parameterCount(), 191'950'298);  // the memory holds no parameters

    ts::Graph large = ts::loadModel("zoo:transformer_xl_large");
    EXPECT_EQ(large.defaults.seq, 384);
    EXPECT_EQ(valueShape(large, "word_emb.emb_layers.3.weight"), "[67738, 16]");  // div_val 4: 1024 / 4^3
    EXPECT_EQ(valueShape(large, "word_emb.emb_projs.2"), "[1024, 64]");
    EXPECT_EQ(valueShape(large, "crit.out_projs.0"), "[1024, 1024]");  // tie_projs[0] is False
    EXPECT_LT(large.findValue("crit.out_projs.1"), 0);                 // tied to word_emb.emb_projs.1
    EXPECT_EQ(valueShape(large, "crit.out_layers_biases.2"), "[160000]");
}

TEST(ZooNlp, TransformerXlAdaptiveSoftmaxShapes) {
    ts::Graph g = ts::loadModel("zoo:transformer_xl_base");
    ASSERT_EQ(g.outputs.size(), 1u);
    EXPECT_EQ(outputShape(g, 0), "[S, N]");  // the per-token loss forward() returns
    // Every token: the head (shortlist plus one logit per tail cluster), then each tail cluster's Zipf
    // share of its words. Shares (H(hi) - H(lo)) / H(267735) with exact harmonic sums in Python:
    // 5.3018%, 12.3097% and 2.2309% of clusters of 20000, 160000 and 67738 words (1060.4, 19695.5 and
    // 1511.2), each rounded to a multiple of its cluster's alignment (8, 8 and 2) so that no slice is an
    // odd width the reference's GEMMs do not have: 1064, 19696 and 1512.
    std::vector<std::string> logSoftmaxShapes;
    for (const auto& op : g.ops)
        if (op.type == "LogSoftmax") logSoftmaxShapes.push_back(ts::shapeStr(g.values[size_t(op.outputs[0])].shape));
    EXPECT_EQ(logSoftmaxShapes,
              (std::vector<std::string>{"[N*S, 20000]", "[N*S, 1064]", "[N*S, 19696]", "[N*S, 1512]"}));
    // Without memory there are no memory inputs; the tails keep their width at any length.
    ts::Graph noMemory = ts::loadModel("zoo:transformer_xl_large?mem=0&seq=8");
    EXPECT_EQ(noMemory.inputs.size(), 2u);
    EXPECT_EQ(countOps(noMemory, "NegativeLogLikelihoodLoss"), 4);
    EXPECT_EQ(noMemory.parameterCount(), 285'167'482);
}

TEST(ZooNlp, NcfIsNeuMF) {
    ts::Graph g = ts::loadModel("zoo:ncf");
    ASSERT_EQ(g.outputs.size(), 2u);
    EXPECT_EQ(outputShape(g, 0), "[]");      // mean BCE-with-logits loss
    EXPECT_EQ(outputShape(g, 1), "[N, 1]");  // logits
    EXPECT_EQ(valueShape(g, "mf_user_embed.weight"), "[138493, 64]");
    EXPECT_EQ(valueShape(g, "mlp_item_embed.weight"), "[26744, 128]");
    EXPECT_EQ(valueShape(g, "mlp.0.weight"), "[256, 256]");
    EXPECT_EQ(valueShape(g, "mlp.2.weight"), "[64, 128]");
    EXPECT_EQ(valueShape(g, "final.weight"), "[1, 128]");
    EXPECT_EQ(countOps(g, "Dropout"), 3);
    // NeuMF(1000, 500, mf_dim=32, mlp_layer_sizes=[256, 256, 128, 64]) in PyTorch: 347,041 parameters.
    EXPECT_EQ(ts::loadModel("zoo:ncf?users=1000&items=500&factors=32").parameterCount(), 347'041);
}

TEST(ZooNlp, BadOptionsAreClearModelErrors) {
    EXPECT_NE(errorOf("zoo:bert_large?head=mlm")
                  .find("zoo:bert_large: option 'head' must be one of none, "
                        "pretraining, squad, got 'mlm'"),
              std::string::npos);
    EXPECT_NE(errorOf("zoo:bert_base?vocab=1").find("option 'vocab' must be between 2"), std::string::npos);
    EXPECT_NE(errorOf("zoo:transformer_xl_base?mem=-1").find("zoo:transformer_xl_base: option 'mem'"),
              std::string::npos);
    EXPECT_NE(errorOf("zoo:transformer_xl_large?seq=0").find("option 'seq'"), std::string::npos);
    EXPECT_NE(errorOf("zoo:transformer_xl_base?head=squad").find("unknown option 'head'"), std::string::npos);
    EXPECT_NE(errorOf("zoo:ncf?factors=0").find("zoo:ncf: option 'factors'"), std::string::npos);
    EXPECT_NE(errorOf("zoo:ncf?users=x").find("option 'users' must be a whole number"), std::string::npos);
}
