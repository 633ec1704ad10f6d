// The hardware choice's ranking as CSV and JSON: the same rows and figures, for spreadsheets and
// scripts. docs/report.md documents every field.
#include <charconv>
#include <nlohmann/json.hpp>

#include "choice/choice_tables.h"
#include "trainscope/predictors/choice/hardware_choice.h"

namespace ts::predictors {
namespace {

using nlohmann::ordered_json;

ordered_json interval(const Interval& i) {
    return {{"value", i.value}, {"low", i.low}, {"high", i.high}};
}

// What a row can show: figures at the recommendation; for a GPU where nothing fits only the memory
// of the closest miss (its throughput and cost would be of a run that cannot happen).
struct RowFigures {
    bool memory = false;   // peak memory, capacity and the largest batch
    bool running = false;  // throughput, iteration time, hours, cost
};

RowFigures figuresOf(const HardwareChoiceRow& r) {
    return {r.prediction.supported && r.batch > 0, r.recommended};
}

}  // namespace

const std::vector<std::string>& hardwareChoiceCsvColumns() {
    static const std::vector<std::string> columns = [] {
        std::vector<std::string> c = {"rank", "gpu", "name", "recommended", "precision", "batch"};
        auto interval = [&c](const std::string& stem) {
            for (const char* end : {"", "_low", "_high"}) c.push_back(stem + end);
        };
        interval("samples_per_s");
        interval("tokens_per_s");
        interval("iteration_ms");
        interval("peak_memory_bytes");
        c.push_back("capacity_bytes");
        interval("max_batch");
        interval("hours_to_train");
        c.insert(c.end(), {"priced", "usd_per_gpu_hour"});
        interval("usd_to_train");
        interval("usd_per_million_samples");
        interval("usd_per_million_tokens");
        c.insert(c.end(), {"price_source", "price_basis", "interconnect", "source", "reason"});
        return c;
    }();
    return columns;
}

std::string hardwareChoiceCsv(const HardwareChoice& choice) {
    std::string out;
    auto record = [&](const std::vector<std::string>& fields) {
        for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csvField(fields[i]);
        out += "\r\n";
    };
    record(hardwareChoiceCsvColumns());
    for (const HardwareChoiceRow& r : choice.rows) {
        const RowFigures show = figuresOf(r);
        const TrainingPrediction& p = r.prediction;
        const TrainingCost& c = r.cost;
        auto three = [](bool shown, const Interval& i) {
            return shown ? std::vector<std::string>{number(i.value), number(i.low), number(i.high)}
                         : std::vector<std::string>(3);
        };
        std::vector<std::string> f = {std::to_string(r.rank),
                                      r.gpuId,
                                      r.gpuName,
                                      r.recommended ? "true" : "false",
                                      show.memory ? trainingPrecisionName(r.precision) : "",
                                      show.memory ? std::to_string(r.batch) : ""};
        for (std::string& s : three(show.running, p.samplesPerS)) f.push_back(std::move(s));
        // Sequence models only (tokensPerS = samplesPerS x the sequence length).
        for (std::string& s : three(show.running && choice.seq > 0, p.tokensPerS)) f.push_back(std::move(s));
        for (std::string& s : three(show.running, p.iterationMs)) f.push_back(std::move(s));
        for (std::string& s : three(show.memory, p.peakMemoryBytes)) f.push_back(std::move(s));
        f.push_back(show.memory ? number(p.capacityBytes) : "");
        // The CSV orders the largest batch value, low, high like every other interval.
        for (std::string& s : three(show.memory, p.maxBatch)) f.push_back(std::move(s));
        for (std::string& s : three(show.running, c.hoursToTrain)) f.push_back(std::move(s));
        const bool cost = show.running && c.priced;
        f.push_back(c.priced ? "true" : "false");
        f.push_back(c.priced ? number(c.usdPerGpuHour) : "");
        for (const Interval* i : {&c.usdToTrain, &c.usdPerMillionSamples})
            for (std::string& s : three(cost, *i)) f.push_back(std::move(s));
        for (std::string& s : three(cost && choice.seq > 0, c.usdPerMillionTokens)) f.push_back(std::move(s));
        f.push_back(c.priced ? c.priceSource : "");
        f.push_back(c.priced ? (c.amortised ? "amortised purchase" : "on-demand") : "");
        f.push_back(show.running ? p.interconnect : "");
        f.push_back(show.running ? predictionSourceName(p.source) : "");
        f.push_back(r.reason);
        record(f);
    }
    return out;
}

std::string hardwareChoiceJson(const HardwareChoice& choice) {
    ordered_json j;
    j["format"] = "trainscope-hardware-choice";
    j["format_version"] = kHardwareChoiceFormatVersion;
    j["model"] = {{"label", choice.modelLabel},
                  {"name", choice.modelName},
                  {"parameters", choice.parameters},
                  {"active_parameters", choice.activeParameters},
                  {"tensor_parallel", choice.tensorParallel},
                  {"expert_parallel", choice.expertParallel},
                  {"parameters_per_gpu", choice.parametersPerGpu},
                  {"trainable_parameters", choice.trainableParameters},
                  {"seq", choice.seq > 0 ? ordered_json(choice.seq) : ordered_json(nullptr)}};
    const TrainingScenario& s = choice.base;
    ordered_json precisions = ordered_json::array();
    for (TrainingPrecision p : choice.options.precisions) precisions.push_back(trainingPrecisionName(p));
    j["scenario"] = {{"batch", choice.options.batch > 0 ? ordered_json(choice.options.batch) : ordered_json("auto")},
                     {"precisions", choice.options.precisions.empty() ? ordered_json("all") : precisions},
                     {"optimizer", optimizerName(s.optimizer)},
                     {"gpus", s.dataParallel.gpus},
                     {"interconnect", interconnectName(s.dataParallel.interconnect)},
                     {"checkpointing", checkpointingName(s.checkpointing)},
                     {"accumulation", s.accumulation},
                     {"zero_stage", s.dataParallel.zeroStage}};
    j["goal"] = choice.goal.inTokens() ? ordered_json{{"tokens", choice.goal.tokens}, {"seq", choice.seq}}
                                       : ordered_json{{"epochs", choice.goal.epochs},
                                                      {"dataset_samples", choice.goal.datasetSamples},
                                                      {"samples", choice.goal.samples()}};
    j["prices_snapshot"] = choice.options.priceSnapshot.date.empty() ? ordered_json(nullptr)
                                                                      : ordered_json(choice.options.priceSnapshot.date);
    j["assumptions"] = choice.assumptions;
    ordered_json rows = ordered_json::array();
    for (const HardwareChoiceRow& r : choice.rows) {
        const RowFigures show = figuresOf(r);
        const TrainingPrediction& p = r.prediction;
        const TrainingCost& c = r.cost;
        auto maybe = [](bool shown, const ordered_json& v) { return shown ? v : ordered_json(nullptr); };
        ordered_json row;
        row["rank"] = r.rank;
        row["gpu"] = r.gpuId;
        row["name"] = r.gpuName;
        row["recommended"] = r.recommended;
        row["reason"] = maybe(!r.recommended, r.reason);
        row["precision"] = maybe(show.memory, trainingPrecisionName(r.precision));
        row["batch"] = maybe(show.memory, r.batch);
        row["samples_per_s"] = maybe(show.running, interval(p.samplesPerS));
        row["tokens_per_s"] = maybe(show.running && choice.seq > 0, interval(p.tokensPerS));
        row["iteration_ms"] = maybe(show.running, interval(p.iterationMs));
        row["peak_memory_bytes"] = maybe(show.memory, interval(p.peakMemoryBytes));
        row["capacity_bytes"] = maybe(show.memory, p.capacityBytes);
        row["max_batch"] = maybe(show.memory, interval(p.maxBatch));
        row["hours_to_train"] = maybe(show.running, interval(c.hoursToTrain));
        row["priced"] = c.priced;
        row["usd_per_gpu_hour"] = maybe(c.priced, c.usdPerGpuHour);
        row["price_source"] = maybe(c.priced, c.priceSource);
        row["price_basis"] = maybe(c.priced, c.amortised ? "amortised purchase" : "on-demand");
        row["price_date"] = maybe(c.priced, c.priceDate);
        row["usd_to_train"] = maybe(show.running && c.priced, interval(c.usdToTrain));
        row["usd_per_million_samples"] = maybe(show.running && c.priced, interval(c.usdPerMillionSamples));
        row["usd_per_million_tokens"] =
            maybe(show.running && c.priced && choice.seq > 0, interval(c.usdPerMillionTokens));
        row["interconnect"] = maybe(show.running && !p.interconnect.empty(), p.interconnect);
        row["interconnect_notice"] = maybe(!p.interconnectNotice.empty(), p.interconnectNotice);
        row["source"] = maybe(show.running, predictionSourceName(p.source));
        row["source_detail"] = maybe(show.running, p.sourceDetail);
        row["notes"] = r.notes;
        rows.push_back(std::move(row));
    }
    j["ranking"] = std::move(rows);
    return j.dump(2) + "\n";
}

}  // namespace ts::predictors
