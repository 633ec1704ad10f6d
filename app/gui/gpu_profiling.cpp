#include "gpu_profiling.h"

#include <QObject>
#include <algorithm>

#include "trainscope/core/errors.h"
#include "trainscope/core/profiler.h"
#include "trainscope/kernels/device_query.h"

namespace ts::gui {

using namespace ts::predictors;

ProfilingAvailability gpuProfilingAvailability() {
    ProfilingAvailability a;
    if (!executionSupported()) {
        a.reason = QObject::tr(
            "This build of TrainScope has no LibTorch, so it cannot run models; build from source "
            "with LibTorch (see the README) to profile on a GPU.");
        return a;
    }
    const DeviceQuery q = kernels::queryDevices();
    if (!q.available || q.devices.empty()) {
        a.reason = QObject::tr("No usable CUDA GPU: %1").arg(QString::fromStdString(q.status));
        return a;
    }
    const DeviceProperties& d = q.devices.front();
    a.available = true;
    a.device = "cuda:" + std::to_string(d.index);
    a.properties = d;
    a.reason = QObject::tr(
                   "Measure the open model on %1 (%2) at the current precision and optimizer, at the "
                   "current batch size, half and double it")
                   .arg(QString::fromStdString(d.name), QString::fromStdString(a.device));
    return a;
}

std::vector<int64_t> batchesAround(int64_t batch, int64_t maxBatch) {
    std::vector<int64_t> batches{std::max<int64_t>(batch, 1)};
    for (int64_t b : {batch / 2, batch * 2})
        if (b >= 1 && b <= maxBatch && std::find(batches.begin(), batches.end(), b) == batches.end())
            batches.push_back(b);
    return batches;
}

double profilingFraction(const std::string& stage, int done, int total, const std::vector<int64_t>& batches) {
    if (batches.empty() || stage.rfind("batch ", 0) != 0) return -1;
    const int64_t batch = std::atoll(stage.c_str() + 6);
    const auto at = std::find(batches.begin(), batches.end(), batch);
    if (at == batches.end()) return -1;  // the auto-batch bisection step: not planned ahead
    // Within one batch size the per-layer measurements take most of the time.
    double inBatch = 0.05;
    if (stage.find(": iteration") != std::string::npos) inBatch = 0.15;
    if (stage.find(": layers") != std::string::npos && total > 0) inBatch = 0.15 + 0.85 * double(done) / total;
    return (double(at - batches.begin()) + inBatch) / double(batches.size());
}

BackgroundJob::Work profilingWork(ProfileRequest request, std::function<void(const Profile&)> measured,
                                  std::shared_ptr<Profile> result) {
    return [request = std::move(request), measured = std::move(measured), result](JobContext& job) {
        ProfileOptions o;
        o.device = request.device;
        o.batches = request.batches;
        if (auto why = unprofilableReason(request.precision, request.optimizer)) throw ModelError("", *why);
        o.precision = request.precision;
        o.optimizer = request.optimizer;
        o.modelSpec = request.modelSpec;
        o.deviceProperties = request.properties;
        if (request.quick) {
            o.warmup = 1;
            o.minRepeats = 3;
            o.maxRepeats = 5;
            o.maxSecondsPerMeasurement = 0.5;
        }
        o.cancelled = job.cancelFlag();
        const std::vector<int64_t> batches = request.batches;
        o.progress = [&job, batches](const ProfileProgress& p) {
            QString text = QString::fromStdString(p.stage);
            if (p.total > 1) text += QString(" %1/%2").arg(p.done).arg(p.total);
            job.progress(text, profilingFraction(p.stage, p.done, p.total, batches));
        };
        o.runFinished = [&job, measured](const Profile& sofar) {
            auto copy = std::make_shared<Profile>(sofar);
            job.onGuiThread([measured, copy] { measured(*copy); });
        };
        try {
            *result = profileModel(request.graph, o).profile;
        } catch (const ExecutionError& e) {
            throw ModelError(request.modelSpec, e.what());
        }
    };
}

}  // namespace ts::gui
