// The training profiler on the CPU: end-to-end profiles of small models written and read back
// identically, memory categories equal to the exact tensor sizes, batch sweeps, cancellation,
// and clear errors for devices that cannot be used.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profile_file.h"
#include "trainscope/core/profiler.h"

namespace fs = std::filesystem;

namespace {

// x [N, 64] -> Linear(64, 32) -> ReLU -> Linear(32, 10): small enough to count every byte by hand.
const char* kMlp = R"({
  "trainscope_model": 1, "name": "mlp",
  "inputs": [{"name": "x", "shape": ["N", 64]}],
  "layers": [
    {"name": "fc1", "type": "Linear", "out_features": 32},
    {"name": "relu", "type": "ReLU"},
    {"name": "fc2", "type": "Linear", "out_features": 10}
  ]
})";

constexpr double kMlpParameters = 64 * 32 + 32 + 32 * 10 + 10;

ts::ProfileOptions quickOptions() {
    ts::ProfileOptions o;
    o.device = "cpu";
    o.warmup = 1;
    o.minRepeats = 3;
    o.maxRepeats = 5;
    o.maxSecondsPerMeasurement = 0.5;
    return o;
}

fs::path tempFile(const std::string& name) {
    fs::path dir = fs::temp_directory_path() / ("trainscope-profiler-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir / name;
}

void expectConsistent(const ts::Profile& p) {
    for (const ts::ProfileRun& r : p.runs) {
        SCOPED_TRACE("batch " + std::to_string(r.batch));
        ASSERT_TRUE(r.fits) << r.error;
        EXPECT_TRUE(r.complete);
        EXPECT_GT(r.iteration.medianMs, 0);
        EXPECT_GE(r.iteration.repeats, 3);
        double sum = 0;
        for (const ts::IterationPart& part : r.parts) sum += part.ms;
        EXPECT_NEAR(sum, r.iteration.medianMs, 1e-9 * std::max(1.0, r.iteration.medianMs));
        EXPECT_GT(r.memory.weights, 0);
        EXPECT_GT(r.memory.gradients, 0);
        EXPECT_GT(r.memory.activations, 0);
        EXPECT_GE(r.memory.peakAllocated, r.memory.weights + r.memory.inputs);
        for (const ts::LayerProfile& lp : r.layers) {
            SCOPED_TRACE(lp.name);
            EXPECT_TRUE(lp.forward.measured());
            EXPECT_GE(lp.forward.medianMs, 0);
            if (lp.hasBackward) {
                EXPECT_TRUE(lp.backward.measured());
            }
            EXPECT_GE(lp.savedBytes, 0);
        }
    }
}

}  // namespace

TEST(Profiler, MemoryCategoriesEqualExactTensorSizesOnCpu) {
    ts::Graph g = ts::importJsonModelText(kMlp, "mlp.json");
    struct Case {
        ts::Optimizer optimizer;
        double stateCopies;  // optimizer state in units of the parameters' bytes
    };
    for (Case c : {Case{ts::Optimizer::Sgd, 0}, Case{ts::Optimizer::SgdMomentum, 1},
                   Case{ts::Optimizer::Adam, 2}, Case{ts::Optimizer::AdamW, 2}}) {
        SCOPED_TRACE(ts::optimizerName(c.optimizer));
        ts::ProfileOptions o = quickOptions();
        o.batches = {2};
        o.optimizer = c.optimizer;
        o.perLayer = false;
        ts::Profile p = ts::profileModel(g, o).profile;
        ASSERT_EQ(p.runs.size(), 1u);
        const ts::MemoryProfile& m = p.runs[0].memory;
        EXPECT_EQ(m.weights, kMlpParameters * 4);
        EXPECT_EQ(m.gradients, kMlpParameters * 4);
        EXPECT_EQ(m.optimizerState, c.stateCopies * kMlpParameters * 4);
        // The batch (2 x 64 floats) and its labels (2 int64 class ids).
        EXPECT_EQ(m.inputs, 2 * 64 * 4 + 2 * 8);
        // Saved for backward: ReLU's output (2 x 32 floats; fc2 saves the same tensor) and the
        // loss's log-softmax (2 x 10 floats), plus at most a few scalars of the loss.
        EXPECT_GE(m.activations, 2 * 32 * 4 + 2 * 10 * 4);
        EXPECT_LE(m.activations, 2 * 32 * 4 + 2 * 10 * 4 + 64);
        EXPECT_GE(m.peakAllocated, m.weights + m.inputs + m.optimizerState + m.activations);
    }
}

TEST(Profiler, SmallZooModelProfileIsWrittenAndReadBackIdentically) {
    ts::Graph g = ts::loadModel("zoo:resnet18?image=32&classes=10");
    ts::ProfileOptions o = quickOptions();
    o.batches = {1, 2};
    o.modelSpec = "zoo:resnet18?image=32&classes=10";
    ts::ProfileResult result = ts::profileModel(g, o);
    const ts::Profile& p = result.profile;
    ASSERT_TRUE(p.complete) << p.incompleteReason;
    ASSERT_EQ(p.runs.size(), 2u);
    expectConsistent(p);
    EXPECT_EQ(p.runs[0].layers.size(), g.ops.size());
    EXPECT_EQ(p.scenario.model, o.modelSpec);
    EXPECT_EQ(p.environment.device, "cpu");
    EXPECT_FALSE(p.kernelsRecorded);
    EXPECT_FALSE(p.kernelsMissingReason.empty());
    // Twice the batch: activations grow, weights do not.
    EXPECT_EQ(p.runs[0].memory.weights, p.runs[1].memory.weights);
    EXPECT_GT(p.runs[1].memory.activations, 1.5 * p.runs[0].memory.activations);
    // Layers that save activations account for most of what the allocator saw saved.
    double saved = 0;
    for (const ts::LayerProfile& lp : p.runs[1].layers) saved += lp.savedBytes;
    EXPECT_GT(saved, 0.5 * p.runs[1].memory.activations);

    fs::path file = tempFile("resnet18.json");
    ts::writeProfile(p, file.string());
    ts::Profile back = ts::readProfile(file.string());
    EXPECT_EQ(ts::profileToJson(back).dump(), ts::profileToJson(p).dump());

    // The trace holds every forward layer and the optimizer step.
    EXPECT_GE(result.timeline.spans.size(), g.ops.size());
    fs::path trace = tempFile("resnet18-trace.json");
    ts::writeTrace(result.timeline, "resnet18", trace.string());
    EXPECT_GT(fs::file_size(trace), 1000u);
}

TEST(Profiler, AutoBatchSweepsUpToTheCap) {
    ts::Graph g = ts::importJsonModelText(kMlp, "mlp.json");
    ts::ProfileOptions o = quickOptions();
    o.autoBatch = true;
    o.autoBatchCap = 8;
    ts::Profile p = ts::profileModel(g, o).profile;
    ASSERT_EQ(p.runs.size(), 4u);
    EXPECT_EQ(p.runs[0].batch, 1);
    EXPECT_EQ(p.runs[3].batch, 8);
    expectConsistent(p);
}

TEST(Profiler, MixedPrecisionRunsOnCpu) {
    ts::Graph g = ts::importJsonModelText(kMlp, "mlp.json");
    for (ts::TrainingPrecision prec : {ts::TrainingPrecision::AmpBf16, ts::TrainingPrecision::AmpFp16}) {
        SCOPED_TRACE(ts::trainingPrecisionName(prec));
        ts::ProfileOptions o = quickOptions();
        o.batches = {2};
        o.precision = prec;
        o.optimizer = ts::Optimizer::Adam;
        ts::Profile p = ts::profileModel(g, o).profile;
        EXPECT_EQ(p.scenario.precision, ts::trainingPrecisionName(prec));
        expectConsistent(p);
        // Master weights stay fp32 under autocast; Adam's two moments exist once a step was taken.
        EXPECT_EQ(p.runs[0].memory.weights, kMlpParameters * 4);
        EXPECT_EQ(p.runs[0].memory.optimizerState, 2 * kMlpParameters * 4);
    }
}

TEST(Profiler, CancellingKeepsWhatWasMeasured) {
    ts::Graph g = ts::importJsonModelText(kMlp, "mlp.json");
    ts::ProfileOptions o = quickOptions();
    o.batches = {1, 2, 4};
    std::atomic<bool> cancel{false};
    o.cancelled = &cancel;
    // Cancel once the second batch size starts measuring its layers.
    o.progress = [&](const ts::ProfileProgress& p) {
        if (p.stage.rfind("batch 2: layers", 0) == 0) cancel.store(true);
    };
    ts::Profile p = ts::profileModel(g, o).profile;
    EXPECT_FALSE(p.complete);
    EXPECT_FALSE(p.incompleteReason.empty());
    ASSERT_EQ(p.runs.size(), 2u);
    EXPECT_TRUE(p.runs[0].complete);
    EXPECT_EQ(p.runs[0].layers.size(), g.ops.size());
    EXPECT_FALSE(p.runs[1].complete);
    EXPECT_TRUE(p.runs[1].iteration.measured());
}

TEST(Profiler, DevicesThatCannotBeUsedAreNamed) {
    ts::Graph g = ts::importJsonModelText(kMlp, "mlp.json");
    ts::ProfileOptions o = quickOptions();
    o.device = "tpu:0";
    try {
        ts::profileModel(g, o);
        FAIL() << "tpu:0 accepted";
    } catch (const ts::DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("tpu:0"), std::string::npos) << e.what();
    }
    o.device = "cuda:0";
    try {
        ts::profileModel(g, o);
        GTEST_SKIP() << "a CUDA device is present";
    } catch (const ts::DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
    }
}
