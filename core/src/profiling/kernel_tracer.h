#pragma once
// Records the GPU kernels each layer launches, with CUPTI's activity API, behind plain C++
// (no LibTorch, no CUDA types in this header). The profiler pushes a layer's id around the code it
// launches; every kernel record is attributed to the innermost id pushed when it was launched
// (CUPTI external correlation).
//
// When CUPTI cannot be used (this build has no CUPTI, insufficient privileges, another profiler is
// subscribed), start() returns false and reason() says why in one sentence; the profile then
// completes from CUDA events alone and records that reason.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trainscope/core/profile.h"

namespace ts::profiling {

// One kernel launch as CUPTI reports it.
struct KernelActivity {
    KernelRecord kernel;      // durationUs of this launch, launches = 1
    uint64_t externalId = 0;  // id pushed when it was launched, 0 when none
    uint64_t startNs = 0;     // CUPTI timestamps
    uint64_t endNs = 0;
    uint32_t streamId = 0;
};

class KernelTracer {
public:
    KernelTracer();
    ~KernelTracer();
    KernelTracer(const KernelTracer&) = delete;
    KernelTracer& operator=(const KernelTracer&) = delete;

    // Enables kernel and external-correlation activity recording. False (with reason()) when
    // CUPTI is unavailable or refused.
    bool start();
    bool active() const;
    const std::string& reason() const;

    // Attribute kernels launched from now until pop() to `id` (nonzero).
    void push(uint64_t id);
    void pop();

    // Flushes CUPTI's buffers and returns every kernel recorded since the last collect().
    std::vector<KernelActivity> collect();

    // CUPTI's timestamp now (same clock as KernelActivity::startNs), 0 when inactive.
    uint64_t timestampNs() const;

    std::string cuptiVersion() const;  // "" when unavailable

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Whether a kernel name marks tensor-core use (HMMA/IMMA/GMMA instructions, cuBLAS/CUTLASS/cuDNN
// tensor-op kernels). A heuristic on names: CUPTI's activity records do not say it.
bool isTensorCoreKernel(const std::string& name);

// Merges the launches of `iterations` calls of one layer into the kernels of one call: launches
// with the same name, grid and block become one record whose `launches` is their count per call and
// whose durationUs is their total duration per call. Order: first launch first.
std::vector<KernelRecord> summarizeKernels(const std::vector<KernelActivity>& activities, int iterations);

}  // namespace ts::profiling
