// On a machine with a GPU (label "gpu"; skipped elsewhere, saying why): a real training profile
// on the GPU, with CUDA events, the caching allocator's counters and (where CUPTI is allowed)
// every layer's kernels.
#include <gtest/gtest.h>

#include "trainscope/core/model_loader.h"
#include "trainscope/core/profiler.h"
#include "trainscope/kernels/device_query.h"

namespace ts {
namespace {

TEST(LocalGpuProfiler, ProfilesASmallModelWithKernelsAndMemory) {
    DeviceQuery q = kernels::queryDevices();
    if (!q.available) GTEST_SKIP() << "no GPU: " << q.status;
    Graph g = loadModel("zoo:resnet18?image=64&classes=10");
    for (TrainingPrecision precision : {TrainingPrecision::Fp32, TrainingPrecision::AmpBf16}) {
        SCOPED_TRACE(trainingPrecisionName(precision));
        ProfileOptions o;
        o.device = "cuda:0";
        o.batches = {2, 8};
        o.precision = precision;
        o.optimizer = Optimizer::Adam;
        o.deviceProperties = q.devices.at(0);
        ProfileResult result = profileModel(g, o);
        const Profile& p = result.profile;
        ASSERT_TRUE(p.complete) << p.incompleteReason;
        ASSERT_EQ(p.runs.size(), 2u);
        EXPECT_TRUE(p.environment.gpu.has_value());
        EXPECT_FALSE(p.environment.software.cudaRuntime.empty());
        for (const ProfileRun& r : p.runs) {
            ASSERT_TRUE(r.fits) << r.error;
            EXPECT_GT(r.iteration.medianMs, 0);
            EXPECT_GT(r.memory.cudaContext, 0);
            EXPECT_GE(r.memory.peakReserved, r.memory.peakAllocated);
            EXPECT_NEAR(r.memory.optimizerState, 2 * r.memory.weights, 0.05 * r.memory.weights);
            double layers = 0;
            for (const LayerProfile& lp : r.layers) layers += lp.forward.medianMs + lp.backward.medianMs;
            // Isolated layers explain most of the iteration (the rest is reported as named parts).
            EXPECT_GT(layers, 0.3 * r.iteration.medianMs);
            EXPECT_LT(layers, 3.0 * r.iteration.medianMs);
        }
        if (!p.kernelsRecorded) {
            std::cout << "kernels not recorded: " << p.kernelsMissingReason << "\n";
            EXPECT_FALSE(p.kernelsMissingReason.empty());
            continue;
        }
        int convWithKernels = 0, convs = 0;
        for (const LayerProfile& lp : p.runs.back().layers)
            if (lp.type == "Conv") {
                ++convs;
                if (!lp.forwardKernels.empty() && !lp.backwardKernels.empty()) ++convWithKernels;
            }
        EXPECT_EQ(convWithKernels, convs);
        bool kernelSpans = false;
        for (const TraceSpan& s : result.timeline.spans) kernelSpans |= s.category == "kernel";
        EXPECT_TRUE(kernelSpans);
    }
}

}  // namespace
}  // namespace ts
