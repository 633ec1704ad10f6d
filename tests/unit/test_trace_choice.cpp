// The hardware choice for a recorded job (predictors/choice/trace_choice.h and `report TRACE`): on a
// hand-built host-bound trace whose every step is worked out below, every GPU keeps the measured
// step and the ranking follows the prices alone; the CSV and JSON carry the same rows; the JSON
// report of a shared A100 trace names its GPU, has one row per database GPU, costs of step time x
// the database's price, and rows in the documented order; the options a trace cannot take are
// refused with one line naming them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/choice/trace_choice.h"
#include "trainscope/predictors/trace/trace_replay.h"
#include "trace_test_builder.h"

using namespace ts;
using namespace ts::predictors;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Three steps of 1000 us ([0, 1000], [1000, 2000], [2000, 3000]); in each, an operator at +10
// launches (at +12, 3 us) an elementwise kernel that runs [+20, +120]. The GPU is idle 90% of every
// step and the host never waits for it (no runtime call of 20 us or more), so on any GPU where the
// kernel takes less than 880 us the steps stay 1000 us: the measured median step is 1.0 ms
// (steps 1 and 2 end where the next starts, step 3 at its host end, 3000, after its work at 2120).
KinetoTrace hostBoundTrace() {
    TraceBuilder b;
    for (int s = 0; s < 3; ++s) {
        const double t = 1000.0 * s;
        b.step(s + 1, t, 1000);
        b.op("aten::add", t + 10, 8);
        b.launch(t + 12, t + 20, 100, "void at::native::vectorized_elementwise_kernel<4>");
    }
    return b.read();
}

std::vector<const GpuSpec*> allGpus(const GpuDatabase& db) {
    std::vector<const GpuSpec*> gpus;
    for (const GpuSpec& g : db.gpus()) gpus.push_back(&g);
    return gpus;
}

TraceChoice hostBoundChoice(const std::vector<const GpuSpec*>& gpus) {
    const GpuDatabase& db = GpuDatabase::builtin();
    const KinetoTrace trace = hostBoundTrace();
    std::string how;
    const GpuSpec* origin = matchTraceGpu(trace, db, &how);
    EXPECT_NE(origin, nullptr);
    TraceChoiceOptions options;
    options.priceSnapshot = db.priceSnapshot();
    options.amortisation = db.amortisation();
    return chooseHardwareForTrace(trace, *origin, how, gpus, options);
}

TEST(TraceChoice, HostBoundJobKeepsItsStepEverywhereAndRanksByPrice) {
    const GpuDatabase& db = GpuDatabase::builtin();
    const TraceChoice c = hostBoundChoice(allGpus(db));
    EXPECT_EQ(c.recordedGpuId, "a100-sxm4-80gb");
    EXPECT_EQ(c.steps, 3);
    EXPECT_NEAR(c.measuredStepMs, 1.0, 1e-9);
    ASSERT_EQ(c.rows.size(), db.gpus().size());
    // Expected order: priced GPUs by their price (every step is 1 ms), database order among equal
    // prices; then the unpriced ones in database order.
    std::vector<const GpuSpec*> expected = allGpus(db);
    auto price = [](const GpuSpec* g) { return g->cheapestPrice() ? g->cheapestPrice()->usdPerGpuHour : 1e300; };
    std::stable_sort(expected.begin(), expected.end(),
                     [&](const GpuSpec* a, const GpuSpec* b) { return price(a) < price(b); });
    for (size_t i = 0; i < c.rows.size(); ++i) {
        const TraceChoiceRow& r = c.rows[i];
        SCOPED_TRACE(r.gpuId);
        EXPECT_EQ(r.rank, int(i) + 1);
        EXPECT_EQ(r.gpuId, expected[i]->id);
        ASSERT_TRUE(r.predicted) << r.reason;
        EXPECT_NEAR(r.stepMs, 1.0, 1e-9);
        EXPECT_NEAR(r.speedup, 1.0, 1e-9);
        EXPECT_NEAR(r.stepsPerHour, 3.6e6, 1e-6);  // 3,600 s of 1 ms steps
        EXPECT_EQ(r.recorded, r.gpuId == "a100-sxm4-80gb");
        const Price* p = expected[i]->cheapestPrice();
        ASSERT_EQ(r.price.priced, p != nullptr);
        // 1,000 steps of 1 ms = 1 s = 1/3600 h.
        if (p) {
            EXPECT_NEAR(r.usdPer1000Steps, p->usdPerGpuHour / 3600.0, 1e-12);
        }
    }
    ASSERT_NE(c.cheapest(), nullptr);
    EXPECT_EQ(c.cheapest()->gpuId, expected.front()->id);
    EXPECT_EQ(c.fastest(), c.cheapest());  // every step ties: the first in rank order
    ASSERT_NE(c.recordedRow(), nullptr);
    EXPECT_EQ(c.recordedRow()->gpuId, "a100-sxm4-80gb");
    const bool anyAmortised = std::any_of(c.rows.begin(), c.rows.end(), [](auto& r) { return r.price.amortised; });
    const std::string prices = *std::find_if(c.assumptions.begin(), c.assumptions.end(),
                                             [](const std::string& a) { return a.rfind("Prices:", 0) == 0; });
    EXPECT_EQ(prices.find("amortised") != std::string::npos, anyAmortised) << prices;
    EXPECT_NE(prices.find(db.priceSnapshot().date), std::string::npos) << prices;
}

TEST(TraceChoice, SubsetWithoutTheRecordedGpu) {
    const GpuDatabase& db = GpuDatabase::builtin();
    const TraceChoice c = hostBoundChoice({&db.get("h100-sxm"), &db.get("t4")});
    ASSERT_EQ(c.rows.size(), 2u);
    EXPECT_EQ(c.recordedRow(), nullptr);
    EXPECT_NEAR(c.measuredStepMs, 1.0, 1e-9);  // still the trace's own
    // The T4 rents for less than the H100: with equal steps it is first.
    ASSERT_TRUE(db.get("t4").cheapestPrice() && db.get("h100-sxm").cheapestPrice());
    ASSERT_LT(db.get("t4").cheapestPrice()->usdPerGpuHour, db.get("h100-sxm").cheapestPrice()->usdPerGpuHour);
    EXPECT_EQ(c.rows[0].gpuId, "t4");
    EXPECT_EQ(traceRankingScope(c), "of all 2 GPUs");
}

std::vector<std::vector<std::string>> csvRecords(const std::string& text) {
    std::vector<std::vector<std::string>> out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        EXPECT_FALSE(line.empty() || line.back() != '\r') << "CRLF line ends";
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::vector<std::string> fields(1);
        bool quoted = false;
        for (char ch : line) {
            if (ch == '"')
                quoted = !quoted;
            else if (ch == ',' && !quoted)
                fields.emplace_back();
            else
                fields.back() += ch;
        }
        out.push_back(fields);
    }
    return out;
}

TEST(TraceChoice, CsvAndJsonCarryTheSameRows) {
    const GpuDatabase& db = GpuDatabase::builtin();
    const TraceChoice c = hostBoundChoice(allGpus(db));
    const json j = json::parse(traceChoiceJson(c));
    EXPECT_EQ(j["format"], "trainscope-trace-choice");
    EXPECT_EQ(j["format_version"], 1);
    EXPECT_EQ(j["trace"]["recorded_on"], "a100-sxm4-80gb");
    EXPECT_EQ(j["trace"]["steps"], 3);
    EXPECT_EQ(j["scenario"]["fp32_math"], "as-recorded");
    const auto records = csvRecords(traceChoiceCsv(c));
    ASSERT_EQ(records.size(), c.rows.size() + 1);
    EXPECT_EQ(records[0], traceChoiceCsvColumns());
    std::map<std::string, size_t> column;
    for (size_t i = 0; i < records[0].size(); ++i) column[records[0][i]] = i;
    ASSERT_EQ(j["ranking"].size(), c.rows.size());
    for (size_t i = 0; i < c.rows.size(); ++i) {
        const json& row = j["ranking"][i];
        const std::vector<std::string>& rec = records[i + 1];
        EXPECT_EQ(rec[column["gpu"]], row["gpu"].get<std::string>());
        EXPECT_EQ(std::stod(rec[column["step_ms"]]), row["step_ms"].get<double>());
        EXPECT_EQ(rec[column["priced"]] == "true", row["priced"].get<bool>());
        if (row["priced"].get<bool>())
            EXPECT_EQ(std::stod(rec[column["usd_per_1000_steps"]]), row["usd_per_1000_steps"].get<double>());
        else
            EXPECT_TRUE(row["usd_per_1000_steps"].is_null() && rec[column["usd_per_1000_steps"]].empty());
        ASSERT_TRUE(row["classes"].is_array());
        ASSERT_EQ(row["classes"].size(), 1u);  // the one elementwise kernel per step
        EXPECT_EQ(row["classes"][0]["class"], "elementwise");
        EXPECT_NEAR(row["classes"][0]["measured_ms_per_step"].get<double>(), 0.1, 1e-9);
    }
    EXPECT_EQ(j["cheapest"], c.rows[0].gpuId);
}

// Runs the CLI; the exit status, and what it printed on stderr.
std::pair<int, std::string> runCli(const std::string& args) {
    const fs::path err = fs::temp_directory_path() / ("trainscope-trace-report-" + std::to_string(::getpid()) + ".err");
    const std::string command = std::string(TRAINSCOPE_CLI) + " " + args + " >/dev/null 2>" + err.string();
    const int status = std::system(command.c_str());
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    fs::remove(err);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(TraceReportCli, RefusesWhatATraceCannotTakeByName) {
    const std::string trace = std::string(TRAINSCOPE_TEST_DATA_DIR) + "/traces/cpu_cnn_shapes.json.gz";
    const fs::path out = fs::temp_directory_path() / "trainscope-never.json";
    for (const auto& [option, args] :
         std::vector<std::pair<std::string, std::string>>{{"--batch", "--batch auto"},
                                                          {"--batch", "--batch 0"},
                                                          {"--optimizer", "--optimizer adam"},
                                                          {"--gpus", "--gpus 8"},
                                                          {"--zero", "--zero 2"},
                                                          {"--fsdp", "--fsdp"},
                                                          {"--qlora", "--qlora"},
                                                          {"--train", "--train fc"},
                                                          {"--interconnect", "--interconnect pcie"},
                                                          {"--lora", "--lora 8"},
                                                          {"--checkpointing", "--checkpointing"},
                                                          {"--seq", "--seq 128"},
                                                          {"--epochs", "--epochs 2"},
                                                          {"--dataset-samples", "--dataset-samples 1000"},
                                                          {"--precision", "--precision fp8"},
                                                          {"--precision", "--precision fp32,tf32"}}) {
        SCOPED_TRACE(args);
        const auto [rc, err] = runCli("report " + trace + " -o " + out.string() + " " + args);
        EXPECT_EQ(rc, 2);
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_NE(err.find("trainscope-cli: " + option + ": "), std::string::npos) << err;
        EXPECT_FALSE(fs::exists(out));
    }
}

fs::path sharedTraces() {
    return fs::path(TRAINSCOPE_SOURCE_DIR) / ".." / "shared" / "data" / "pytorch-traces";
}

// The measured median step as docs/traces.md defines it, from the trace's own steps and kernels: a
// step lasts from its start to the next one's; the last to the later of its host end and the end of
// the GPU work it launched.
double measuredMedianStepMs(const KinetoTrace& t) {
    std::vector<double> steps;
    for (size_t i = 0; i + 1 < t.steps.size(); ++i)
        steps.push_back((t.steps[i + 1].startUs - t.steps[i].startUs) / 1e3);
    const TraceStep& last = t.steps.back();
    double end = last.startUs + last.durationUs;
    for (const TraceKernel& k : t.kernels)
        if (k.step == int(t.steps.size()) - 1 && k.device == t.gpuDevice) end = std::max(end, k.startUs + k.durationUs);
    steps.push_back((end - last.startUs) / 1e3);
    std::sort(steps.begin(), steps.end());
    const size_t n = steps.size();
    return n % 2 ? steps[n / 2] : (steps[n / 2 - 1] + steps[n / 2]) / 2;
}

TEST(TraceReportCli, SharedA100TraceAsJson) {
    const fs::path dir = sharedTraces();
    if (!fs::exists(dir)) GTEST_SKIP() << "no shared traces at " << dir;
    const std::string trace = (dir / "a100_recsys_train.json.gz").string();
    const fs::path out =
        fs::temp_directory_path() / ("trainscope-trace-report-" + std::to_string(::getpid()) + ".json");
    const auto [rc, err] = runCli("report " + trace + " -o " + out.string());
    ASSERT_EQ(rc, 0) << err;
    std::ifstream in(out);
    const json j = json::parse(in);
    fs::remove(out);

    const GpuDatabase& db = GpuDatabase::builtin();
    // The data's README: the A100-PG509-200 is the SXM4 40 GB A100; six steps of about 76 ms.
    EXPECT_EQ(j["trace"]["recorded_on"], "a100-sxm4-40gb");
    EXPECT_EQ(j["trace"]["device_name"], "NVIDIA A100-PG509-200");
    EXPECT_EQ(j["trace"]["steps"], 6);
    const double measured = j["trace"]["measured_step_ms"].get<double>();
    EXPECT_NEAR(measured, measuredMedianStepMs(readKinetoTrace(trace)), 1e-9 * measured);
    EXPECT_GT(measured, 60);
    EXPECT_LT(measured, 95);
    EXPECT_TRUE(j["trace"]["record_shapes"].get<bool>());

    const json& rows = j["ranking"];
    ASSERT_EQ(rows.size(), db.gpus().size());
    std::map<std::string, int> seen;
    int group = 0;  // 0 priced, 1 unpriced, 2 not predicted: never decreasing
    double previous = 0;
    const json* fastest = nullptr;
    for (size_t i = 0; i < rows.size(); ++i) {
        const json& r = rows[i];
        const std::string id = r["gpu"];
        SCOPED_TRACE(id);
        ++seen[id];
        EXPECT_EQ(r["rank"], int(i) + 1);
        const GpuSpec& gpu = db.get(id);
        EXPECT_EQ(r["name"], gpu.name);
        EXPECT_EQ(r["recorded"], id == "a100-sxm4-40gb");
        const Price* price = gpu.cheapestPrice();
        ASSERT_EQ(r["priced"].get<bool>(), price != nullptr);
        const int g = !r["predicted"].get<bool>() ? 2 : price ? 0 : 1;
        EXPECT_GE(g, group);
        if (g != group) previous = 0;
        group = g;
        if (g == 2) {
            EXPECT_FALSE(r["reason"].get<std::string>().empty());
            continue;
        }
        const double step = r["step_ms"].get<double>();
        if (!fastest || step < (*fastest)["step_ms"].get<double>()) fastest = &r;
        EXPECT_NEAR(r["speedup"].get<double>(), measured / step, 1e-12 * measured / step);
        EXPECT_NEAR(r["steps_per_hour"].get<double>(), 3.6e6 / step, 1e-9 * 3.6e6 / step);
        if (id == "a100-sxm4-40gb") {
            EXPECT_NEAR(step, measured, 1e-6 * measured);
        }
        if (price) {
            EXPECT_EQ(r["usd_per_gpu_hour"].get<double>(), price->usdPerGpuHour);
            const double cost = step * 1000 / 3.6e6 * price->usdPerGpuHour;
            EXPECT_NEAR(r["usd_per_1000_steps"].get<double>(), cost, 1e-12 * cost);
            EXPECT_GE(cost, previous);
            previous = cost;
        } else {
            EXPECT_TRUE(r["usd_per_1000_steps"].is_null());
            EXPECT_GE(step, previous);
            previous = step;
        }
    }
    EXPECT_EQ(seen.size(), db.gpus().size());  // each database GPU once
    EXPECT_EQ(j["cheapest"], rows[0]["gpu"]);
    ASSERT_NE(fastest, nullptr);
    EXPECT_EQ(j["fastest"], (*fastest)["gpu"]);
}

}  // namespace
