// KernelTracer over CUPTI's activity API: kernel records, external-correlation records (the id
// pushed on the launching thread) and runtime/driver API records (when each launch call began).
// CUPTI hands filled buffers to bufferCompleted() on its own thread; they are copied into the one
// active Recording under gMutex, and collect() turns them into KernelActivity.
#include "profiling/kernel_tracer.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <mutex>

#include "profiling/kernel_tracer_internal.h"

namespace ts::profiling {
namespace {

using detail::Correlations;
using detail::LaunchedKernel;
using detail::PushedRange;

// CUPTI writes kernel records in the layout of its own version; each version since CUDA 12.0
// (CUpti_ActivityKernel9) only appended fields, so the fields read here sit at the same offsets
// whichever libcupti is loaded. Use the newest layout the headers define.
#if CUPTI_API_VERSION >= 130202
using KernelRecordLayout = CUpti_ActivityKernel11;
#elif CUPTI_API_VERSION >= 130000
using KernelRecordLayout = CUpti_ActivityKernel10;
#else
using KernelRecordLayout = CUpti_ActivityKernel9;
#endif
#define TS_SAME_OFFSET(field) \
    static_assert(offsetof(KernelRecordLayout, field) == offsetof(CUpti_ActivityKernel9, field), #field)
TS_SAME_OFFSET(registersPerThread);
TS_SAME_OFFSET(start);
TS_SAME_OFFSET(end);
TS_SAME_OFFSET(streamId);
TS_SAME_OFFSET(gridX);
TS_SAME_OFFSET(blockZ);
TS_SAME_OFFSET(staticSharedMemory);
TS_SAME_OFFSET(dynamicSharedMemory);
TS_SAME_OFFSET(correlationId);
TS_SAME_OFFSET(name);
#undef TS_SAME_OFFSET

// The profiler's ids; PyTorch's own profiler (Kineto) is not running beside TrainScope's.
constexpr CUpti_ExternalCorrelationKind kIdKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
// CUPTI emits an external-correlation record only with the runtime or driver API record of the
// call (cudaLaunchKernel; cuBLASLt launches through the driver), so both API kinds are on.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_DRIVER};
constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
constexpr std::size_t kRecordAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT

// Records since the last collect(), guarded by gMutex.
struct Recording {
    std::vector<LaunchedKernel> kernels;
    Correlations current;   // correlations received since the last collect()
    Correlations previous;  // those of the collect() before: a kernel record can come one flush late
    std::vector<PushedRange> ranges;
    uint64_t lastCollectNs = 0;
};

std::mutex gMutex;
Recording* gActive = nullptr;  // CUPTI's callbacks are process-wide: one tracer at a time

std::string cudaVersionText(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Why this machine has no GPU to trace, "" when it has one. Asked of the CUDA runtime before CUPTI
// is touched: CUPTI 13.2 overflows its stack on its first call when no driver (libcuda.so.1) is
// installed. cudaGetDeviceCount loads the driver but creates no context.
const std::string& deviceProblem() {
    static const std::string problem = [] {
        int driver = 0;
        int runtime = 0;
        int devices = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        const cudaError_t status = cudaGetDeviceCount(&devices);
        cudaGetLastError();  // leave no error behind for LibTorch's checks
        if (driver == 0)
            return std::string("no NVIDIA driver is installed (libcuda.so.1 was not found), so there is ") +
                   "no GPU to record kernels on";
        if (status == cudaErrorInsufficientDriver)
            return "the NVIDIA driver supports CUDA " + cudaVersionText(driver) + " but TrainScope's CUDA runtime is " +
                   cudaVersionText(runtime) + ": update the NVIDIA driver to record kernels";
        if (status == cudaErrorNoDevice || (status == cudaSuccess && devices == 0))
            return std::string("no CUDA GPU is visible to this process (check CUDA_VISIBLE_DEVICES and nvidia-smi), ") +
                   "so kernels are not recorded";
        if (status != cudaSuccess)
            return std::string("the CUDA runtime cannot use the GPU (") + cudaGetErrorName(status) + ": " +
                   cudaGetErrorString(status) + "), so kernels are not recorded";
        return std::string();
    }();
    return problem;
}

std::string refusal(CUptiResult result, const char* call) {
    switch (result) {
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
            return "the NVIDIA driver lets only administrators profile this GPU: run TrainScope as root, or load the "
                   "driver with NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
        case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
            return "another CUDA profiler (Nsight Systems, Nsight Compute or PyTorch's profiler) is already using "
                   "CUPTI in this process: run TrainScope outside it to record kernels";
        case CUPTI_ERROR_NOT_INITIALIZED:
            return "CUPTI could not initialise the CUDA driver: check that nvidia-smi works and that the driver "
                   "matches the CUDA runtime";
        case CUPTI_ERROR_INVALID_DEVICE:
        case CUPTI_ERROR_NOT_COMPATIBLE:
            return "CUPTI does not support this GPU or driver, so kernels are not recorded";
        default: {
            const char* name = nullptr;
            if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || !name) name = "unknown error";
            return std::string("CUPTI refused to record kernels (") + call + " returned " + name + ")";
        }
    }
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;  // no buffer: CUPTI drops the records and counts them
    *maxNumRecords = 0;                  // as many as fit
}

LaunchedKernel launchedKernel(const KernelRecordLayout& record) {
    LaunchedKernel kernel;
    kernel.name = record.name ? record.name : "";
    kernel.grid[0] = record.gridX;
    kernel.grid[1] = record.gridY;
    kernel.grid[2] = record.gridZ;
    kernel.block[0] = record.blockX;
    kernel.block[1] = record.blockY;
    kernel.block[2] = record.blockZ;
    kernel.registersPerThread = record.registersPerThread;
    kernel.staticSharedBytes = record.staticSharedMemory;
    kernel.dynamicSharedBytes = record.dynamicSharedMemory;
    kernel.startNs = record.start;
    kernel.endNs = record.end;
    kernel.streamId = record.streamId;
    kernel.correlationId = record.correlationId;
    return kernel;
}

// Copies what the tracer needs out of a completed buffer (the kernel name pointer stays valid only
// while its module is loaded), then hands the buffer back.
void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize) {
    std::vector<LaunchedKernel> kernels;
    Correlations received;
    CUpti_Activity* record = nullptr;
    while (validSize > 0 && cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
        switch (record->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
                kernels.push_back(launchedKernel(*reinterpret_cast<const KernelRecordLayout*>(record)));
                break;
            case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
                const auto* link = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
                if (link->externalKind == kIdKind) received.externalIds[link->correlationId] = link->externalId;
                break;
            }
            case CUPTI_ACTIVITY_KIND_RUNTIME:
            case CUPTI_ACTIVITY_KIND_DRIVER: {
                const auto* call = reinterpret_cast<const CUpti_ActivityAPI*>(record);
                received.apiStartNs.emplace(call->correlationId, call->start);
                break;
            }
            default:
                break;
        }
    }
    std::free(buffer);

    std::lock_guard lock(gMutex);
    if (!gActive) return;  // a late buffer after the tracer stopped
    gActive->kernels.insert(gActive->kernels.end(), std::make_move_iterator(kernels.begin()),
                            std::make_move_iterator(kernels.end()));
    gActive->current.externalIds.merge(received.externalIds);
    gActive->current.apiStartNs.merge(received.apiStartNs);
}

uint64_t cuptiNow() {
    uint64_t now = 0;
    return cuptiGetTimestamp(&now) == CUPTI_SUCCESS ? now : 0;
}

}  // namespace

struct KernelTracer::State {
    bool active = false;
    int pushed = 0;  // ids pushed and not yet popped, on the profiler's thread
    std::string reason;
    Recording recording;  // written by CUPTI's callbacks while active, under gMutex
};

KernelTracer::KernelTracer() : state_(std::make_unique<State>()) {}

KernelTracer::~KernelTracer() {
    if (!state_->active) return;
    while (state_->pushed > 0) pop();
    for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard lock(gMutex);
    if (gActive == &state_->recording) gActive = nullptr;
}

bool KernelTracer::start() {
    if (state_->active) return true;
    if (const std::string& problem = deviceProblem(); !problem.empty()) {
        state_->reason = problem;
        return false;
    }
    {
        std::lock_guard lock(gMutex);
        if (gActive) {
            state_->reason =
                "another KernelTracer is already recording in this process (CUPTI's activity "
                "callbacks are process-wide), so this one records nothing";
            return false;
        }
        state_->recording = Recording{};
        gActive = &state_->recording;
    }
    auto fail = [&](CUptiResult result, const char* call, std::size_t enabled) {
        for (std::size_t i = 0; i < enabled; ++i) cuptiActivityDisable(kKinds[i]);
        std::lock_guard lock(gMutex);
        gActive = nullptr;
        state_->reason = refusal(result, call);
        return false;
    };
    if (CUptiResult result = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted); result != CUPTI_SUCCESS)
        return fail(result, "cuptiActivityRegisterCallbacks", 0);
    for (std::size_t i = 0; i < std::size(kKinds); ++i) {
        if (CUptiResult result = cuptiActivityEnable(kKinds[i]); result != CUPTI_SUCCESS)
            return fail(result, "cuptiActivityEnable", i);
    }
    state_->recording.lastCollectNs = cuptiNow();
    state_->active = true;
    state_->reason.clear();
    return true;
}

bool KernelTracer::active() const {
    return state_->active;
}

const std::string& KernelTracer::reason() const {
    return state_->reason;
}

void KernelTracer::push(uint64_t id) {
    if (!state_->active) return;
    {
        std::lock_guard lock(gMutex);
        state_->recording.ranges.push_back({id, cuptiNow(), PushedRange::kOpen});
    }
    cuptiActivityPushExternalCorrelationId(kIdKind, id);
    ++state_->pushed;
}

void KernelTracer::pop() {
    if (!state_->active || state_->pushed == 0) return;
    uint64_t popped = 0;
    cuptiActivityPopExternalCorrelationId(kIdKind, &popped);
    --state_->pushed;
    const uint64_t now = cuptiNow();
    std::lock_guard lock(gMutex);
    auto& ranges = state_->recording.ranges;
    auto open = std::find_if(ranges.rbegin(), ranges.rend(),
                             [](const PushedRange& range) { return range.endNs == PushedRange::kOpen; });
    if (open != ranges.rend()) open->endNs = now;
}

std::vector<KernelActivity> KernelTracer::collect() {
    if (!state_->active) return {};
    // Blocking: bufferCompleted() runs for every buffer (and takes gMutex) before this returns.
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const uint64_t now = cuptiNow();
    std::vector<LaunchedKernel> kernels;
    Correlations known;
    {
        std::lock_guard lock(gMutex);
        Recording& recording = state_->recording;
        kernels.swap(recording.kernels);
        known = recording.current;
        known.externalIds.insert(recording.previous.externalIds.begin(), recording.previous.externalIds.end());
        known.apiStartNs.insert(recording.previous.apiStartNs.begin(), recording.previous.apiStartNs.end());
        known.ranges = recording.ranges;
        // Keep one collect() of history for records that arrive a flush late; drop the rest.
        recording.previous = std::move(recording.current);
        recording.current = Correlations{};
        std::erase_if(recording.ranges,
                      [&](const PushedRange& range) { return range.endNs < recording.lastCollectNs; });
        recording.lastCollectNs = now;
    }
    return detail::attributeKernels(kernels, known);
}

uint64_t KernelTracer::timestampNs() const {
    return state_->active ? cuptiNow() : 0;
}

std::string KernelTracer::cuptiVersion() const {
    if (!deviceProblem().empty()) return "";
    uint32_t version = 0;
    if (cuptiGetVersion(&version) != CUPTI_SUCCESS) return "";
    return "CUPTI API " + std::to_string(version);
}

}  // namespace ts::profiling
