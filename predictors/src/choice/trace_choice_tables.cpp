// A recorded job's hardware choice as CSV and JSON: the same rows and figures, for spreadsheets and
// scripts. docs/report.md documents every field.
#include <nlohmann/json.hpp>

#include "choice/choice_tables.h"
#include "trainscope/predictors/choice/trace_choice.h"

namespace ts::predictors {
namespace {

using nlohmann::ordered_json;

const char* priceBasis(const TrainingCost& price) {
    return price.amortised ? "amortised purchase" : "on-demand";
}

ordered_json classesJson(const TracePrediction& p) {
    ordered_json classes = ordered_json::array();
    for (const TraceClassTime& k : p.classes)
        classes.push_back({{"class", kernelClassName(k.kind)},
                           {"activities", k.activities},
                           {"measured_ms_per_step", k.measuredMs},
                           {"predicted_ms_per_step", k.predictedMs}});
    return classes;
}

}  // namespace

const std::vector<std::string>& traceChoiceCsvColumns() {
    static const std::vector<std::string> columns = {"rank",
                                                     "gpu",
                                                     "name",
                                                     "recorded",
                                                     "predicted",
                                                     "step_ms",
                                                     "speedup",
                                                     "steps_per_hour",
                                                     "priced",
                                                     "usd_per_gpu_hour",
                                                     "usd_per_1000_steps",
                                                     "price_source",
                                                     "price_basis",
                                                     "price_date",
                                                     "reason"};
    return columns;
}

std::string traceChoiceCsv(const TraceChoice& choice) {
    std::string out;
    auto record = [&](const std::vector<std::string>& fields) {
        for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csvField(fields[i]);
        out += "\r\n";
    };
    record(traceChoiceCsvColumns());
    for (const TraceChoiceRow& r : choice.rows) {
        const bool cost = r.predicted && r.price.priced;
        record({std::to_string(r.rank), r.gpuId, r.gpuName, r.recorded ? "true" : "false",
                r.predicted ? "true" : "false", r.predicted ? number(r.stepMs) : "",
                r.predicted ? number(r.speedup) : "", r.predicted ? number(r.stepsPerHour) : "",
                r.price.priced ? "true" : "false", r.price.priced ? number(r.price.usdPerGpuHour) : "",
                cost ? number(r.usdPer1000Steps) : "", r.price.priced ? r.price.priceSource : "",
                r.price.priced ? priceBasis(r.price) : "", r.price.priced ? r.price.priceDate : "", r.reason});
    }
    return out;
}

std::string traceChoiceJson(const TraceChoice& choice) {
    auto maybe = [](bool shown, const ordered_json& v) { return shown ? v : ordered_json(nullptr); };
    ordered_json j;
    j["format"] = "trainscope-trace-choice";
    j["format_version"] = kTraceChoiceFormatVersion;
    j["trace"] = {{"source", choice.source},
                  {"device_name", choice.deviceName},
                  {"recorded_on", choice.recordedGpuId},
                  {"recorded_on_name", choice.recordedGpuName},
                  {"match", choice.match},
                  {"steps", choice.steps},
                  {"measured_step_ms", choice.measuredStepMs},
                  {"replayed_step_ms", choice.replayedStepMs},
                  {"record_shapes", choice.recordShapes},
                  {"with_stack", choice.withStack},
                  {"collective_group_size", maybe(choice.collectiveGroupSize > 0, choice.collectiveGroupSize)},
                  {"notes", choice.traceNotes}};
    j["scenario"] = {{"fp32_math", fp32MathName(choice.options.change.math)},
                     {"batch", choice.batch > 0 ? ordered_json(choice.batch) : ordered_json("as recorded")},
                     {"recorded_batch", maybe(choice.recordedBatch > 0, choice.recordedBatch)},
                     {"precision", trainingPrecisionName(choice.precision)},
                     {"recorded_precision", trainingPrecisionName(choice.recordedPrecision)},
                     {"optimizer", "as recorded"},
                     {"data_parallel", "as recorded"}};
    j["prices_snapshot"] = maybe(!choice.options.priceSnapshot.date.empty(), choice.options.priceSnapshot.date);
    const TraceChoiceRow* cheapest = choice.cheapest();
    const TraceChoiceRow* fastest = choice.fastest();
    j["cheapest"] = maybe(cheapest != nullptr, cheapest ? cheapest->gpuId : "");
    j["fastest"] = maybe(fastest != nullptr, fastest ? fastest->gpuId : "");
    j["assumptions"] = choice.assumptions;
    ordered_json notes = ordered_json::array();
    for (const TraceNote& n : choice.notes) notes.push_back({{"text", n.text}, {"gpus", n.gpuIds}});
    j["notes"] = std::move(notes);
    ordered_json rows = ordered_json::array();
    for (const TraceChoiceRow& r : choice.rows) {
        const TracePrediction* p = r.prediction ? &*r.prediction : nullptr;
        ordered_json row;
        row["rank"] = r.rank;
        row["gpu"] = r.gpuId;
        row["name"] = r.gpuName;
        row["recorded"] = r.recorded;
        row["predicted"] = r.predicted;
        row["reason"] = maybe(!r.predicted, r.reason);
        row["step_ms"] = maybe(r.predicted, r.stepMs);
        row["speedup"] = maybe(r.predicted, r.speedup);
        row["steps_per_hour"] = maybe(r.predicted, r.stepsPerHour);
        row["priced"] = r.price.priced;
        row["usd_per_gpu_hour"] = maybe(r.price.priced, r.price.usdPerGpuHour);
        row["usd_per_1000_steps"] = maybe(r.predicted && r.price.priced, r.usdPer1000Steps);
        row["price_source"] = maybe(r.price.priced, r.price.priceSource);
        row["price_basis"] = maybe(r.price.priced, priceBasis(r.price));
        row["price_date"] = maybe(r.price.priced, r.price.priceDate);
        row["price_note"] = maybe(!r.price.priced && !r.priceNote.empty(), r.priceNote);
        row["host_waits"] = maybe(r.predicted, p ? p->replay.hostWaits : 0);
        row["dependencies"] = maybe(r.predicted, p ? p->replay.dependencies : 0);
        row["classes"] = r.predicted ? classesJson(*p) : ordered_json(nullptr);
        row["notes"] = p ? p->notes : std::vector<std::string>();
        rows.push_back(std::move(row));
    }
    j["ranking"] = std::move(rows);
    return j.dump(2) + "\n";
}

}  // namespace ts::predictors
