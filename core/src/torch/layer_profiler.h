#pragma once
// Internal (LibTorch): measures one operation in isolation, forward and backward, on the inputs a
// real forward pass gave it: time (median and spread), the memory it keeps for backward, and (with
// a kernel tracer) the kernels each pass launches.
#include <vector>

#include "device_runtime.h"
#include "graph_executor.h"
#include "profiling/kernel_tracer.h"
#include "trainscope/core/profiler.h"

namespace ts::torchexec {

class LayerProfiler {
public:
    // `tracer` may be null or inactive: kernels are then not recorded.
    LayerProfiler(DeviceRuntime& rt, const ProfileOptions& options, profiling::KernelTracer* tracer);

    // Measures `op` on the executor's current values of its inputs. `gradMask`: requiresGrad(graph).
    // savedBytes is what the operation keeps alive for backward beyond its inputs (its own outputs
    // when it saves them, and extra buffers such as masks, indices or statistics).
    LayerProfile measure(const GraphExecutor& ex, int op, const std::vector<bool>& gradMask);

private:
    DeviceRuntime& rt_;
    const ProfileOptions& o_;
    profiling::KernelTracer* tracer_;
};

}  // namespace ts::torchexec
