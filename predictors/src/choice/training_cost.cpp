#include "trainscope/predictors/choice/training_cost.h"

#include <algorithm>

namespace ts::predictors {

TrainingCost trainingCost(const TrainingPrediction& p, const GpuSpec& gpu, const TrainingGoal& goal) {
    TrainingCost c;
    if (const Price* price = gpu.cheapestPrice()) {
        c.priced = true;
        c.amortised = price->amortised;
        c.priceDate = price->date;
        c.usdPerGpuHour = price->usdPerGpuHour;
        c.priceSource = (price->amortised ? "amortised " : "") + price->provider + " " + price->instance +
                        (price->date.empty() ? "" : " (" + price->date + ")");
    }
    if (!p.supported || p.samplesPerS.value <= 0 || p.samplesPerS.low <= 0) return c;
    const double gpus = double(std::max(p.scenario.dataParallel.gpus, 1));
    const double samples = goal.samples();
    // Seconds per sample is the inverse of throughput, so the interval's ends swap.
    auto hoursFor = [&](double samplesPerS) { return samples / samplesPerS / 3600.0; };
    c.hoursToTrain = {hoursFor(p.samplesPerS.value), hoursFor(p.samplesPerS.high), hoursFor(p.samplesPerS.low)};
    if (!c.priced) return c;
    const double usdPerHour = c.usdPerGpuHour * gpus;
    auto perMillion = [&](double samplesPerS) { return usdPerHour * 1e6 / samplesPerS / 3600.0; };
    c.usdPerMillionSamples = {perMillion(p.samplesPerS.value), perMillion(p.samplesPerS.high),
                              perMillion(p.samplesPerS.low)};
    c.usdToTrain = {usdPerHour * c.hoursToTrain.value, usdPerHour * c.hoursToTrain.low,
                    usdPerHour * c.hoursToTrain.high};
    return c;
}

}  // namespace ts::predictors
