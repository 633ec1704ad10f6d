// Training cost: dollars and hours follow the throughput and the cheapest price, intervals swap
// ends (fastest is cheapest), data-parallel runs pay for every GPU, and unpriced GPUs say so.
#include <gtest/gtest.h>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/choice/training_cost.h"

using namespace ts;
using namespace ts::predictors;

namespace {

TrainingPrediction throughput(double low, double value, double high, int gpus = 1) {
    TrainingPrediction p;
    p.scenario.dataParallel.gpus = gpus;
    p.samplesPerS = {value, low, high};
    return p;
}

GpuSpec pricedGpu(double usdPerHour) {
    GpuSpec gpu;
    gpu.id = "test";
    gpu.prices.push_back(Price{"Cloud", "big-1", "here", usdPerHour * 2, "s", "2024", ""});
    gpu.prices.push_back(Price{"Other", "small-1", "there", usdPerHour, "s", "2025", ""});
    return gpu;
}

}  // namespace

TEST(TrainingCost, FollowsThroughputAndTheCheapestPrice) {
    TrainingGoal goal;
    goal.epochs = 2;
    goal.datasetSamples = 1.8e6;  // 3.6 M samples
    const TrainingCost c = trainingCost(throughput(800, 1000, 1250), pricedGpu(3.0), goal);
    ASSERT_TRUE(c.priced);
    EXPECT_DOUBLE_EQ(c.usdPerGpuHour, 3.0);
    EXPECT_EQ(c.priceSource, "Other small-1 (2025)");
    EXPECT_DOUBLE_EQ(c.hoursToTrain.value, 1.0);  // 3.6e6 / 1000 / 3600
    EXPECT_DOUBLE_EQ(c.hoursToTrain.low, 0.8);    // at the fastest end
    EXPECT_DOUBLE_EQ(c.hoursToTrain.high, 1.25);
    EXPECT_NEAR(c.usdPerMillionSamples.value, 3.0 / 3.6, 1e-12);
    EXPECT_LT(c.usdPerMillionSamples.low, c.usdPerMillionSamples.high);
    EXPECT_DOUBLE_EQ(c.usdToTrain.value, 3.0);
    EXPECT_DOUBLE_EQ(c.usdToTrain.low, 2.4);
}

TEST(TrainingCost, DataParallelPaysForEveryGpu) {
    const TrainingGoal goal;
    const TrainingCost one = trainingCost(throughput(1000, 1000, 1000, 1), pricedGpu(2.0), goal);
    const TrainingCost eight = trainingCost(throughput(1000, 1000, 1000, 8), pricedGpu(2.0), goal);
    EXPECT_DOUBLE_EQ(eight.hoursToTrain.value, one.hoursToTrain.value);
    EXPECT_DOUBLE_EQ(eight.usdToTrain.value, 8 * one.usdToTrain.value);
}

TEST(TrainingCost, UnpricedAndUnsupportedGpusCostNothingAndSaySo) {
    GpuSpec unpriced;
    const TrainingCost c = trainingCost(throughput(900, 1000, 1100), unpriced, TrainingGoal{});
    EXPECT_FALSE(c.priced);
    EXPECT_GT(c.hoursToTrain.value, 0);
    EXPECT_EQ(c.usdToTrain.value, 0);

    TrainingPrediction unsupported = throughput(900, 1000, 1100);
    unsupported.supported = false;
    const TrainingCost u = trainingCost(unsupported, pricedGpu(1), TrainingGoal{});
    EXPECT_TRUE(u.priced);
    EXPECT_EQ(u.hoursToTrain.value, 0);
    EXPECT_EQ(u.usdToTrain.value, 0);
}

TEST(TrainingCost, BuiltInDatabaseHasPricedGpus) {
    int priced = 0;
    for (const GpuSpec& gpu : GpuDatabase::builtin().gpus()) priced += gpu.cheapestPrice() != nullptr;
    EXPECT_GE(priced, 4);
}
