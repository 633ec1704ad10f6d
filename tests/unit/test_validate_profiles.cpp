// `validate` on the recorded profiles: structure on the CPU ones, and exactness on a profile
// built from an exact linear law (leave-one-batch-out must then reproduce the held-out run).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/profile/measured_device.h"
#include "trainscope/predictors/profile/profile_validation.h"

using namespace ts;
using namespace ts::predictors;

namespace {

TimingStat timing(double ms) {
    TimingStat t;
    t.medianMs = ms;
    t.minMs = t.maxMs = ms;
    t.repeats = 3;
    return t;
}

// Two layers whose passes grow linearly with the batch, a constant remainder of the iteration and
// an affine peak memory: every law the validation interpolates or extrapolates is exact.
Profile linearCpuProfile(const std::vector<int64_t>& batches) {
    Profile p;
    p.environment.device = "cpu";
    p.environment.deviceName = "synthetic CPU";
    p.scenario.model = "synthetic";
    p.scenario.precision = "fp32";
    p.scenario.optimizer = "sgd";
    for (int64_t b : batches) {
        ProfileRun r;
        r.batch = b;
        double sum = 0;
        for (int op = 0; op < 2; ++op) {
            LayerProfile l;
            l.op = op;
            l.name = "layer" + std::to_string(op);
            l.forward = timing(0.5 + 0.25 * (op + 1) * double(b));
            l.hasBackward = op == 0;
            if (l.hasBackward) l.backward = timing(1.0 + 0.5 * double(b));
            sum += l.forward.medianMs + (l.hasBackward ? l.backward.medianMs : 0);
            r.layers.push_back(l);
        }
        r.iteration = timing(sum + 3.0);
        r.memory.peakAllocated = r.memory.peakReserved = 1e6 + 2e5 * double(b);
        p.runs.push_back(r);
    }
    return p;
}

}  // namespace

TEST(ValidateProfiles, LinearLawHeldOutBatchesAreReproduced) {
    const std::vector<int64_t> batches = {1, 2, 4, 8};
    const Profile p = linearCpuProfile(batches);
    const ProfileValidation v = validateProfiles({{"linear.json", p}}, GpuDatabase::builtin());
    std::set<int64_t> held;
    for (const ValidationRow& r : v.rows) {
        ASSERT_EQ(r.kind, ValidationKind::BatchSize);
        held.insert(r.batch);
        // The measured side is the held-out run itself, the prediction from the other three.
        const ProfileRun* run = nullptr;
        for (const ProfileRun& x : p.runs)
            if (x.batch == r.batch) run = &x;
        ASSERT_NE(run, nullptr);
        EXPECT_DOUBLE_EQ(r.measuredMs, run->iteration.medianMs);
        EXPECT_LT(r.msError, 1e-9) << "batch " << r.batch;
        ASSERT_TRUE(r.bytesError.has_value());
        EXPECT_LT(*r.bytesError, 1e-9) << "batch " << r.batch;
        EXPECT_EQ(r.to, "batch " + std::to_string(r.batch));
        EXPECT_EQ(r.from.find(std::to_string(r.batch)), std::string::npos) << r.from;  // not fitted on itself
    }
    EXPECT_EQ(held, std::set<int64_t>(batches.begin(), batches.end()));
    EXPECT_EQ(v.kinds[0].time.count, 4);
    EXPECT_LT(v.kinds[0].time.mean, 1e-9);
}

TEST(ValidateProfiles, MeasuredDeviceFitFollowsTheLawAndRejectsNoRuns) {
    const MeasuredDeviceFit fit(linearCpuProfile({2, 4}));
    // Between, beyond and below the measured batches: 0.75 b + 0.5 b + 5 (layers + remainder).
    for (double n : {3.0, 6.0, 1.0}) {
        const MeasuredDevicePrediction p = fit.predict(n);
        EXPECT_NEAR(p.iterationMs, 0.5 + 0.25 * n + 0.5 + 0.5 * n + 1.0 + 0.5 * n + 3.0, 1e-9) << n;
        EXPECT_NEAR(p.peakBytes, 1e6 + 2e5 * n, 1e-3) << n;
    }
    Profile none = linearCpuProfile({2});
    none.runs[0].fits = false;
    EXPECT_THROW(MeasuredDeviceFit{none}, ModelError);
}

TEST(ValidateProfiles, RecordedCpuProfilesGiveBatchSizeRows) {
    const std::vector<NamedProfile> profiles =
        readProfileDirectory(std::string(TRAINSCOPE_TEST_DATA_DIR) + "/profiles/cpu");
    ASSERT_GE(profiles.size(), 1u);
    const ProfileValidation v = validateProfiles(profiles, GpuDatabase::builtin());
    std::map<std::string, int> rowsPerProfile;
    for (const ValidationRow& r : v.rows) {
        ASSERT_EQ(r.kind, ValidationKind::BatchSize) << "CPU profiles are validated across batch sizes only";
        ++rowsPerProfile[r.profile];
        EXPECT_TRUE(std::isfinite(r.predictedMs) && r.predictedMs > 0) << r.profile << " " << r.to;
        EXPECT_TRUE(std::isfinite(r.msError)) << r.profile << " " << r.to;
        if (r.bytesError) {
            EXPECT_TRUE(std::isfinite(*r.bytesError) && *r.predictedBytes > 0);
        }
        // The held-out batch is a real run of that profile, and the measured time is its own.
        bool found = false;
        for (const NamedProfile& np : profiles)
            if (np.name == r.profile)
                for (const ProfileRun& run : np.profile.runs)
                    found = found || (run.batch == r.batch && run.iteration.medianMs == r.measuredMs);
        EXPECT_TRUE(found) << r.profile << " batch " << r.batch;
    }
    for (const NamedProfile& np : profiles) EXPECT_GT(rowsPerProfile[np.name], 0) << np.name;
    ASSERT_EQ(v.kinds.size(), 3u);
    EXPECT_EQ(v.kinds[0].time.count, int(v.rows.size()));
    for (int k = 1; k < 3; ++k) {
        EXPECT_EQ(v.kinds[size_t(k)].time.count, 0);
        EXPECT_FALSE(v.kinds[size_t(k)].notes.empty()) << "kinds without pairs say why";
    }
    bool needsGpus = false;
    for (const std::string& n : v.kinds[2].notes) needsGpus = needsGpus || n.find("needs profiles of two GPUs") == 0;
    EXPECT_TRUE(needsGpus);
}

TEST(ValidateProfiles, MissingDirectoryIsNamed) {
    try {
        readProfileDirectory("/nonexistent/profiles");
        FAIL() << "expected a ModelError";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/profiles"), std::string::npos);
    }
}
