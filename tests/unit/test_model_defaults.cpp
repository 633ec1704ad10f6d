// What a scenario opens with by the model's kind (predictors/choice/model_defaults.h): token-id
// models are language models (AdamW, 20 tokens per parameter), image models vision models (SGD
// with momentum, an epoch of ImageNet-1k), the rest other; and a goal in tokens costs tokens /
// tokens per second.
#include <gtest/gtest.h>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/choice/model_defaults.h"
#include "trainscope/predictors/choice/training_cost.h"

using namespace ts;
using namespace ts::predictors;

TEST(ModelDefaults, KindFollowsTheInputs) {
    for (const char* language :
         {"zoo:bert_base", "zoo:gpt2?seq=64", "zoo:transformer", "zoo:gnmt", "zoo:transformer_xl_base",
          TRAINSCOPE_TEST_DATA_DIR "/hf-configs/llama-3.1-8b.json?seq=64",
          TRAINSCOPE_TEST_DATA_DIR "/hf-configs/roberta-base.json"})
        EXPECT_EQ(modelKindOf(loadModel(language)), ModelKind::Language) << language;
    // ViT takes pixels, the detector and the GAN images: vision, though ViT is a transformer.
    for (const char* vision :
         {"zoo:resnet18", "zoo:ssd300", "zoo:dcgan", TRAINSCOPE_TEST_DATA_DIR "/hf-configs/vit-base-patch16-224.json"})
        EXPECT_EQ(modelKindOf(loadModel(vision)), ModelKind::Vision) << vision;
    // NCF's user and item ids have no sequence: neither tokens nor images.
    EXPECT_EQ(modelKindOf(loadModel("zoo:ncf")), ModelKind::Other);
}

TEST(ModelDefaults, OptimizerAndGoalByKind) {
    const Graph bert = loadModel("zoo:bert_base");
    const ScenarioDefaults language = scenarioDefaultsFor(bert);
    EXPECT_EQ(language.optimizer, Optimizer::AdamW);
    // BERT-base has 109,482,240 parameters as Hugging Face counts them: 20 tokens each.
    EXPECT_EQ(bert.parameterCount(), 109482240);
    EXPECT_DOUBLE_EQ(language.goal.tokens, 2189644800.0);
    EXPECT_TRUE(language.goal.inTokens());

    const ScenarioDefaults vision = scenarioDefaultsFor(loadModel("zoo:resnet50"));
    EXPECT_EQ(vision.optimizer, Optimizer::SgdMomentum);
    EXPECT_FALSE(vision.goal.inTokens());
    EXPECT_DOUBLE_EQ(vision.goal.samples(), 1281167.0);  // ImageNet-1k's training images, one epoch

    const ScenarioDefaults other = scenarioDefaultsFor(loadModel("zoo:ncf"));
    EXPECT_EQ(other.optimizer, Optimizer::Sgd);
    EXPECT_FALSE(other.goal.inTokens());
}

TEST(ModelDefaults, AGoalInTokensCostsTokensOverTokensPerSecond) {
    TrainingPrediction p;
    p.samplesPerS = {100, 80, 125};
    p.tokensPerS = {51200, 40960, 64000};  // sequence length 512
    GpuSpec gpu;
    gpu.prices.push_back(Price{"Cloud", "one", "here", 2.0, "s", "2025", ""});
    TrainingGoal goal;
    goal.tokens = 1.8432e9;  // 36,000 s at 51,200 tokens/s
    const TrainingCost c = trainingCost(p, gpu, goal);
    EXPECT_DOUBLE_EQ(c.hoursToTrain.value, 10.0);
    EXPECT_DOUBLE_EQ(c.hoursToTrain.low, 8.0);  // at the fastest end, 64,000 tokens/s
    EXPECT_DOUBLE_EQ(c.usdToTrain.value, 20.0);
    EXPECT_NEAR(c.usdPerMillionTokens.value, 2.0 / 3600 / 51200 * 1e6, 1e-15);
    // A model without a sequence has no tokens per second: a goal in tokens gives it no time.
    p.tokensPerS = {};
    EXPECT_EQ(trainingCost(p, gpu, goal).hoursToTrain.value, 0.0);
}
