// validate-published: rows of published training throughput become scenarios through the
// mapping (per-row micro-batches, accumulation, batches in tokens, units), rows that cannot are
// listed with why, ratios pair rows that differ in one thing only, the summaries are the
// arithmetic they claim, and on the shared tables the intervals cover most published rows.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/iteration/prediction_errors.h"
#include "trainscope/predictors/iteration/training_predictor.h"
#include "trainscope/predictors/published/published_validation.h"

using namespace ts;
using namespace ts::predictors;
namespace fs = std::filesystem;

namespace {

const char* const kHeader =
    "model,sequence_or_image,gpu_system,gpu,gpu_count,precision,batch_per_gpu,throughput,unit,table_title,"
    "readme_path,commit\n";

fs::path writeTable(const std::string& name, const std::string& rows) {
    const fs::path dir = fs::temp_directory_path() / "trainscope-published-test";
    fs::create_directories(dir);
    const fs::path file = dir / name;
    std::ofstream(file) << kHeader << rows;
    return file;
}

// A mapping of two families: one with per-row batches (row 0) and accumulation, one whose units
// count source and target tokens and whose batch comes from the table.
const nlohmann::json kMapping = nlohmann::json::parse(R"({
  "gpus": {"A100 80GB SXM4": "a100-sxm4-80gb", "V100 16GB SXM2": "v100-sxm2-16gb", "Imaginary 9000": "imaginary"},
  "precisions": {"FP32": "fp32", "TF32": "tf32", "AMP": "amp-fp16"},
  "families": [
    {"model": "Net", "zoo": "zoo:resnet18?image=64", "optimizer": "sgd-momentum", "units": {"img/s": 1},
     "rows": {"0": {"batch": 32, "accumulation": 4}, "3": {"skip": "suspect row"}}},
    {"model": "Translator", "zoo": "zoo:gnmt?vocab=1000", "seq": 10, "optimizer": "adam",
     "units": {"tokens/s": "2seq"}},
    {"model": "Unmodelled", "skip": "no model of it yet"}
  ]})");

}  // namespace

TEST(PublishedValidation, RowsBecomeScenariosOrSayWhyNot) {
    const fs::path file = writeTable("a.csv",
                                     "Net,224,DGX,A100 80GB SXM4,1,TF32,,938,img/s,t,r,c\n"        // row 0
                                     "Translator,,DGX,V100 16GB SXM2,8,AMP,128,76438,tokens/s,t,r,c\n"  // row 1
                                     "Net,224,DGX,Imaginary 9000,1,AMP,,5,img/s,t,r,c\n"              // row 2
                                     "Net,224,DGX,A100 80GB SXM4,1,AMP,,5,img/s,t,r,c\n"              // row 3
                                     "Unmodelled,,DGX,A100 80GB SXM4,1,AMP,8,5,img/s,t,r,c\n"         // row 4
                                     "Stranger,,DGX,A100 80GB SXM4,1,AMP,8,5,img/s,t,r,c\n"           // row 5
                                     "Net,224,DGX,A100 80GB SXM4,1,TF32,,5,fps,t,r,c\n");            // row 6
    const std::vector<PublishedRow> rows = readPublishedRows({file.string()});
    ASSERT_EQ(rows.size(), 7u);
    EXPECT_EQ(rows[1].index, 1);
    EXPECT_EQ(rows[1].line, 3);  // the header is line 1
    const PublishedMapping m = mapPublishedRows(rows, kMapping, GpuDatabase::builtin());
    ASSERT_EQ(m.runs.size(), 2u);
    const PublishedRun& net = m.runs[0];
    EXPECT_EQ(net.modelSpec, "zoo:resnet18?image=64");
    EXPECT_EQ(net.gpuId, "a100-sxm4-80gb");
    EXPECT_EQ(net.scenario.batch, 32);
    EXPECT_EQ(net.scenario.accumulation, 4);
    EXPECT_EQ(net.scenario.precision, TrainingPrecision::Tf32);
    EXPECT_EQ(net.scenario.optimizer, Optimizer::SgdMomentum);
    const PublishedRun& translator = m.runs[1];
    EXPECT_EQ(translator.scenario.batch, 128);  // from the table
    EXPECT_EQ(translator.scenario.dataParallel.gpus, 8);
    EXPECT_DOUBLE_EQ(translator.unitsPerSample, 20);  // source and target tokens of 10 each
    ASSERT_EQ(m.unmapped.size(), 5u);
    auto why = [&](int index) {
        for (const UnmappedRow& u : m.unmapped)
            if (u.row->index == index) return u.why;
        return std::string();
    };
    EXPECT_NE(why(2).find("not in the GPU database"), std::string::npos) << why(2);
    EXPECT_EQ(why(3), "suspect row");
    EXPECT_EQ(why(4), "no model of it yet");
    EXPECT_NE(why(5).find("no TrainScope model"), std::string::npos) << why(5);
    EXPECT_NE(why(6).find("unit 'fps'"), std::string::npos) << why(6);
}

TEST(PublishedValidation, BadTablesAreRefusedNamingTheFile) {
    const fs::path noColumn = fs::temp_directory_path() / "trainscope-published-test" / "bad.csv";
    fs::create_directories(noColumn.parent_path());
    std::ofstream(noColumn) << "model,gpu\nNet,A100\n";
    try {
        readPublishedRows({noColumn.string()});
        FAIL() << "accepted a table without the schema's columns";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.csv"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("no column"), std::string::npos) << e.what();
    }
    const fs::path badNumber = writeTable("bad-number.csv", "Net,224,DGX,A100 80GB SXM4,1,TF32,,-3,img/s,t,r,c\n");
    EXPECT_THROW(readPublishedRows({badNumber.string()}), ModelError);
    EXPECT_THROW(mapPublishedRows(readPublishedRows({writeTable("ok.csv", "Net,,D,A100 80GB SXM4,1,TF32,,1,img/s,t,r,c\n")
                                                         .string()}),
                                  nlohmann::json::parse(R"({"gpus": {}})"), GpuDatabase::builtin()),
                 ModelError);
    // A mapping whose precision names no TrainScope precision (the fuzz regression input).
    nlohmann::json badPrecision = kMapping;
    badPrecision["precisions"]["TF32"] = "fp12";
    const std::vector<PublishedRow> rows =
        readPublishedRows({writeTable("one.csv", "Net,224,DGX,A100 80GB SXM4,1,TF32,,938,img/s,t,r,c\n").string()});
    try {
        mapPublishedRows(rows, badPrecision, GpuDatabase::builtin(), "my-mapping.json");
        FAIL() << "accepted a precision that maps to nothing";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("my-mapping.json"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("TF32"), std::string::npos) << e.what();
    }
    // Whole numbers that are not (the fuzz regression input mapping-batch-beyond-int64.json: a batch
    // of 2e35 reached an undefined float-to-integer conversion), out of range, or fractions.
    const std::pair<const char*, nlohmann::json> badWhole[] = {
        {"batch", 2.0e35}, {"batch", 0}, {"batch", 2.5}, {"accumulation", -1}, {"seq", "long"}};
    for (const auto& [key, value] : badWhole) {
        nlohmann::json bad = kMapping;
        bad["families"][0]["rows"]["0"][key] = value;
        const std::vector<PublishedRow> first = readPublishedRows(
            {writeTable("first.csv", "Net,224,DGX,A100 80GB SXM4,1,TF32,,938,img/s,t,r,c\n").string()});
        try {
            mapPublishedRows(first, bad, GpuDatabase::builtin(), "my-mapping.json");
            FAIL() << "accepted " << key << " = " << value.dump();
        } catch (const ModelError& e) {
            EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("whole number"), std::string::npos) << e.what();
        }
    }
}

// Gradient accumulation: the step and the all-reduce once per `accumulation` micro-batches, so the
// same row predicts faster with accumulation, by no more than the step's share of an iteration.
TEST(PublishedValidation, AccumulationAmortisesTheStep) {
    const fs::path file = writeTable("acc.csv", "Net,224,DGX,A100 80GB SXM4,1,TF32,,938,img/s,t,r,c\n");
    const std::vector<PublishedRow> rows = readPublishedRows({file.string()});
    PublishedMapping m = mapPublishedRows(rows, kMapping, GpuDatabase::builtin());
    ASSERT_EQ(m.runs.size(), 1u);
    const PublishedReport four = validatePublished(m, GpuDatabase::builtin());
    m.runs[0].scenario.accumulation = 1;
    const PublishedReport one = validatePublished(m, GpuDatabase::builtin());
    ASSERT_TRUE(four.predictions[0].failure.empty()) << four.predictions[0].failure;
    EXPECT_GT(four.predictions[0].predicted, one.predictions[0].predicted);
    EXPECT_LT(four.predictions[0].predicted, one.predictions[0].predicted * 1.5);
}

// The memory format: a list of the table's precisions whose runs were channels-last (ConvNets' AMP
// rows ran nhwc, their TF32 rows PyTorch's channels-first default), true for all, or refused.
TEST(PublishedValidation, ChannelsLastFollowsTheMappingsPrecisions) {
    const std::vector<PublishedRow> rows = readPublishedRows({writeTable(
        "cl.csv", "Net,224,DGX,A100 80GB SXM4,1,TF32,64,938,img/s,t,r,c\nNet,224,DGX,A100 80GB SXM4,1,AMP,64,2470,img/s,t,r,c\n")
                                                                  .string()});
    nlohmann::json mapping = kMapping;
    mapping["families"][0]["channels_last"] = {"AMP"};
    PublishedMapping m = mapPublishedRows(rows, mapping, GpuDatabase::builtin());
    ASSERT_EQ(m.runs.size(), 2u);
    EXPECT_FALSE(m.runs[0].scenario.channelsLast);
    EXPECT_TRUE(m.runs[1].scenario.channelsLast);
    mapping["families"][0]["channels_last"] = true;
    m = mapPublishedRows(rows, mapping, GpuDatabase::builtin());
    EXPECT_TRUE(m.runs[0].scenario.channelsLast && m.runs[1].scenario.channelsLast);
    mapping["families"][0].erase("channels_last");
    m = mapPublishedRows(rows, mapping, GpuDatabase::builtin());
    EXPECT_FALSE(m.runs[0].scenario.channelsLast || m.runs[1].scenario.channelsLast);
    mapping["families"][0]["channels_last"] = "nhwc";
    try {
        mapPublishedRows(rows, mapping, GpuDatabase::builtin(), "my-mapping.json");
        FAIL() << "accepted channels_last = \"nhwc\"";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("channels_last"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("my-mapping.json"), std::string::npos) << e.what();
    }
}

// A family's own "precisions" replace the table-wide ones for its rows only (BART's "BF16" is its model
// in bf16; another family's would be autocast); a precision neither maps is listed with why.
TEST(PublishedValidation, FamilyPrecisionsOverrideTheTables) {
    const std::vector<PublishedRow> rows = readPublishedRows({writeTable(
        "prec.csv", "Net,224,DGX,A100 80GB SXM4,1,AMP,64,2470,img/s,t,r,c\n"
                    "Translator,,DGX,A100 80GB SXM4,1,AMP,64,9000,tokens/s,t,r,c\n"
                    "Translator,,DGX,A100 80GB SXM4,1,TF32,64,5000,tokens/s,t,r,c\n")
                                                                  .string()});
    nlohmann::json mapping = kMapping;
    mapping["families"][1]["precisions"] = {{"AMP", "bf16-params"}};
    const PublishedMapping m = mapPublishedRows(rows, mapping, GpuDatabase::builtin());
    ASSERT_EQ(m.runs.size(), 2u);
    EXPECT_EQ(m.runs[0].scenario.precision, TrainingPrecision::AmpFp16);
    EXPECT_EQ(m.runs[1].family, "Translator");
    EXPECT_EQ(m.runs[1].scenario.precision, TrainingPrecision::Bf16Params);
    ASSERT_EQ(m.unmapped.size(), 1u);
    EXPECT_NE(m.unmapped[0].why.find("precision 'TF32'"), std::string::npos) << m.unmapped[0].why;
}

// A family's optimizer and its implementation may differ by the table's precision (BERT's SQuAD script:
// apex's FusedAdam under --fp16, BertAdam's per-tensor loop otherwise); a precision the object does not
// name keeps the default implementation and has no optimizer; anything but a string or an object is
// refused naming the mapping.
TEST(PublishedValidation, OptimizersMayDifferByPrecision) {
    const std::vector<PublishedRow> rows =
        readPublishedRows({writeTable("opt.csv",
                                      "Net,224,DGX,A100 80GB SXM4,1,AMP,64,2470,img/s,t,r,c\n"
                                      "Net,224,DGX,A100 80GB SXM4,1,TF32,64,938,img/s,t,r,c\n")
                               .string()});
    nlohmann::json mapping = kMapping;
    mapping["families"][0]["optimizer"] = {{"AMP", "adam"}, {"TF32", "adamw"}};
    mapping["families"][0]["optimizer_implementation"] = {{"AMP", "fused"}};
    PublishedMapping m = mapPublishedRows(rows, mapping, GpuDatabase::builtin());
    ASSERT_EQ(m.runs.size(), 2u);
    EXPECT_EQ(m.runs[0].scenario.optimizer, Optimizer::Adam);
    EXPECT_EQ(m.runs[0].scenario.optimizerImplementation, OptimizerImplementation::Fused);
    EXPECT_EQ(m.runs[1].scenario.optimizer, Optimizer::AdamW);
    EXPECT_EQ(m.runs[1].scenario.optimizerImplementation, OptimizerImplementation::Foreach);
    auto refused = [&](const nlohmann::json& optimizer, const std::string& expected) {
        nlohmann::json bad = kMapping;
        bad["families"][0]["optimizer"] = optimizer;
        try {
            mapPublishedRows(rows, bad, GpuDatabase::builtin(), "my-mapping.json");
            ADD_FAILURE() << "accepted optimizer " << optimizer.dump();
        } catch (const ModelError& e) {
            EXPECT_NE(std::string(e.what()).find("my-mapping.json"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    };
    refused({{"AMP", "adam"}}, "no known optimizer for precision TF32");
    refused({{"AMP", 3}}, "optimizer.AMP must be a string");
    refused(nlohmann::json::array({"adam"}), "must be a string or an object");
}

TEST(PublishedValidation, SummariesAreTheirArithmetic) {
    const ErrorSummary s = summarise({0.10, -0.20, 0.05, 0.30});
    EXPECT_EQ(s.n, 4);
    EXPECT_NEAR(s.meanAbsPct, 16.25, 1e-9);
    EXPECT_NEAR(s.medianAbsPct, 15, 1e-9);
    EXPECT_NEAR(s.meanSignedPct, 6.25, 1e-9);
    EXPECT_NEAR(s.within10Pct, 0.5, 1e-9);
}

// Ratios pair rows of one model that differ in exactly one of GPU, precision class, batch and GPU
// count, each unordered pair once; rows differing in two things are not compared.
TEST(PublishedValidation, RatiosPairRowsDifferingInOneThing) {
    std::vector<PublishedRow> rows(6);
    std::vector<PublishedRun> runs(6);
    auto set = [&](int i, const std::string& gpu, const std::string& precision, int64_t batch, int count) {
        rows[i].gpu = gpu, rows[i].precision = precision, rows[i].gpuCount = count, rows[i].unit = "img/s";
        rows[i].tableTitle = gpu;
        runs[i].row = &rows[i], runs[i].family = "Net", runs[i].modelSpec = "zoo:x", runs[i].gpuId = gpu;
        runs[i].scenario.batch = batch;
    };
    set(0, "A100", "TF32", 256, 1);
    set(1, "V100", "FP32", 256, 1);  // gpu: with 0 and 3 (both full precision; GPUs differ in batch too)
    set(2, "A100", "AMP", 256, 1);   // precision: with 0 and 3 (one GPU, one GPU count)
    set(3, "A100", "TF32", 128, 1);  // batch: with 0 (same precision and GPU count)
    set(4, "A100", "TF32", 256, 8);  // gpus: with 0 (same precision and batch)
    set(5, "V100", "AMP", 128, 8);   // differs from every other row in two things or more
    std::vector<PublishedPrediction> predictions(6);
    for (int i = 0; i < 6; ++i) predictions[i] = {&runs[i], 100.0 + i, 100.0 + 2 * i};
    std::map<std::string, int> kinds;
    for (const PublishedRatio& r : publishedRatios(predictions)) {
        ++kinds[r.kind];
        const int a = int(r.a - predictions.data()), b = int(r.b - predictions.data());
        EXPECT_NE(a, 5);
        EXPECT_NE(b, 5);
        EXPECT_NEAR(r.measured(), (100.0 + 2 * a) / (100.0 + 2 * b), 1e-12);
    }
    EXPECT_EQ(kinds["gpu"], 2);
    EXPECT_EQ(kinds["precision"], 2);
    EXPECT_EQ(kinds["batch"], 1);
    EXPECT_EQ(kinds["gpus"], 1);
    EXPECT_EQ(kinds.size(), 4u);
}

// On the shared tables (beside the repository; skipped without them): every row of the ResNet-50
// table is predicted, and the predicted intervals hold at least 80% of the published figures.
TEST(PublishedValidation, SharedTablesAreMappedAndCovered) {
    const fs::path dir = fs::path(TRAINSCOPE_SOURCE_DIR) / ".." / "shared" / "data" / "training-throughput";
    if (!fs::exists(dir)) GTEST_SKIP() << dir << " is not there";
    const std::vector<PublishedRow> rows = readPublishedRows({dir.string()});
    const PublishedMapping m = mapPublishedRows(rows, builtinPublishedMapping(), GpuDatabase::builtin());
    int resnet = 0;
    for (const PublishedRun& r : m.runs) resnet += r.row->file == "resnet50v1.5.csv";
    EXPECT_EQ(resnet, 12);
    const PublishedReport report = validatePublished(m, GpuDatabase::builtin());
    for (const PublishedPrediction& p : report.predictions)
        EXPECT_TRUE(p.failure.empty()) << p.run->row->file << ":" << p.run->row->line << " " << p.failure;
    EXPECT_GT(report.overall.n, 200);
    EXPECT_GE(report.intervalCoverage, 0.80);
}

// The fit finds a constant the rows were made with: rows "published" at the predictions of a model
// whose host takes 50 us to dispatch a forward operator (small batches of a small network, where the
// host bounds the iteration) fit host_forward_us back to 50 from the shipped 27, in sample and with
// each model and GPU left out; a name the fit does not know is refused with the ones it does.
TEST(PublishedValidation, FitRecoversTheConstantTheRowsWereMadeWith) {
    const nlohmann::json mapping = nlohmann::json::parse(R"({
      "gpus": {"A100 80GB SXM4": "a100-sxm4-80gb", "V100 16GB SXM2": "v100-sxm2-16gb"},
      "precisions": {"FP32": "fp32", "TF32": "tf32", "AMP": "amp-fp16"},
      "families": [{"model": "Net", "zoo": "zoo:resnet18?image=32", "optimizer": "sgd-momentum",
                    "units": {"img/s": 1}}]})");
    const fs::path file = writeTable("fit.csv",
                                     "Net,32,DGX,A100 80GB SXM4,1,TF32,1,1,img/s,t,r,c\n"
                                     "Net,32,DGX,A100 80GB SXM4,1,AMP,2,1,img/s,t,r,c\n"
                                     "Net,32,DGX,V100 16GB SXM2,1,FP32,1,1,img/s,t,r,c\n"
                                     "Net,32,DGX,V100 16GB SXM2,1,AMP,2,1,img/s,t,r,c\n");
    const GpuDatabase& db = GpuDatabase::builtin();
    std::vector<PublishedRow> rows = readPublishedRows({file.string()});
    const PublishedMapping m = mapPublishedRows(rows, mapping, db);
    ASSERT_EQ(m.runs.size(), 4u);
    const PublishedPredictor predictor(m, db);

    StreamModel truth = StreamModel::shipped();
    truth.hostForwardUs = 50;
    const std::vector<PublishedPrediction> made = predictor.predict(truth);
    const std::vector<PublishedPrediction> shipped = predictor.predict(StreamModel::shipped());
    ASSERT_EQ(made.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        ASSERT_TRUE(made[i].failure.empty()) << made[i].failure;
        EXPECT_LT(made[i].predicted, shipped[i].predicted * 0.9) << "row " << i << " is not host-bound";
        rows[i].throughput = made[i].predicted;  // the runs point at these rows
    }

    const PublishedFitResult fit = fitPublished(predictor, db, StreamModel::shipped(), {"host_forward_us"});
    ASSERT_EQ(fit.constants.size(), 1u);
    EXPECT_EQ(fit.constants[0].first, "host_forward_us");
    EXPECT_DOUBLE_EQ(fit.constants[0].second, 50);
    EXPECT_NEAR(fit.inSample.meanAbsPct, 0, 1e-6);
    EXPECT_NEAR(fit.leaveOneGpuOut.meanAbsPct, 0, 1e-6);
    for (const auto& [group, constants] : fit.heldOut) EXPECT_DOUBLE_EQ(constants.at(0).second, 50) << group;

    try {
        fitPublished(predictor, db, StreamModel::shipped(), {"host_us"});
        FAIL() << "an unknown constant was accepted";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("host_forward_us"), std::string::npos) << e.what();
    }
}

// The out-of-sample part of the interval table is the arithmetic it claims: rows on GPUs the fit had are
// left out (they measure the other benchmark, not the extrapolation), the rest split by whether the fit saw
// their architecture, each the 80% quantile of |ln(predicted / published)| as a relative error.
TEST(PublishedValidation, OutOfSampleIntervalsAreTheQuantileOfRowsOutsideTheFit) {
    const GpuDatabase& db = GpuDatabase::builtin();
    std::vector<PublishedRow> rows(12);
    std::vector<PublishedRun> runs(12);
    PublishedReport report;
    // a100-sxm4-80gb: fitted (ignored); a10, rtx-a6000: Ampere, not fitted; h100-sxm: Hopper, never fitted.
    const char* gpus[] = {"a100-sxm4-80gb", "a10", "a10", "rtx-a6000", "rtx-a6000", "a10",
                          "h100-sxm",       "h100-sxm", "h100-sxm", "h100-sxm", "h100-sxm", "a100-sxm4-80gb"};
    const double errors[] = {5.0, 0.10, -0.20, 0.05, 0.30, -0.10, 0.50, 0.40, -0.25, 0.20, 0.60, 3.0};
    for (int i = 0; i < 12; ++i) {
        runs[i].row = &rows[i];
        runs[i].gpuId = gpus[i];
        PublishedPrediction p;
        p.run = &runs[i], p.predicted = 100.0 * (1 + errors[i]), p.measured = 100.0;
        report.predictions.push_back(p);
    }
    const nlohmann::ordered_json t = outOfSampleErrorTable(report, {"a100-sxm4-80gb"}, db, "test");
    EXPECT_EQ(t["rows"]["gpu_outside_fit"], 5);
    EXPECT_EQ(t["rows"]["architecture_outside_fit"], 5);
    // Ampere's |ln(1 + e)|: 0.0953, 0.2231, 0.0488, 0.2624, 0.1054; the 4th of 5 (80%) is 0.2231 -> e = 0.25.
    EXPECT_NEAR(t["gpu_outside_fit"].get<double>(), 0.25, 1e-9);
    // Hopper's: 0.4055, 0.3365, 0.2877, 0.1823, 0.4700; the 4th is 0.4055 -> e = 0.5.
    EXPECT_NEAR(t["architecture_outside_fit"].get<double>(), 0.5, 1e-9);
    EXPECT_EQ(t["fitted_architectures"], nlohmann::json::array({"Ampere"}));
    // Only rows on fitted GPUs: nothing to measure the extrapolation with.
    PublishedReport fittedOnly;
    fittedOnly.predictions = {report.predictions[0], report.predictions[11]};
    EXPECT_THROW(outOfSampleErrorTable(fittedOnly, {"a100-sxm4-80gb"}, db, "test"), ModelError);
}

// Lambda's published benchmarks (tests/data/published/lambda), the out-of-sample check: every row is
// predicted or skipped with a reason (a batch Lambda does not state, a benchmark whose figure measures
// its pipeline; every GPU is in the database), and the shipped table's out-of-sample errors are the ones
// these rows give with the shipped constants (rerun --write-out-of-sample-errors after changing either).
TEST(PublishedValidation, LambdaRowsAreMappedAndTheShippedOutOfSampleErrorsAreTheirs) {
    const fs::path dir = fs::path(TRAINSCOPE_SOURCE_DIR) / "tests" / "data" / "published" / "lambda";
    const std::vector<PublishedRow> rows = readPublishedRows({(dir / "lambda-pytorch.csv").string()});
    std::ifstream in(dir / "lambda-runs.json");
    const nlohmann::json mapping = nlohmann::json::parse(in);
    const PublishedMapping m = mapPublishedRows(rows, mapping, GpuDatabase::builtin());
    EXPECT_EQ(m.runs.size() + m.unmapped.size(), rows.size());
    for (const UnmappedRow& u : m.unmapped) {
        const std::string& why = u.why;
        EXPECT_TRUE(why.find("no batch per GPU") != std::string::npos ||
                    why.find("measures the start-up") != std::string::npos ||
                    why.find("Lambda's pipeline bounds it") != std::string::npos)
            << u.row->model << ": " << why;
    }
    const PublishedReport report = validatePublished(m, GpuDatabase::builtin());
    // 212 rows: 84 skipped (SSD300's 32, Transformer-XL's 52 including the A10's 4 without a batch), 128 predicted.
    EXPECT_EQ(m.unmapped.size(), 84u);
    EXPECT_EQ(report.overall.n, 128);
    for (const PublishedPrediction& p : report.predictions)
        EXPECT_TRUE(p.failure.empty()) << p.run->row->model << " on " << p.run->gpuId << ": " << p.failure;
    std::ifstream shippedIn(fs::path(TRAINSCOPE_SOURCE_DIR) / "resources" / "iteration-errors.json");
    const nlohmann::json shipped = nlohmann::json::parse(shippedIn);
    std::set<std::string> fitted;
    for (const auto& g : shipped.at("fitted_gpus")) fitted.insert(g.get<std::string>());
    const nlohmann::ordered_json t = outOfSampleErrorTable(report, fitted, GpuDatabase::builtin(), "test");
    const nlohmann::json& out = shipped.at("out_of_sample");
    EXPECT_NEAR(t["gpu_outside_fit"].get<double>(), out.at("gpu_outside_fit").get<double>(), 1e-9);
    EXPECT_NEAR(t["architecture_outside_fit"].get<double>(), out.at("architecture_outside_fit").get<double>(), 1e-9);
}

// A prediction's interval is at least the error measured where it stands: on a GPU the fit had rows of,
// the precision's; on an unseen GPU of a fitted architecture, or one of an unseen architecture, the wider
// out-of-sample errors (never narrower for the latter). GPT-2 at amp-fp16: the A100's interval is its
// layers' errors, not the out-of-sample error of Hopper; the H100's is at least that error.
TEST(PublishedValidation, GpusOutsideTheFitGetTheOutOfSampleIntervals) {
    using namespace ts::predictors::errors;
    const GpuDatabase& db = GpuDatabase::builtin();
    EXPECT_EQ(extrapolationError("a100-sxm4-80gb", "Ampere"), 0);
    const double ampere = extrapolationError("a10", "Ampere"), hopper = extrapolationError("h100-sxm", "Hopper");
    EXPECT_GT(ampere, 0);  // measured on Lambda's rows; whether above the fit's own widths is the data's
    EXPECT_GE(hopper, ampere);
    const Graph g = loadModel("zoo:gpt2?seq=128");
    const TrainingPredictor predictor(g, 128);
    TrainingScenario s;
    s.batch = 8;
    s.precision = TrainingPrecision::AmpFp16;
    const Interval a100 = predictor.predict(*db.find("a100-sxm4-80gb"), s, false).iterationMs;
    EXPECT_GT(std::abs(a100.high / a100.value - (1 + hopper)), 1e-3) << "the A100 got Hopper's out-of-sample width";
    const Interval a10 = predictor.predict(*db.find("a10"), s, false).iterationMs;
    EXPECT_GE(a10.high, a10.value * (1 + ampere) * (1 - 1e-9));
    const Interval h100 = predictor.predict(*db.find("h100-sxm"), s, false).iterationMs;
    EXPECT_GE(h100.high, h100.value * (1 + hopper) * (1 - 1e-9));
    EXPECT_LE(h100.low, h100.value / (1 + hopper) * (1 + 1e-9));
}
