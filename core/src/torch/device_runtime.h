#pragma once
// Internal (LibTorch): the device a profile runs on, hiding the CUDA/CPU differences the profiler
// needs: timing (CUDA events on the GPU, a steady clock on the CPU), memory counters (the CUDA
// caching allocator's statistics, or TrainScope's counting CPU allocator), device and software
// descriptions, and out-of-memory detection.
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "trainscope/core/profile.h"

namespace ts::torchexec {

struct MemoryCounters {
    int64_t allocated = 0;
    int64_t peakAllocated = 0;
    int64_t reserved = 0;
    int64_t peakReserved = 0;
};

class DeviceRuntime {
public:
    virtual ~DeviceRuntime() = default;

    // "cpu", "cuda", "cuda:N". Throws DeviceError when the device cannot be used (no CUDA build,
    // no driver, no such index), naming the device and the reason.
    static std::unique_ptr<DeviceRuntime> open(const std::string& spec);

    virtual at::Device device() const = 0;
    virtual bool isCuda() const = 0;
    virtual std::string name() const = 0;   // "cpu", "cuda:0"
    virtual void describe(ProfileEnvironment& env) const = 0;

    virtual void synchronize() = 0;
    // Milliseconds `work` takes on the device (events around it on a GPU, then synchronizes).
    virtual double timeMs(const std::function<void()>& work) = 0;

    virtual MemoryCounters memory() const = 0;
    virtual void resetPeak() = 0;
    virtual void releaseCachedMemory() = 0;
    // GPU memory in use outside the allocator (CUDA context, library handles); 0 on the CPU.
    virtual int64_t memoryOutsideAllocator() const = 0;
};

// Out of memory: LibTorch's OutOfMemoryError, or an allocation failure reported otherwise.
bool isOutOfMemory(const std::exception& e);

// The first line of an exception's message, without LibTorch's backtrace.
std::string shortMessage(const std::exception& e);

}  // namespace ts::torchexec
