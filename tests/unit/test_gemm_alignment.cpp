// Tensor-core GEMMs whose rows are not a multiple of 16 bytes (predictors/iteration/gemm_alignment.h):
// a small Llama's output layer at vocabularies chosen by hand against 8 elements (16-bit) and 4 (TF32),
// and the note the prediction carries.
#include <gtest/gtest.h>

#include <string>

#include "hf_config_test_support.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/gemm_alignment.h"
#include "trainscope/predictors/iteration/training_predictor.h"

using namespace ts;
using namespace ts::predictors;

namespace {

Graph llamaWithVocabulary(int64_t vocab) {
    return hftest::load(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": )" +
                            std::to_string(vocab) +
                            R"(, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                               "num_key_value_heads": 2, "intermediate_size": 176})",
                        {{"seq", "16"}});
}

std::vector<UnalignedGemm> unaligned(int64_t vocab, const char* gpu, TrainingPrecision p) {
    const Graph g = llamaWithVocabulary(vocab);
    const ModelAnalysis a(g, 16);
    return unalignedGemms(a, GpuDatabase::builtin().get(gpu), p, 2);
}

}  // namespace

// 1,001 words: neither 8 nor 4 divides it. The output layer is flagged at 16 bits and in TF32, with its
// share of the forward FLOPs as the costs count them; in PyTorch's fp32 (GEMMs on CUDA cores) nothing is.
// Every other GEMM (64, 176, 16-wide heads, 16 tokens) is aligned.
TEST(GemmAlignment, AnOddVocabularyIsFlaggedWhereTensorCoresReadIt) {
    const Graph g = llamaWithVocabulary(1001);
    const ModelCosts c = computeCosts(g, 2, 16);
    double head = 0;
    for (const LayerCost& l : c.layers)
        if (g.ops[size_t(l.op)].name.rfind("lm_head", 0) == 0) head += l.cost.forwardFlops;
    const std::vector<UnalignedGemm> bf16 = unaligned(1001, "a100-sxm4-80gb", TrainingPrecision::AmpBf16);
    ASSERT_EQ(bf16.size(), 1u);
    EXPECT_EQ(bf16[0].name.rfind("lm_head", 0), 0u);
    EXPECT_EQ(bf16[0].columns, 1001);
    EXPECT_EQ(bf16[0].reduction, 64);
    EXPECT_EQ(bf16[0].alignment, 8);
    EXPECT_NEAR(bf16[0].flopsShare, head / c.totals.forwardFlops, 1e-9);
    const std::vector<UnalignedGemm> tf32 = unaligned(1001, "a100-sxm4-80gb", TrainingPrecision::Tf32);
    ASSERT_EQ(tf32.size(), 1u);
    EXPECT_EQ(tf32[0].alignment, 4);
    EXPECT_TRUE(unaligned(1001, "a100-sxm4-80gb", TrainingPrecision::Fp32).empty());
    EXPECT_TRUE(unaligned(1001, "a100-sxm4-80gb", TrainingPrecision::Fp32Strict).empty());
}

// 1,004 = 4 x 251: aligned for TF32, not for 16 bits; 1,000 = 8 x 125: aligned for both.
TEST(GemmAlignment, TheAlignmentIsSixteenBytesAtTheMathPrecision) {
    EXPECT_EQ(unaligned(1004, "a100-sxm4-80gb", TrainingPrecision::AmpFp16).size(), 1u);
    EXPECT_EQ(unaligned(1004, "a100-sxm4-80gb", TrainingPrecision::Bf16Params).size(), 1u);
    EXPECT_TRUE(unaligned(1004, "a100-sxm4-80gb", TrainingPrecision::Tf32).empty());
    EXPECT_TRUE(unaligned(1000, "a100-sxm4-80gb", TrainingPrecision::AmpBf16).empty());
    EXPECT_TRUE(unaligned(1000, "a100-sxm4-80gb", TrainingPrecision::Tf32).empty());
}

// What the analysis derives a GEMM's shape from must not make an aligned one look misaligned: a Gemm with
// a bias (NCF's MLP: 256, 128 and 64 wide, whose bias adds half a FLOP per output to the reduction the
// FLOPs give) and a mixture of experts (its reduction the routes' average; Mixtral's small experts here
// are 64 and 176 wide, the vocabulary 1,000).
TEST(GemmAlignment, BiasesAndExpertsAreNotMisalignments) {
    const Graph ncf = buildZooModel("ncf", {});
    EXPECT_TRUE(
        unalignedGemms(ModelAnalysis(ncf), GpuDatabase::builtin().get("a100-sxm4-80gb"), TrainingPrecision::AmpFp16, 8)
            .empty());
    const Graph moe = hftest::load(hftest::kSmallMixtral, {{"seq", "16"}});
    EXPECT_TRUE(unalignedGemms(ModelAnalysis(moe, 16), GpuDatabase::builtin().get("a100-sxm4-80gb"),
                               TrainingPrecision::AmpBf16, 2)
                    .empty());
}

// The prediction names the layer and its width with the digits grouped, only on the analytic path.
TEST(GemmAlignment, ThePredictionSaysWhichLayerAndWhy) {
    const Graph g = llamaWithVocabulary(50257);
    const TrainingPredictor predictor(g, 16);
    TrainingScenario s;
    s.batch = 2;
    s.precision = TrainingPrecision::AmpBf16;
    const TrainingPrediction p = predictor.predict(GpuDatabase::builtin().get("a100-sxm4-80gb"), s);
    int notes = 0;
    for (const std::string& n : p.notes)
        if (n.find("multiple of 16 bytes") != std::string::npos) {
            ++notes;
            EXPECT_NE(n.find("lm_head"), std::string::npos) << n;
            EXPECT_NE(n.find("50,257 columns"), std::string::npos) << n;
        }
    EXPECT_EQ(notes, 1);
    s.precision = TrainingPrecision::Fp32;
    for (const std::string& n : predictor.predict(GpuDatabase::builtin().get("a100-sxm4-80gb"), s).notes)
        EXPECT_EQ(n.find("multiple of 16 bytes"), std::string::npos) << n;
}
