#pragma once
// What a training run costs on a GPU: the price per GPU-hour (GpuSpec::cheapestPrice: the cheapest
// on-demand listing, else the amortised purchase price),
// dollars per million samples, and the time and money to train a given number of samples. Shared
// by the explorer's GPUs view, the hardware-choice report and the CLI, so they agree to the cent.
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/training_prediction.h"

namespace ts::predictors {

// How much training is asked for: samples = epochs x dataset samples, or for a language model a
// number of tokens (model_defaults.h says which a model opens with).
struct TrainingGoal {
    double epochs = 1;
    double datasetSamples = 1.281167e6;  // ImageNet-1k's training set, a common yardstick
    // A goal in tokens: when > 0 it stands instead of epochs x samples, and the time to train is
    // tokens / the prediction's tokens per second (a model without a sequence has none: no time).
    double tokens = 0;
    bool inTokens() const { return tokens > 0; }
    double samples() const { return epochs * datasetSamples; }
};

struct TrainingCost {
    bool priced = false;       // the GPU has a known price
    bool amortised = false;    // the price is a purchase price amortised (no on-demand listing)
    double usdPerGpuHour = 0;  // GpuSpec::cheapestPrice() of one GPU
    std::string priceSource;   // "provider instance (date)", empty when !priced
    std::string priceDate;
    // All intervals follow samplesPerS's: the fastest end of the throughput is the cheapest.
    Interval hoursToTrain;          // wall-clock hours for the goal (all GPUs together)
    Interval usdPerMillionSamples;  // 0 when !priced
    Interval usdPerMillionTokens;   // 0 when !priced or the model has no sequence (tokensPerS 0)
    Interval usdToTrain;            // 0 when !priced
};

// The cost of `p` (a supported prediction with samplesPerS over all its GPUs) on `gpu`, for `goal`.
// An unsupported prediction or one with no throughput gives hoursToTrain etc. of 0 and priced as
// the database says; callers show "–" for a prediction that does not fit or is not supported.
TrainingCost trainingCost(const TrainingPrediction& p, const GpuSpec& gpu, const TrainingGoal& goal);

// Only the price of one GPU-hour on `gpu` (priced, amortised, usdPerGpuHour, priceSource,
// priceDate), as trainingCost states it; the intervals stay 0. For costs that are not of a goal in
// samples (a trace's cost per 1,000 steps).
TrainingCost gpuHourPrice(const GpuSpec& gpu);

// The reports' "Prices: ..." assumption over `gpus`: where the prices come from, the snapshot, the
// listings' dates, the amortisation where a purchase price stands in, and how many have no price
// (ranked after the priced ones by time).
std::string pricesAssumption(const std::vector<const GpuSpec*>& gpus, const PriceSnapshot& snapshot,
                             const Amortisation& amortisation);

}  // namespace ts::predictors
