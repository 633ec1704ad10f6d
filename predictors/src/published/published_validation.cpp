#include "trainscope/predictors/published/published_validation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "scaling/csv_reader.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/iteration/data_parallel.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::predictors {

extern const char* const kBuiltinPublishedRunsJson;

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* const kColumns[] = {"model",     "sequence_or_image", "gpu_system", "gpu",  "gpu_count",
                                "precision", "batch_per_gpu",     "throughput", "unit", "table_title"};

std::string readText(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw ModelError(p.string(), "cannot be read");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool parseWhole(const std::string& text, int64_t& out) {
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

void readFile(const fs::path& path, std::vector<PublishedRow>& rows) {
    CsvReader csv(readText(path), path.string());
    std::vector<std::string> header, fields;
    if (!csv.next(header)) return;
    std::map<std::string, size_t> column;
    for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
    for (const char* c : kColumns)
        if (!column.count(c))
            throw ModelError(path.string(), std::string("not a published-throughput table: no column '") + c + "'");
    const std::string file = path.filename().string();
    const int before = int(rows.size());
    while (csv.next(fields)) {
        if (fields.size() != header.size())
            throw ModelError(path.string(), "line " + std::to_string(csv.line()) + ": " +
                                                std::to_string(fields.size()) + " fields, the header has " +
                                                std::to_string(header.size()));
        auto at = [&](const char* c) { return fields[column[c]]; };
        PublishedRow r;
        r.file = file;
        r.line = csv.line();
        r.index = int(rows.size()) - before;
        r.model = at("model");
        r.sequence = at("sequence_or_image");
        r.gpuSystem = at("gpu_system");
        r.gpu = at("gpu");
        r.precision = at("precision");
        r.batchText = at("batch_per_gpu");
        r.unit = at("unit");
        r.tableTitle = at("table_title");
        int64_t count = 0;
        if (!parseWhole(at("gpu_count"), count) || count < 1 || count > 65536)
            throw ModelError(path.string(), "line " + std::to_string(r.line) + ": gpu_count '" + at("gpu_count") +
                                                "' is not a number of GPUs");
        r.gpuCount = int(count);
        const std::string t = at("throughput");
        char* end = nullptr;
        r.throughput = std::strtod(t.c_str(), &end);
        if (t.empty() || end != t.c_str() + t.size() || !(r.throughput > 0) || !std::isfinite(r.throughput))
            throw ModelError(path.string(),
                             "line " + std::to_string(r.line) + ": throughput '" + t + "' is not a positive number");
        rows.push_back(std::move(r));
    }
}

// A whole number of the mapping within [lo, hi]: nlohmann's get<int64_t> of a fraction or of a
// float beyond int64's range is a silent truncation or undefined behaviour.
int64_t wholeNumber(const json& j, const std::string& origin, const std::string& what, int64_t lo, int64_t hi) {
    const bool whole = j.is_number_integer() || j.is_number_unsigned();
    if (!whole || (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(hi)) || j.get<int64_t>() < lo ||
        j.get<int64_t>() > hi)
        throw ModelError(origin, "malformed mapping: " + what + " must be a whole number from " + std::to_string(lo) +
                                     " to " + std::to_string(hi) + ", got " + j.dump());
    return j.get<int64_t>();
}

// A family's setting that is either one string or an object from the table's precisions to strings;
// nothing where the family does not set it for the row's precision.
std::optional<std::string> forPrecision(const json& family, const char* key, const PublishedRow& r,
                                        const std::string& origin) {
    if (!family.contains(key)) return std::nullopt;
    const json& v = family.at(key);
    if (v.is_string()) return v.get<std::string>();
    if (!v.is_object())
        throw ModelError(origin, "malformed mapping: " + r.model + " " + key +
                                     " must be a string or an object from the table's precisions to strings");
    if (!v.contains(r.precision)) return std::nullopt;
    if (!v.at(r.precision).is_string())
        throw ModelError(origin, "malformed mapping: " + r.model + " " + key + "." + r.precision + " must be a string");
    return v.at(r.precision).get<std::string>();
}

}  // namespace

const nlohmann::json& builtinPublishedMapping() {
    static const json mapping = json::parse(kBuiltinPublishedRunsJson);
    return mapping;
}

std::vector<PublishedRow> readPublishedRows(const std::vector<std::string>& paths) {
    std::vector<fs::path> files;
    for (const std::string& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (const auto& e : fs::directory_iterator(p))
                if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path());
        } else if (fs::exists(p, ec)) {
            files.emplace_back(p);
        } else {
            throw ModelError(p, "no such file or directory");
        }
    }
    std::sort(files.begin(), files.end());
    std::vector<PublishedRow> rows;
    for (const fs::path& f : files) readFile(f, rows);
    return rows;
}

PublishedMapping mapPublishedRows(const std::vector<PublishedRow>& rows, const json& mapping, const GpuDatabase& db,
                                  const std::string& origin) {
    PublishedMapping out;
    try {
        const json& gpus = mapping.at("gpus");
        const json& precisions = mapping.at("precisions");
        const json& families = mapping.at("families");
        const json systems = mapping.value("systems", json::array());
        for (const PublishedRow& r : rows) {
            auto unmapped = [&](std::string why) { out.unmapped.push_back({&r, std::move(why)}); };
            const json* family = nullptr;
            for (const json& f : families)
                if (f.at("model").get<std::string>() == r.model) family = &f;
            if (!family) {
                unmapped("no TrainScope model stands for it yet");
                continue;
            }
            if (family->contains("skip")) {
                unmapped(family->at("skip").get<std::string>());
                continue;
            }
            // The row's own entry: micro-batch, accumulation, tokens, sequence, or why it is skipped.
            const json rowsOf = family->value("rows", json::object());
            const json entry = rowsOf.value(std::to_string(r.index), json::object());
            if (entry.contains("skip")) {
                unmapped(entry.at("skip").get<std::string>());
                continue;
            }
            // The system the row ran on (the first entry whose name it contains): its GPU where the
            // GPU column is ambiguous, GPUs per node and InfiniBand rate per GPU.
            const json* system = nullptr;
            for (const json& sys : systems)
                if (r.gpuSystem.find(sys.at("match").get<std::string>()) != std::string::npos) {
                    system = &sys;
                    break;
                }
            auto fromSystem = [&](const char* key, double fallback) {
                return system && system->contains(key) ? system->at(key).get<double>() : mapping.value(key, fallback);
            };
            auto wholeFrom = [&](const json& j, const char* key, int64_t fallback, int64_t lo, int64_t hi) {
                return j.contains(key) ? wholeNumber(j.at(key), origin, r.model + " " + key, lo, hi) : fallback;
            };
            std::string gpuId;
            if (system && system->contains("gpu"))
                gpuId = system->at("gpu").get<std::string>();
            else if (gpus.contains(r.gpu))
                gpuId = gpus.at(r.gpu).get<std::string>();
            if (gpuId.empty()) {
                unmapped("GPU '" + r.gpu + "' is not mapped to the GPU database");
                continue;
            }
            const GpuSpec* gpu = db.find(gpuId);
            if (!gpu) {
                unmapped("GPU '" + gpuId + "' is not in the GPU database");
                continue;
            }
            // A family's own precisions where its runs differ from the table's usual meaning (BART's "BF16" is
            // the model itself in bf16, not autocast).
            const json& rowPrecisions = family->contains("precisions") ? family->at("precisions") : precisions;
            if (!rowPrecisions.contains(r.precision)) {
                unmapped("precision '" + r.precision + "' is not mapped");
                continue;
            }
            const json units = family->value("units", json::object());
            if (!units.contains(r.unit)) {
                unmapped("unit '" + r.unit + "' is not mapped");
                continue;
            }
            PublishedRun run;
            run.row = &r;
            run.family = r.model;
            run.modelSpec = entry.value("zoo", family->at("zoo").get<std::string>());
            constexpr int64_t kMaxSeq = int64_t(1) << 24, kMaxBatch = int64_t(1) << 30;
            run.seq = wholeFrom(entry, "seq", wholeFrom(*family, "seq", 0, 0, kMaxSeq), 0, kMaxSeq);
            run.gpuId = gpu->id;
            const auto precision = parseTrainingPrecision(rowPrecisions.at(r.precision).get<std::string>());
            if (!precision) throw ModelError(origin, "precision '" + r.precision + "' maps to no TrainScope precision");
            run.scenario.precision = *precision;
            // The optimizer and how it runs: one for the family, or one per table precision where the
            // scripts pick another by precision (BERT's SQuAD: apex's FusedAdam under AMP, BertAdam's
            // per-tensor loop otherwise).
            const std::optional<std::string> optimizerName = forPrecision(*family, "optimizer", r, origin);
            const auto optimizer = optimizerName ? parseOptimizer(*optimizerName) : std::nullopt;
            if (!optimizer) throw ModelError(origin, r.model + ": no known optimizer for precision " + r.precision);
            run.scenario.optimizer = *optimizer;
            if (const auto name = forPrecision(*family, "optimizer_implementation", r, origin)) {
                const auto implementation = parseOptimizerImplementation(*name);
                if (!implementation) throw ModelError(origin, r.model + ": unknown optimizer implementation");
                run.scenario.optimizerImplementation = *implementation;
            }
            // Units per predicted sample: a number, or tokens per sequence ("seq", "2seq": source and target).
            const json u = units.at(r.unit);
            if (u.is_string())
                run.unitsPerSample = double(run.seq) * (u.get<std::string>() == "2seq" ? 2 : 1);
            else
                run.unitsPerSample = u.get<double>();
            int64_t batch = 0;
            if (entry.contains("batch")) {
                batch = wholeFrom(entry, "batch", 0, 1, kMaxBatch);
                run.batchBasis = "mapping";
            } else if (entry.contains("tokens") && run.seq > 0) {
                batch = std::max<int64_t>(1, wholeFrom(entry, "tokens", 0, 1, kMaxBatch * kMaxSeq) / run.seq);
                run.batchBasis = "mapping: tokens per GPU / sequence length";
            } else if (parseWhole(r.batchText, batch) && batch > 0) {
                run.batchBasis = "table";
            }
            if (batch < 1) {
                unmapped("no batch per GPU: the table gives '" + r.batchText + "' and the mapping none");
                continue;
            }
            run.scenario.batch = batch;
            run.scenario.accumulation = wholeFrom(entry, "accumulation", 1, 1, int64_t(1) << 20);
            // The activations' memory format: "channels_last": true, or the table's precisions
            // ("AMP") whose runs were channels-last; PyTorch's default (channels-first) otherwise.
            if (family->contains("channels_last")) {
                const json& format = family->at("channels_last");
                if (format.is_boolean()) {
                    run.scenario.channelsLast = format.get<bool>();
                } else if (format.is_array()) {
                    for (const json& x : format)
                        run.scenario.channelsLast |= x.is_string() && x.get<std::string>() == r.precision;
                } else {
                    throw ModelError(origin, r.model + " channels_last: true, false or a list of the table's "
                                                       "precisions (\"AMP\")");
                }
            }
            run.scenario.dataParallel.gpus = r.gpuCount;
            run.scenario.dataParallel.gpusPerNode = int(
                system && system->contains("gpus_per_node") ? wholeFrom(*system, "gpus_per_node", 8, 1, 1024)
                                                            : wholeFrom(mapping, "gpus_per_node", 8, 1, 1024));
            if (r.gpuCount > run.scenario.dataParallel.gpusPerNode) {
                run.scenario.dataParallel.interconnect = InterconnectKind::InfiniBand;
                run.scenario.dataParallel.infinibandGbps = fromSystem("infiniband_gbps", 200.0);
                if (!(run.scenario.dataParallel.infinibandGbps > 0 && run.scenario.dataParallel.infinibandGbps <= 1e5))
                    throw ModelError(origin, "malformed mapping: infiniband_gbps must be above 0 and at most 100000");
            } else {
                run.scenario.dataParallel.interconnect = InterconnectKind::NvLink;
            }
            out.runs.push_back(std::move(run));
        }
    } catch (const json::exception& e) {
        throw ModelError(origin, std::string("malformed mapping: ") + e.what());
    }
    return out;
}

ErrorSummary summarise(const std::vector<double>& errors) {
    ErrorSummary s;
    s.n = int(errors.size());
    if (errors.empty()) return s;
    std::vector<double> a;
    double signedSum = 0, within = 0;
    for (double e : errors) {
        a.push_back(std::abs(e) * 100);
        signedSum += e * 100;
        within += std::abs(e) <= 0.10 ? 1 : 0;
    }
    std::sort(a.begin(), a.end());
    double sum = 0;
    for (double x : a) sum += x;
    s.meanAbsPct = sum / double(a.size());
    const size_t m = a.size() / 2;
    s.medianAbsPct = a.size() % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
    s.meanSignedPct = signedSum / double(a.size());
    s.within10Pct = within / double(a.size());
    return s;
}

nlohmann::ordered_json errorSummaryJson(const ErrorSummary& s) {
    return {{"n", s.n},
            {"mean_abs_pct", s.meanAbsPct},
            {"median_abs_pct", s.medianAbsPct},
            {"mean_signed_pct", s.meanSignedPct},
            {"within_10_pct", s.within10Pct}};
}

namespace {

std::string precisionClass(const std::string& p) {
    return p == "FP32" || p == "TF32" ? "full" : "mixed";
}

}  // namespace

std::vector<PublishedRatio> publishedRatios(const std::vector<PublishedPrediction>& predictions) {
    std::vector<PublishedRatio> out;
    for (size_t i = 0; i < predictions.size(); ++i) {
        for (size_t j = 0; j < predictions.size(); ++j) {
            if (i == j) continue;
            const PublishedPrediction& a = predictions[i];
            const PublishedPrediction& b = predictions[j];
            if (!a.failure.empty() || !b.failure.empty()) continue;
            const PublishedRun& ra = *a.run;
            const PublishedRun& rb = *b.run;
            if (ra.family != rb.family || ra.modelSpec != rb.modelSpec || ra.seq != rb.seq ||
                ra.row->unit != rb.row->unit)
                continue;
            const bool sameGpu = ra.gpuId == rb.gpuId && ra.row->gpuSystem == rb.row->gpuSystem;
            const bool samePrecision = ra.row->precision == rb.row->precision;
            const bool sameClass = precisionClass(ra.row->precision) == precisionClass(rb.row->precision);
            const bool sameBatch = ra.scenario.batch == rb.scenario.batch;
            const bool sameCount = ra.row->gpuCount == rb.row->gpuCount;
            std::string kind;
            // Each unordered pair once: a is the faster configuration in the stated direction.
            if (!sameGpu && sameClass && sameCount && ra.row->gpu > rb.row->gpu)
                kind = "gpu";  // A100 vs V100 (full: TF32 vs FP32, as NVIDIA compares them)
            else if (sameGpu && !sameClass && sameCount && precisionClass(ra.row->precision) == "mixed")
                kind = "precision";
            else if (sameGpu && samePrecision && !sameBatch && sameCount && ra.scenario.batch > rb.scenario.batch)
                kind = "batch";
            else if (sameGpu && samePrecision && sameBatch && rb.row->gpuCount == 1 && ra.row->gpuCount > 1)
                kind = "gpus";
            if (kind.empty()) continue;
            // Same table only for GPU counts and batches (a table is one system and set-up).
            if ((kind == "batch" || kind == "gpus") && ra.row->tableTitle != rb.row->tableTitle) continue;
            out.push_back({kind, &a, &b});
        }
    }
    return out;
}

struct PublishedPredictor::Model {
    std::unique_ptr<Graph> graph;
    std::unique_ptr<TrainingPredictor> predictor;
    std::string failure;
};

PublishedPredictor::PublishedPredictor(const PublishedMapping& mapping, const GpuDatabase& db,
                                       const std::function<void(const std::string&)>& progress)
    : mapping_(mapping), db_(db) {
    for (const PublishedRun& run : mapping.runs) {
        auto [it, added] = models_.try_emplace({run.modelSpec, run.seq});
        if (!added) continue;
        if (progress) progress(run.modelSpec);
        it->second = std::make_unique<Model>();
        try {
            it->second->graph = std::make_unique<Graph>(loadModel(run.modelSpec));
            it->second->predictor = std::make_unique<TrainingPredictor>(*it->second->graph, run.seq);
        } catch (const std::runtime_error& e) {  // ModelError, ShapeError: a model that cannot be built
            it->second->failure = e.what();
        }
    }
}

PublishedPredictor::~PublishedPredictor() = default;

std::vector<PublishedPrediction> PublishedPredictor::predict(const StreamModel& stream) const {
    std::vector<PublishedPrediction> out;
    out.reserve(mapping_.runs.size());
    for (const auto& [key, m] : models_)
        if (m->predictor) m->predictor->setStreamModel(stream);
    for (const PublishedRun& run : mapping_.runs) {
        const Model& m = *models_.at({run.modelSpec, run.seq});
        PublishedPrediction p;
        p.run = &run;
        p.measured = run.row->throughput;
        if (!m.predictor) {
            p.failure = m.failure;
        } else {
            const TrainingPrediction t = m.predictor->predict(db_.get(run.gpuId), run.scenario, false);
            if (!t.supported) {
                p.failure = t.reason;
            } else {
                // Per micro-batch: with gradient accumulation (run.scenario.accumulation) the
                // optimizer step and the all-reduce happen once per k micro-batches (DDP's no_sync).
                const double ms = t.iterationMs.value;
                p.predicted = 1000.0 * double(run.scenario.batch) * run.row->gpuCount / ms * run.unitsPerSample;
                p.intervalLow = p.predicted * t.iterationMs.value / t.iterationMs.high;
                p.intervalHigh = p.predicted * t.iterationMs.value / t.iterationMs.low;
                p.fits = t.fits;
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

PublishedReport summarisePublished(std::vector<PublishedPrediction> predictions,
                                   const std::vector<UnmappedRow>& unmapped) {
    PublishedReport report;
    report.unmapped = unmapped;
    report.predictions = std::move(predictions);
    std::vector<double> all;
    std::map<std::string, std::vector<double>> byModel, byGpu, byPrecision, byCount;
    for (const PublishedPrediction& p : report.predictions) {
        if (!p.failure.empty()) continue;
        const double e = p.error();
        all.push_back(e);
        byModel[p.run->family].push_back(e);
        byGpu[p.run->gpuId].push_back(e);
        byPrecision[p.run->row->precision].push_back(e);
        byCount[std::to_string(p.run->row->gpuCount)].push_back(e);
    }
    report.overall = summarise(all);
    for (auto& [k, v] : byModel) report.byModel[k] = summarise(v);
    for (auto& [k, v] : byGpu) report.byGpu[k] = summarise(v);
    for (auto& [k, v] : byPrecision) report.byPrecision[k] = summarise(v);
    for (auto& [k, v] : byCount) report.byGpuCount[k] = summarise(v);
    report.ratios = publishedRatios(report.predictions);
    std::vector<double> ratioErrors;
    std::map<std::string, std::vector<double>> byKind;
    for (const PublishedRatio& r : report.ratios) {
        ratioErrors.push_back(r.error());
        byKind[r.kind].push_back(r.error());
    }
    report.ratiosOverall = summarise(ratioErrors);
    for (auto& [k, v] : byKind) report.ratiosByKind[k] = summarise(v);
    int covered = 0, compared = 0;
    for (const PublishedPrediction& p : report.predictions) {
        if (!p.failure.empty()) continue;
        ++compared;
        covered += p.measured >= p.intervalLow && p.measured <= p.intervalHigh;
    }
    report.intervalCoverage = compared ? double(covered) / compared : 0;
    return report;
}

PublishedReport validatePublished(const PublishedMapping& mapping, const GpuDatabase& db,
                                  const PublishedOptions& options) {
    const PublishedPredictor predictor(mapping, db, options.progress);
    return summarisePublished(predictor.predict(options.model ? *options.model : StreamModel::shipped()),
                              mapping.unmapped);
}

namespace {

nlohmann::ordered_json summariesJson(const std::map<std::string, ErrorSummary>& m) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [k, s] : m) j[k] = errorSummaryJson(s);
    return j;
}

std::string rowLabel(const PublishedRun& r) {
    std::ostringstream s;
    s << r.row->file << ':' << r.row->line;
    return s.str();
}

void printSummaryRow(std::ostream& out, const std::string& name, const ErrorSummary& s) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "  %-28s %5d %9.1f%% %9.1f%% %+9.1f%% %8.0f%%\n", name.c_str(), s.n, s.meanAbsPct,
                  s.medianAbsPct, s.meanSignedPct, 100 * s.within10Pct);
    out << buf;
}

void printSummaries(std::ostream& out, const std::string& title, const std::map<std::string, ErrorSummary>& m) {
    out << "\n" << title << "\n";
    out << "  " << std::string(28, ' ') << "     n      mean    median    signed   <=10%\n";
    for (const auto& [k, s] : m) printSummaryRow(out, k, s);
}

}  // namespace

nlohmann::ordered_json publishedReportJson(const PublishedReport& r) {
    nlohmann::ordered_json j;
    j["overall"] = errorSummaryJson(r.overall);
    j["by_model"] = summariesJson(r.byModel);
    j["by_gpu"] = summariesJson(r.byGpu);
    j["by_precision"] = summariesJson(r.byPrecision);
    j["by_gpu_count"] = summariesJson(r.byGpuCount);
    j["ratios"] = errorSummaryJson(r.ratiosOverall);
    j["ratios_by_kind"] = summariesJson(r.ratiosByKind);
    j["interval_coverage"] = r.intervalCoverage;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const PublishedPrediction& p : r.predictions) {
        const PublishedRun& run = *p.run;
        nlohmann::ordered_json row = {{"file", run.row->file},
                                      {"line", run.row->line},
                                      {"model", run.family},
                                      {"zoo", run.modelSpec},
                                      {"gpu", run.gpuId},
                                      {"gpus", run.row->gpuCount},
                                      {"precision", run.row->precision},
                                      {"batch", run.scenario.batch},
                                      {"accumulation", run.scenario.accumulation},
                                      {"channels_last", run.scenario.channelsLast},
                                      {"batch_basis", run.batchBasis},
                                      {"unit", run.row->unit},
                                      {"measured", p.measured}};
        if (p.failure.empty()) {
            row["predicted"] = p.predicted;
            row["predicted_low"] = p.intervalLow;
            row["predicted_high"] = p.intervalHigh;
            row["error_pct"] = 100 * p.error();
            row["fits"] = p.fits;
        } else {
            row["failure"] = p.failure;
        }
        rows.push_back(row);
    }
    j["rows"] = rows;
    nlohmann::ordered_json unmapped = nlohmann::ordered_json::array();
    for (const UnmappedRow& u : r.unmapped)
        unmapped.push_back({{"file", u.row->file}, {"line", u.row->line}, {"model", u.row->model}, {"why", u.why}});
    j["unmapped"] = unmapped;
    return j;
}

void printPublishedReport(std::ostream& out, const PublishedReport& r) {
    out << "Published training throughput (NVIDIA DeepLearningExamples, PyTorch) against TrainScope's predictions\n";
    out << "error = predicted / published - 1\n\n";
    char buf[400];
    std::snprintf(buf, sizeof buf, "%-24s %-26s %-16s %4s %-5s %6s %12s %12s %8s\n", "row", "model", "gpu", "gpus",
                  "prec", "batch", "published", "predicted", "error");
    out << buf;
    for (const PublishedPrediction& p : r.predictions) {
        const PublishedRun& run = *p.run;
        if (!p.failure.empty()) {
            std::snprintf(buf, sizeof buf, "%-24s %-26.26s %-16s %4d %-5s %6lld %12.4g   not predicted: %s\n",
                          rowLabel(run).c_str(), run.family.c_str(), run.gpuId.c_str(), run.row->gpuCount,
                          run.row->precision.c_str(), (long long)run.scenario.batch, p.measured, p.failure.c_str());
        } else {
            std::snprintf(buf, sizeof buf, "%-24s %-26.26s %-16s %4d %-5s %6lld %12.4g %12.4g %+7.1f%%%s\n",
                          rowLabel(run).c_str(), run.family.c_str(), run.gpuId.c_str(), run.row->gpuCount,
                          run.row->precision.c_str(), (long long)run.scenario.batch, p.measured, p.predicted,
                          100 * p.error(), p.fits ? "" : "  (predicted not to fit)");
        }
        out << buf;
    }
    out << "\nAbsolute throughput\n";
    out << "  " << std::string(28, ' ') << "     n      mean    median    signed   <=10%\n";
    printSummaryRow(out, "all rows", r.overall);
    std::snprintf(buf, sizeof buf, "  published figure inside the predicted interval: %.0f%% of the rows\n",
                  100 * r.intervalCoverage);
    out << buf;
    printSummaries(out, "By model", r.byModel);
    printSummaries(out, "By GPU", r.byGpu);
    printSummaries(out, "By precision", r.byPrecision);
    printSummaries(out, "By GPU count", r.byGpuCount);
    out << "\nRatios between rows of one model (the benchmark's pipeline cancels)\n";
    out << "  " << std::string(28, ' ') << "     n      mean    median    signed   <=10%\n";
    printSummaryRow(out, "all ratios", r.ratiosOverall);
    for (const auto& [k, s] : r.ratiosByKind) printSummaryRow(out, k, s);
    std::map<std::string, int> whyCount;
    for (const UnmappedRow& u : r.unmapped) ++whyCount[u.row->model + ": " + u.why];
    out << "\nRows not predicted (" << r.unmapped.size() << ")\n";
    for (const auto& [why, n] : whyCount) out << "  " << n << " x " << why << "\n";
    out << "\nTargets (issue 19): absolute mean <= 10% (median <= 7%), ratios mean <= 7%\n";
}

void writePublishedPredictions(std::ostream& out, const PublishedReport& r) {
    out << "file,line,model,zoo,gpu,gpus,precision,batch,unit,published,predicted,error_pct,fits\n";
    for (const PublishedPrediction& p : r.predictions) {
        const PublishedRun& run = *p.run;
        auto quoted = [](const std::string& s) {
            std::string q = "\"";
            for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
            return q + "\"";
        };
        out << run.row->file << ',' << run.row->line << ',' << quoted(run.family) << ',' << quoted(run.modelSpec) << ','
            << run.gpuId << ',' << run.row->gpuCount << ',' << run.row->precision << ',' << run.scenario.batch << ','
            << quoted(run.row->unit) << ',' << p.measured << ',';
        if (p.failure.empty())
            out << p.predicted << ',' << 100 * p.error() << ',' << (p.fits ? 1 : 0) << '\n';
        else
            out << ",,\n";
    }
}

}  // namespace ts::predictors
