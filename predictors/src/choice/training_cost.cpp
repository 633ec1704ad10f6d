#include "trainscope/predictors/choice/training_cost.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace ts::predictors {

namespace {

std::string fixed(double v, int decimals) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(decimals);
    os << v;
    return os.str();
}

}  // namespace

TrainingCost gpuHourPrice(const GpuSpec& gpu) {
    TrainingCost c;
    if (const Price* price = gpu.cheapestPrice()) {
        c.priced = true;
        c.amortised = price->amortised;
        c.priceDate = price->date;
        c.usdPerGpuHour = price->usdPerGpuHour;
        c.priceSource = (price->amortised ? "amortised " : "") + price->provider + " " + price->instance +
                        (price->date.empty() ? "" : " (" + price->date + ")");
    }
    return c;
}

std::string pricesAssumption(const std::vector<const GpuSpec*>& gpus, const PriceSnapshot& snapshot,
                             const Amortisation& m) {
    std::set<std::string> dates;
    int unpriced = 0, amortised = 0;
    for (const GpuSpec* g : gpus) {
        const Price* price = g->cheapestPrice();
        if (!price)
            ++unpriced;
        else if (price->amortised)
            ++amortised;
        if (price && !price->amortised && !price->date.empty()) dates.insert(price->date);
    }
    std::string prices =
        "Prices: per GPU the cheapest on-demand price per GPU-hour in the GPU database "
        "(docs/gpu-database.md)";
    if (!snapshot.date.empty()) prices += ", snapshot of " + snapshot.date;
    if (!dates.empty())
        prices +=
            ", listings dated " + (dates.size() == 1 ? *dates.begin() : *dates.begin() + " to " + *dates.rbegin());
    prices += "; each row names its provider and instance";
    if (amortised > 0)
        prices += "; for " + std::to_string(amortised) + (amortised == 1 ? " GPU" : " GPUs") +
                  " no cloud listing was found and the card's purchase price is amortised instead: over " +
                  fixed(m.years, 0) + " years at " + fixed(m.utilisation * 100, 0) +
                  "% utilisation, plus its TDP at $" + fixed(m.usdPerKWh, 2) + "/kWh";
    if (unpriced == 0)
        prices += "; all " + std::to_string(gpus.size()) + " GPUs have a price.";
    else
        prices += "; " + std::to_string(unpriced) + " of " + std::to_string(gpus.size()) +
                  " GPUs have no price and are ranked after the priced ones by time.";
    return prices;
}

TrainingCost trainingCost(const TrainingPrediction& p, const GpuSpec& gpu, const TrainingGoal& goal) {
    TrainingCost c = gpuHourPrice(gpu);
    if (!p.supported || p.samplesPerS.value <= 0 || p.samplesPerS.low <= 0) return c;
    const bool tokens = p.tokensPerS.value > 0 && p.tokensPerS.low > 0;
    if (goal.inTokens() && !tokens) return c;  // a goal in tokens for a model without a sequence
    const double gpus = double(std::max(p.scenario.dataParallel.gpus, 1));
    // Seconds per sample (or token) is the inverse of throughput, so the interval's ends swap.
    const Interval& rate = goal.inTokens() ? p.tokensPerS : p.samplesPerS;
    const double amount = goal.inTokens() ? goal.tokens : goal.samples();
    auto hoursFor = [&](double perS) { return amount / perS / 3600.0; };
    c.hoursToTrain = {hoursFor(rate.value), hoursFor(rate.high), hoursFor(rate.low)};
    if (!c.priced) return c;
    const double usdPerHour = c.usdPerGpuHour * gpus;
    auto perMillion = [&](double perS) { return usdPerHour * 1e6 / perS / 3600.0; };
    c.usdPerMillionSamples = {perMillion(p.samplesPerS.value), perMillion(p.samplesPerS.high),
                              perMillion(p.samplesPerS.low)};
    if (tokens)
        c.usdPerMillionTokens = {perMillion(p.tokensPerS.value), perMillion(p.tokensPerS.high),
                                 perMillion(p.tokensPerS.low)};
    c.usdToTrain = {usdPerHour * c.hoursToTrain.value, usdPerHour * c.hoursToTrain.low,
                    usdPerHour * c.hoursToTrain.high};
    return c;
}

}  // namespace ts::predictors
