// One vocabulary of precisions and optimizers for the profiler, the predictors and the GUI.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "trainscope/core/profiler.h"
#include "trainscope/core/training_vocabulary.h"
#include "trainscope/predictors/iteration/training_scenario.h"

namespace {

TEST(TrainingVocabulary, EveryNameParsesBackToItsValue) {
    std::set<std::string> names;
    for (ts::TrainingPrecision p : ts::kAllTrainingPrecisions) {
        const std::string name = ts::trainingPrecisionName(p);
        EXPECT_TRUE(names.insert(name).second) << name << " names two precisions";
        EXPECT_EQ(ts::parseTrainingPrecision(name), p) << name;
    }
    EXPECT_EQ(names.size(), size_t(ts::kTrainingPrecisionCount));
    for (ts::Optimizer o : ts::kAllOptimizers) EXPECT_EQ(ts::parseOptimizer(ts::optimizerName(o)), o);
    // The command line's short forms.
    EXPECT_EQ(ts::parseTrainingPrecision("BF16"), ts::TrainingPrecision::AmpBf16);
    EXPECT_EQ(ts::parseTrainingPrecision("fp16"), ts::TrainingPrecision::AmpFp16);
    EXPECT_EQ(ts::parseOptimizer("adam-8bit"), ts::Optimizer::Adam8bit);
    EXPECT_FALSE(ts::parseTrainingPrecision("fp64"));
    EXPECT_FALSE(ts::parseOptimizer("lamb"));
    EXPECT_EQ(ts::trainingPrecisionNames(),
              "fp32, fp32-strict, tf32, amp-fp16, amp-bf16, bf16-params, fp16-params or fp8");
    EXPECT_EQ(ts::optimizerNames(), "sgd, sgd-momentum, adam, adamw or adam8bit");
}

TEST(TrainingVocabulary, PredictorsAndProfilerShareOneType) {
    // A profile's scenario is predicted as the same value: the predictors' names are core's.
    static_assert(std::is_same_v<ts::predictors::TrainingPrecision, ts::TrainingPrecision>);
    static_assert(std::is_same_v<ts::predictors::Optimizer, ts::Optimizer>);
    ts::ProfileOptions o;
    o.precision = ts::predictors::TrainingPrecision::AmpBf16;
    EXPECT_STREQ(ts::trainingPrecisionName(o.precision), "amp-bf16");
}

TEST(TrainingVocabulary, TheProfilerSaysWhatItCannotRun) {
    EXPECT_FALSE(ts::unprofilableReason(ts::TrainingPrecision::AmpBf16, ts::Optimizer::AdamW));
    EXPECT_FALSE(ts::unprofilableReason(ts::TrainingPrecision::Fp32Strict, ts::Optimizer::Sgd));
    auto bf16 = ts::unprofilableReason(ts::TrainingPrecision::Bf16Params, ts::Optimizer::AdamW);
    ASSERT_TRUE(bf16);
    EXPECT_NE(bf16->find("bf16-params"), std::string::npos);
    auto fp16 = ts::unprofilableReason(ts::TrainingPrecision::Fp16Params, ts::Optimizer::AdamW);
    ASSERT_TRUE(fp16);
    EXPECT_NE(fp16->find("fp16-params is predicted only"), std::string::npos) << *fp16;
    // Every precision has its own element sizes but fp32-strict, which moves fp32's bytes, and
    // fp16-params, which moves bf16-params'.
    std::set<int> indices;
    for (ts::TrainingPrecision p : ts::kAllTrainingPrecisions) {
        const int i = ts::elementIndexOf(p);
        ASSERT_GE(i, 0);
        ASSERT_LT(i, ts::kElementPrecisionCount);
        indices.insert(i);
        if (p != ts::TrainingPrecision::Fp32Strict && p != ts::TrainingPrecision::Fp16Params) {
            EXPECT_EQ(ts::precisionOfElementIndex(i), p);
        }
    }
    EXPECT_EQ(indices.size(), size_t(ts::kElementPrecisionCount));
    auto fp8 = ts::unprofilableReason(ts::TrainingPrecision::Fp8, ts::Optimizer::Adam);
    ASSERT_TRUE(fp8);
    EXPECT_NE(fp8->find("fp8"), std::string::npos);
    auto adam8 = ts::unprofilableReason(ts::TrainingPrecision::Fp32, ts::Optimizer::Adam8bit);
    ASSERT_TRUE(adam8);
    EXPECT_NE(adam8->find("adam8bit"), std::string::npos);
}

}  // namespace
