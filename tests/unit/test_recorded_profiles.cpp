// The profiles recorded under tests/data/profiles/ (ground truth for the predictors): each one
// reads, and its figures are consistent: every run that fits is complete, its parts sum to the
// iteration, its measured peak holds the memory that coexists at the end of forward and backward, its
// layers are measured, and the device and software that measured it are recorded.
#include <gtest/gtest.h>

#include <filesystem>

#include "trainscope/core/profile_file.h"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> recordedProfiles() {
    std::vector<fs::path> files;
    fs::path root = fs::path(TRAINSCOPE_TEST_DATA_DIR) / "profiles";
    if (!fs::is_directory(root)) return files;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TEST(RecordedProfiles, AreConsistent) {
    std::vector<fs::path> files = recordedProfiles();
    if (files.empty()) GTEST_SKIP() << "no profiles recorded under tests/data/profiles";
    for (const fs::path& f : files) {
        SCOPED_TRACE(f.filename().string());
        ts::Profile p = ts::readProfile(f.string());
        EXPECT_TRUE(p.complete) << p.incompleteReason;
        EXPECT_FALSE(p.environment.deviceName.empty());
        EXPECT_FALSE(p.environment.software.libtorch.empty());
        EXPECT_FALSE(p.environment.startedAt.empty());
        if (p.environment.device != "cpu") {
            EXPECT_TRUE(p.environment.gpu.has_value());
            EXPECT_FALSE(p.environment.software.cudaRuntime.empty());
        }
        ASSERT_FALSE(p.runs.empty());
        for (size_t i = 0; i < p.runs.size(); ++i) {
            const ts::ProfileRun& r = p.runs[i];
            SCOPED_TRACE("batch " + std::to_string(r.batch));
            if (i > 0) {
                EXPECT_GT(r.batch, p.runs[i - 1].batch);
            }
            if (!r.fits) {
                EXPECT_FALSE(r.error.empty());
                continue;
            }
            EXPECT_TRUE(r.complete);
            EXPECT_GT(r.iteration.medianMs, 0);
            double parts = 0;
            for (const ts::IterationPart& part : r.parts) parts += part.ms;
            EXPECT_NEAR(parts, r.iteration.medianMs, 1e-6 * r.iteration.medianMs);
            const ts::MemoryProfile& m = r.memory;
            EXPECT_GT(m.weights, 0);
            EXPECT_GE(m.peakAllocated, m.weights + m.inputs);
            // The end of the forward pass (all activations) and of the backward pass (all gradients)
            // both happen during the iteration whose peak was measured.
            EXPECT_GE(m.peakAllocated * 1.01, m.weights + m.inputs + m.optimizerState + std::max(m.activations, m.gradients));
            EXPECT_FALSE(r.layers.empty());
            for (const ts::LayerProfile& lp : r.layers) {
                EXPECT_TRUE(lp.forward.measured()) << lp.name;
                if (lp.hasBackward) {
                    EXPECT_TRUE(lp.backward.measured()) << lp.name;
                }
            }
        }
    }
}
