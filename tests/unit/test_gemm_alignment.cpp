// Tensor-core GEMMs whose rows are not a multiple of 16 bytes (predictors/iteration/gemm_alignment.h):
// a small Llama's output layer at vocabularies chosen by hand against 8 elements (16-bit) and 4 (TF32),
// what the time model charges an odd width in 16 bits, and the note the prediction carries.
#include <gtest/gtest.h>

#include <string>

#include "hf_config_test_support.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/gemm_alignment.h"
#include "trainscope/predictors/iteration/operation_times.h"
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

// The output layer's compute term (FLOPs over the rate, with its tiles' padding), forward or backward.
double headComputeMs(int64_t vocab, TrainingPrecision p, bool backward) {
    const Graph g = llamaWithVocabulary(vocab);
    const ModelAnalysis a(g, 16);
    const OperationTimes t = prepareIterationTimes(a, GpuDatabase::builtin().get("a100-sxm4-80gb"), p);
    for (const TimeRow& r : backward ? t.backward : t.forward)
        if (a.ops[size_t(r.op)].name.rfind("lm_head", 0) == 0) return r.computeMs.at(2);
    throw std::runtime_error("no lm_head row");
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

// An odd width in 16 bits runs on cuBLAS's fallback kernels: 3x the aligned time, Netflix's published
// LM-head figure. 1,023 and 1,024 words fill the same output tiles (1,024 columns) with nearly the same
// FLOPs, so the compute terms differ by exactly the charge; 1,020 words (even, not a multiple of 8) and
// TF32's and fp32's unaligned rows are not charged.
TEST(GemmAlignment, AnOddWidthInSixteenBitsTakesThreeTimesItsAlignedTime) {
    for (const bool backward : {false, true}) {
        SCOPED_TRACE(backward ? "backward" : "forward");
        for (TrainingPrecision p : {TrainingPrecision::AmpBf16, TrainingPrecision::AmpFp16,
                                    TrainingPrecision::Bf16Params, TrainingPrecision::Fp16Params}) {
            SCOPED_TRACE(trainingPrecisionName(p));
            const double aligned = headComputeMs(1024, p, backward);
            EXPECT_NEAR(headComputeMs(1023, p, backward) / aligned, kOddWidthGemmSlowdown, 1e-9);
            EXPECT_NEAR(headComputeMs(1020, p, backward) / aligned, 1.0, 1e-9);
        }
        for (TrainingPrecision p : {TrainingPrecision::Tf32, TrainingPrecision::Fp32}) {
            SCOPED_TRACE(trainingPrecisionName(p));
            EXPECT_NEAR(headComputeMs(1023, p, backward) / headComputeMs(1024, p, backward), 1.0, 1e-9);
        }
    }
    EXPECT_EQ(kOddWidthGemmSlowdown, 3.0);
    const std::vector<UnalignedGemm> odd = unaligned(1023, "a100-sxm4-80gb", TrainingPrecision::AmpBf16);
    ASSERT_EQ(odd.size(), 1u);
    EXPECT_EQ(odd[0].slowdown, kOddWidthGemmSlowdown);
    const std::vector<UnalignedGemm> even = unaligned(1020, "a100-sxm4-80gb", TrainingPrecision::AmpBf16);
    ASSERT_EQ(even.size(), 1u);
    EXPECT_EQ(even[0].slowdown, 1.0);
}

// Transformer-XL's tail clusters are 20,000, 160,000 and 67,738 words wide: its zoo model's stand-in
// slices of them keep those alignments, so no odd 16-bit width (which the reference does not have)
// is charged.
TEST(GemmAlignment, TransformerXlsStandInSlicesKeepTheirClustersAlignment) {
    for (const char* zoo : {"transformer_xl_base", "transformer_xl_large"}) {
        SCOPED_TRACE(zoo);
        const Graph g = buildZooModel(zoo, {});
        const ModelAnalysis a(g);
        for (const UnalignedGemm& g :
             unalignedGemms(a, GpuDatabase::builtin().get("a100-sxm4-80gb"), TrainingPrecision::AmpFp16, 8, 0))
            EXPECT_EQ(g.slowdown, 1.0) << g.name << " " << g.columns << " x " << g.reduction;
    }
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
        if (n.find("lm_head") != std::string::npos) {
            ++notes;
            EXPECT_NE(n.find("50,257 columns"), std::string::npos) << n;
            EXPECT_NE(n.find("an odd width in 16 bits"), std::string::npos) << n;
            EXPECT_NE(n.find("charged here at 3x"), std::string::npos) << n;
        }
    EXPECT_EQ(notes, 1);
    // TF32's unaligned rows are named, not charged.
    s.precision = TrainingPrecision::Tf32;
    notes = 0;
    for (const std::string& n : predictor.predict(GpuDatabase::builtin().get("a100-sxm4-80gb"), s).notes)
        if (n.find("lm_head") != std::string::npos) {
            ++notes;
            EXPECT_NE(n.find("multiple of 16 bytes (4 elements"), std::string::npos) << n;
            EXPECT_NE(n.find("does not charge"), std::string::npos) << n;
            EXPECT_EQ(n.find("charged here"), std::string::npos) << n;
        }
    EXPECT_EQ(notes, 1);
    s.precision = TrainingPrecision::Fp32;
    for (const std::string& n : predictor.predict(GpuDatabase::builtin().get("a100-sxm4-80gb"), s).notes)
        EXPECT_EQ(n.find("lm_head"), std::string::npos) << n;
}
