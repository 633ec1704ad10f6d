// The hardware choice: the ranking follows the predicted costs (then time, then GPUs where nothing
// fits, with the reason), each recommendation is the documented rule re-derived with predict(),
// and the CSV and JSON carry the same rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "trainscope/core/fine_tuning.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/choice/hardware_choice.h"

using namespace ts;
using namespace ts::predictors;

namespace {

// Small enough that every test here runs in well under a second.
const char* kModel = "zoo:resnet18?image=64";

struct Fixture {
    Graph graph = loadModel(kModel);
    TrainingPredictor predictor{graph};
    const GpuDatabase& db = GpuDatabase::builtin();
    std::vector<const GpuSpec*> all() const {
        std::vector<const GpuSpec*> gpus;
        for (const GpuSpec& g : db.gpus()) gpus.push_back(&g);
        return gpus;
    }
};

const GpuSpec& gpuOf(const GpuDatabase& db, const std::string& id) {
    return db.get(id);
}

// RFC 4180 records (quoted fields with commas, doubled quotes, CRLF).
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
    std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        std::string& field = records.back().back();
        if (quoted) {
            if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"')
                field += text[++i];
            else if (ch == '"')
                quoted = false;
            else
                field += ch;
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            records.back().emplace_back();
        } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            ++i;
            records.emplace_back(1);
        } else {
            field += ch;
        }
    }
    if (records.back().size() == 1 && records.back().front().empty()) records.pop_back();
    return records;
}

}  // namespace

TEST(HardwareChoice, CandidateBatchesArePowersOfTwoAndOneAndAHalfTimesThem) {
    EXPECT_EQ(candidateBatches(20), (std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12, 16}));
    EXPECT_EQ(candidateBatches().back(), kMaxCandidateBatch);
}

TEST(HardwareChoice, RankingFollowsCostThenTimeThenNothingFits) {
    Fixture f;
    TrainingGoal goal;
    goal.epochs = 3;
    const HardwareChoice c = chooseHardware(f.predictor, f.all(), TrainingScenario{}, goal);
    ASSERT_EQ(c.rows.size(), f.db.gpus().size());
    int group = 0;  // 0 priced, 1 unpriced, 2 nothing fits: never goes back
    const HardwareChoiceRow* previous = nullptr;
    int priced = 0;
    for (size_t i = 0; i < c.rows.size(); ++i) {
        const HardwareChoiceRow& r = c.rows[i];
        EXPECT_EQ(r.rank, int(i) + 1);
        const int g = !r.recommended ? 2 : r.cost.priced ? 0 : 1;
        ASSERT_GE(g, group) << r.gpuId << " ranked after a row of a later group";
        if (g == group && previous && g == 0) {
            EXPECT_LE(previous->cost.usdToTrain.value, r.cost.usdToTrain.value);
        }
        if (g == group && previous && g == 1) {
            EXPECT_LE(previous->cost.hoursToTrain.value, r.cost.hoursToTrain.value);
        }
        if (r.recommended) {
            // The cost is trainingCost's, at the recommendation, for the goal.
            const TrainingCost expected = trainingCost(r.prediction, gpuOf(f.db, r.gpuId), goal);
            EXPECT_DOUBLE_EQ(r.cost.usdToTrain.value, expected.usdToTrain.value);
            EXPECT_DOUBLE_EQ(r.cost.hoursToTrain.value, expected.hoursToTrain.value);
            EXPECT_GT(r.cost.hoursToTrain.value, 0);
            EXPECT_EQ(r.prediction.scenario.batch, r.batch);
            EXPECT_EQ(r.prediction.scenario.precision, r.precision);
        }
        priced += g == 0;
        group = g;
        previous = &r;
    }
    EXPECT_GE(priced, 5);
    EXPECT_FALSE(c.assumptions.empty());
}

TEST(HardwareChoice, CheapestIsAlwaysSaidOfTheSetItWasChosenFrom) {
    Fixture f;
    // Three priced GPUs that all fit: "cheapest" is of all of them.
    const std::vector<const GpuSpec*> priced = {&f.db.get("t4"), &f.db.get("a100-sxm4-80gb"), &f.db.get("h100-sxm")};
    EXPECT_EQ(rankingScope(chooseHardware(f.predictor, priced, TrainingScenario{}, TrainingGoal{})), "of all 3 GPUs");
    // Add one without a price (the P4, its price removed as a user file can): the sentence names the
    // priced subset and what is left out.
    GpuDatabase unpriced = f.db;
    unpriced.applyOverrides(R"({"format": "trainscope-gpu-database", "version": 1,
                                "gpus": [{"id": "p4", "prices": [], "purchase": []}]})",
                            "test");
    std::vector<const GpuSpec*> mixed = priced;
    mixed.push_back(&unpriced.get("p4"));
    ASSERT_EQ(unpriced.get("p4").cheapestPrice(), nullptr);
    const HardwareChoice c = chooseHardware(f.predictor, mixed, TrainingScenario{}, TrainingGoal{});
    EXPECT_EQ(rankingScope(c), "of the 3 priced GPUs where a batch fits, out of 4 (1 without a price)");
    // The assumptions give the snapshot and count the unpriced GPUs.
    HardwareChoiceOptions o;
    o.priceSnapshot = f.db.priceSnapshot();
    const HardwareChoice dated = chooseHardware(f.predictor, mixed, TrainingScenario{}, TrainingGoal{}, o);
    bool stated = false;
    for (const std::string& a : dated.assumptions)
        if (a.rfind("Prices:", 0) == 0) {
            stated = true;
            EXPECT_NE(a.find("snapshot of " + f.db.priceSnapshot().date), std::string::npos) << a;
            EXPECT_NE(a.find("1 of 4 GPUs have no price"), std::string::npos) << a;
        }
    EXPECT_TRUE(stated);
}

TEST(HardwareChoice, RecommendationIsTheDocumentedRule) {
    Fixture f;
    const std::vector<const GpuSpec*> gpus = {&f.db.get("t4"), &f.db.get("a100-sxm4-80gb"), &f.db.get("h100-sxm")};
    const std::vector<TrainingPrecision> precisions = {TrainingPrecision::Fp32, TrainingPrecision::AmpBf16};
    HardwareChoiceOptions options;
    options.precisions = precisions;
    TrainingScenario base;
    base.optimizer = Optimizer::Adam;
    const HardwareChoice c = chooseHardware(f.predictor, gpus, base, TrainingGoal{}, options);
    for (const HardwareChoiceRow& r : c.rows) {
        ASSERT_TRUE(r.recommended) << r.gpuId << ": " << r.reason;
        const GpuSpec& gpu = gpuOf(f.db, r.gpuId);
        EXPECT_TRUE(r.prediction.fits);
        EXPECT_LE(double(r.batch), r.prediction.maxBatch.low) << r.gpuId;
        // Re-derive with predict(): per precision the best fitting throughput and the smallest batch
        // within 3% of it; amp-bf16 replaces fp32 only when more than 3% faster.
        std::optional<std::pair<TrainingPrecision, double>> expected;
        for (TrainingPrecision p : precisions) {  // in the rule's order of preference
            TrainingScenario s = base;
            s.precision = p;
            const TrainingPrediction one = f.predictor.predict(gpu, s, false);
            if (!one.supported) continue;
            std::vector<std::pair<int64_t, double>> fitting;
            for (int64_t b : candidateBatches(int64_t(one.maxBatch.low))) {
                s.batch = b;
                fitting.emplace_back(b, f.predictor.predict(gpu, s, false).samplesPerS.value);
            }
            ASSERT_FALSE(fitting.empty());
            double best = 0;
            for (const auto& [b, t] : fitting) best = std::max(best, t);
            const auto chosen =
                std::find_if(fitting.begin(), fitting.end(), [&](const auto& bt) { return bt.second >= 0.97 * best; });
            if (p == r.precision) {
                EXPECT_EQ(chosen->first, r.batch) << r.gpuId << " " << trainingPrecisionName(p);
                EXPECT_NEAR(chosen->second, r.prediction.samplesPerS.value, 1e-3 * chosen->second);
            }
            if (!expected || chosen->second > 1.03 * expected->second) expected = {{p, chosen->second}};
        }
        ASSERT_TRUE(expected.has_value());
        EXPECT_EQ(r.precision, expected->first) << r.gpuId;
        if (r.precision != TrainingPrecision::Fp32) {
            ASSERT_FALSE(r.notes.empty());
            EXPECT_NE(r.notes.front().find("numerics"), std::string::npos) << r.notes.front();
        }
    }
}

TEST(HardwareChoice, GpusWhereNothingFitsAreLastWithTheReason) {
    Fixture f;
    GpuSpec tiny = f.db.get("a10");
    tiny.id = "tiny";
    tiny.memoryGB.value = 0.5;  // less than the CUDA context alone
    const std::vector<const GpuSpec*> gpus = {&tiny, &f.db.get("p100-pcie-16gb"), &f.db.get("a100-sxm4-40gb")};
    HardwareChoiceOptions options;
    options.precisions = {TrainingPrecision::AmpBf16, TrainingPrecision::Fp32};
    HardwareChoice c = chooseHardware(f.predictor, gpus, TrainingScenario{}, TrainingGoal{}, options);
    ASSERT_EQ(c.rows.size(), 3u);
    EXPECT_EQ(c.rows[0].gpuId, "a100-sxm4-40gb");  // priced, and P100 runs only fp32: slower and dearer
    EXPECT_TRUE(c.rows[0].recommended);
    EXPECT_EQ(c.rows[1].gpuId, "p100-pcie-16gb");
    EXPECT_EQ(c.rows[1].precision, TrainingPrecision::Fp32);
    EXPECT_EQ(c.rows[2].gpuId, "tiny");
    EXPECT_FALSE(c.rows[2].recommended);
    EXPECT_NE(c.rows[2].reason.find("batch 1 does not fit"), std::string::npos) << c.rows[2].reason;
    EXPECT_NE(c.rows[2].reason.find("0.5 GiB this GPU has"), std::string::npos) << c.rows[2].reason;

    // Only bf16 asked: the P100 has none, and says why.
    options.precisions = {TrainingPrecision::AmpBf16};
    c = chooseHardware(f.predictor, gpus, TrainingScenario{}, TrainingGoal{}, options);
    EXPECT_EQ(c.rows[1].gpuId, "tiny");
    EXPECT_EQ(c.rows[2].gpuId, "p100-pcie-16gb");
    EXPECT_NE(c.rows[2].reason.find("no precision considered is supported"), std::string::npos) << c.rows[2].reason;
    EXPECT_EQ(c.rows[2].cost.priced, f.db.get("p100-pcie-16gb").cheapestPrice() != nullptr);  // the price is known

    // A fixed batch too large for a 16 GB GPU at any precision (16 KB a sample would fill it).
    options.precisions = {};
    options.batch = int64_t(1) << 20;
    c = chooseHardware(f.predictor, {&f.db.get("t4")}, TrainingScenario{}, TrainingGoal{}, options);
    EXPECT_FALSE(c.rows[0].recommended);
    EXPECT_NE(c.rows[0].reason.find("batch 1048576 does not fit"), std::string::npos) << c.rows[0].reason;
}

TEST(HardwareChoice, CsvReadsBackAsTheSameRows) {
    Fixture f;
    GpuSpec tiny = f.db.get("l4");
    tiny.id = "tiny, \"quoted\"";  // a field that needs quoting
    tiny.memoryGB.value = 0.5;
    std::vector<const GpuSpec*> gpus = f.all();
    gpus.push_back(&tiny);
    const HardwareChoice c = chooseHardware(f.predictor, gpus, TrainingScenario{}, TrainingGoal{});
    const auto records = parseCsv(hardwareChoiceCsv(c));
    ASSERT_EQ(records.size(), c.rows.size() + 1);
    const std::vector<std::string>& header = records.front();
    EXPECT_EQ(header, hardwareChoiceCsvColumns());
    auto column = [&](const std::string& name) {
        return size_t(std::find(header.begin(), header.end(), name) - header.begin());
    };
    for (size_t i = 0; i < c.rows.size(); ++i) {
        const auto& rec = records[i + 1];
        const HardwareChoiceRow& r = c.rows[i];
        ASSERT_EQ(rec.size(), header.size());
        EXPECT_EQ(rec[column("rank")], std::to_string(r.rank));
        EXPECT_EQ(rec[column("gpu")], r.gpuId);
        EXPECT_EQ(rec[column("recommended")], r.recommended ? "true" : "false");
        EXPECT_EQ(rec[column("reason")], r.reason);
        if (!r.recommended) {
            EXPECT_EQ(rec[column("samples_per_s")], "");
            continue;
        }
        EXPECT_EQ(rec[column("precision")], trainingPrecisionName(r.precision));
        EXPECT_EQ(std::stoll(rec[column("batch")]), r.batch);
        EXPECT_EQ(std::stod(rec[column("samples_per_s")]), r.prediction.samplesPerS.value);
        EXPECT_EQ(std::stod(rec[column("samples_per_s_low")]), r.prediction.samplesPerS.low);
        EXPECT_EQ(std::stod(rec[column("hours_to_train_high")]), r.cost.hoursToTrain.high);
        if (r.cost.priced)
            EXPECT_EQ(std::stod(rec[column("usd_to_train")]), r.cost.usdToTrain.value);
        else
            EXPECT_EQ(rec[column("usd_to_train")], "");
    }
}

// A fine-tune ranks GPUs for the adapters it trains: the choice states how many (GPT-2 with PEFT's
// all-linear LoRA at r = 8: 1,179,648, PEFT 0.21.2's own count, test_fine_tuning.cpp) beside the
// whole model's parameters.
TEST(HardwareChoice, AFineTuneSaysWhatTrains) {
    LoraOptions lora;
    lora.rank = 8;
    const Graph g = withLora(loadModel("zoo:gpt2?seq=32"), lora);
    TrainingPredictor predictor(g);
    HardwareChoiceOptions options;
    options.batch = 1;
    const HardwareChoice c = chooseHardware(predictor, {&GpuDatabase::builtin().get("h100-sxm")}, TrainingScenario{},
                                            TrainingGoal{}, options);
    EXPECT_EQ(c.trainableParameters, 1179648);
    EXPECT_EQ(c.parameters, 124439808 + 1179648);
    const nlohmann::json j = nlohmann::json::parse(hardwareChoiceJson(c));
    EXPECT_EQ(j["model"]["trainable_parameters"].get<double>(), 1179648);
}

TEST(HardwareChoice, JsonHasTheDocumentedFields) {
    Fixture f;
    HardwareChoiceOptions options;
    options.modelLabel = kModel;
    options.batch = 16;
    const HardwareChoice c = chooseHardware(f.predictor, f.all(), TrainingScenario{}, TrainingGoal{}, options);
    const nlohmann::json j = nlohmann::json::parse(hardwareChoiceJson(c));
    EXPECT_EQ(j["format"], "trainscope-hardware-choice");
    EXPECT_EQ(j["format_version"], kHardwareChoiceFormatVersion);
    EXPECT_EQ(j["model"]["label"], kModel);
    // Nothing frozen: every parameter trains.
    EXPECT_EQ(j["model"]["trainable_parameters"].get<double>(), j["model"]["parameters"].get<double>());
    EXPECT_EQ(j["scenario"]["batch"], 16);
    EXPECT_EQ(j["scenario"]["precisions"], "all");
    EXPECT_DOUBLE_EQ(j["goal"]["samples"].get<double>(), c.goal.samples());
    EXPECT_EQ(j["assumptions"].size(), c.assumptions.size());
    ASSERT_EQ(j["ranking"].size(), c.rows.size());
    for (size_t i = 0; i < c.rows.size(); ++i) {
        const auto& row = j["ranking"][i];
        const HardwareChoiceRow& r = c.rows[i];
        EXPECT_EQ(row["rank"], r.rank);
        EXPECT_EQ(row["gpu"], r.gpuId);
        EXPECT_EQ(row["recommended"], r.recommended);
        for (const char* key :
             {"name", "reason", "precision", "batch", "samples_per_s", "iteration_ms", "peak_memory_bytes",
              "capacity_bytes", "max_batch", "hours_to_train", "priced", "usd_per_gpu_hour", "price_source",
              "usd_to_train", "usd_per_million_samples", "source", "source_detail", "notes"})
            EXPECT_TRUE(row.contains(key)) << key;
        if (!r.recommended) {
            EXPECT_TRUE(row["samples_per_s"].is_null());
            continue;
        }
        EXPECT_EQ(row["batch"], 16);
        EXPECT_EQ(row["samples_per_s"]["value"].get<double>(), r.prediction.samplesPerS.value);
        const auto& mem = row["peak_memory_bytes"];
        EXPECT_LE(mem["low"].get<double>(), mem["value"].get<double>());
        EXPECT_LE(mem["value"].get<double>(), mem["high"].get<double>());
        EXPECT_EQ(row["priced"], r.cost.priced);
        if (r.cost.priced) {
            EXPECT_EQ(row["usd_to_train"]["value"].get<double>(), r.cost.usdToTrain.value);
        }
    }
}

namespace {

HardwareChoiceRow pricedRow(const std::string& id, double hours, double usd) {
    HardwareChoiceRow r;
    r.gpuId = id;
    r.gpuName = id;
    r.recommended = true;
    r.cost.priced = true;
    r.cost.hoursToTrain = Interval::exact(hours);
    r.cost.usdToTrain = Interval::exact(usd);
    return r;
}

std::vector<std::string> idsOf(const std::vector<const HardwareChoiceRow*>& rows) {
    std::vector<std::string> ids;
    for (const HardwareChoiceRow* r : rows) ids.push_back(r->gpuId);
    return ids;
}

}  // namespace

// The frontier, worked by hand: a (1 h, $10), b (2 h, $5), c (3 h, $6: slower and dearer than b),
// d (2 h, $7: as fast as b but dearer), e (4 h, $2), f (0.5 h, $40), g (5 h, $2: as cheap as e but
// slower), h without a price (faster than all, never on a cost frontier), i where nothing fits.
TEST(HardwareChoice, CostTimeFrontierKeepsTheGpusNoOtherBeatsOnBothTimeAndCost) {
    HardwareChoice c;
    for (auto [id, hours, usd] : {std::tuple{"a", 1.0, 10.0},
                                  {"b", 2.0, 5.0},
                                  {"c", 3.0, 6.0},
                                  {"d", 2.0, 7.0},
                                  {"e", 4.0, 2.0},
                                  {"f", 0.5, 40.0},
                                  {"g", 5.0, 2.0}})
        c.rows.push_back(pricedRow(id, hours, usd));
    HardwareChoiceRow unpriced = pricedRow("h", 0.1, 0);
    unpriced.cost.priced = false;
    c.rows.push_back(unpriced);
    HardwareChoiceRow none;
    none.gpuId = "i";
    c.rows.push_back(none);
    EXPECT_EQ(idsOf(costTimeFrontier(c)), (std::vector<std::string>{"f", "a", "b", "e"}));
    // The fastest ignores prices: the unpriced h; among 8 of 9 GPUs where a batch fits.
    ASSERT_NE(fastestRow(c), nullptr);
    EXPECT_EQ(fastestRow(c)->gpuId, "h");
    EXPECT_EQ(fastestScope(c), "of the 8 GPUs where a batch fits, out of 9");
    c.rows.pop_back();
    EXPECT_EQ(fastestScope(c), "of all 8 GPUs");
    // Nothing priced: no frontier; nothing fits: no fastest.
    HardwareChoice empty;
    empty.rows.push_back(none);
    EXPECT_TRUE(costTimeFrontier(empty).empty());
    EXPECT_EQ(fastestRow(empty), nullptr);
}
