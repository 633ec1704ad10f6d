#pragma once
// The CUPTI-free half of the kernel tracer: what a kernel record holds once copied out of CUPTI's
// buffer, and how records become KernelActivity (readable names, the id each kernel belongs to).
// Kept apart from kernel_tracer.cpp so it is built and tested in every build, GPU or not.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel_tracer.h"

namespace ts::profiling::detail {

// Longer demangled names (deep CUTLASS templates run to thousands of characters) are shortened.
inline constexpr std::size_t kMaxKernelNameLength = 300;

// The fields of one CUPTI kernel record the tracer uses.
struct LaunchedKernel {
    std::string name;  // as CUPTI reports it: mangled for C++ kernels
    int grid[3] = {1, 1, 1};
    int block[3] = {1, 1, 1};
    int registersPerThread = 0;
    int staticSharedBytes = 0;
    int dynamicSharedBytes = 0;
    uint64_t startNs = 0;  // 0 and 0 when CUPTI could not time the kernel
    uint64_t endNs = 0;
    uint32_t streamId = 0;
    uint32_t correlationId = 0;  // the runtime or driver API call that launched it
};

// The time between a push() and its pop(); endNs is kOpen until popped.
struct PushedRange {
    static constexpr uint64_t kOpen = std::numeric_limits<uint64_t>::max();
    uint64_t id = 0;
    uint64_t beginNs = 0;
    uint64_t endNs = kOpen;
};

// What links a kernel to the id pushed when it was launched.
struct Correlations {
    // API call -> id pushed on the calling thread (CUPTI external-correlation records).
    std::unordered_map<uint32_t, uint64_t> externalIds;
    // API call -> when it began (CUPTI runtime/driver API records), for the calls of other threads.
    std::unordered_map<uint32_t, uint64_t> apiStartNs;
    // Every push()..pop() window, whichever thread launches in it.
    std::vector<PushedRange> ranges;
};

// Demangles an Itanium-mangled name ("_Z..."); any other name, or one that fails to demangle, is
// kept as it is. Names longer than kMaxKernelNameLength lose their parameter list, then their tail.
std::string readableKernelName(const std::string& name);

// The id a kernel launched by API call `correlationId` belongs to: the id pushed on the launching
// thread (external correlation); else, for a call from another thread (PyTorch's autograd runs
// backward on its own thread), the innermost pushed range the call began in; else 0.
uint64_t attributedId(uint32_t correlationId, const Correlations& correlations);

// One KernelActivity per record, ordered by start time (launch order for kernels CUPTI could not
// time). The tensor-core flag is decided on the full name, before it is shortened.
std::vector<KernelActivity> attributeKernels(const std::vector<LaunchedKernel>& kernels,
                                             const Correlations& correlations);

}  // namespace ts::profiling::detail
