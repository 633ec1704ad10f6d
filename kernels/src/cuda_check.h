#pragma once
// Turns CUDA runtime and cuBLASLt status codes into ts::DeviceError naming the failed call,
// and owns device resources so that every path (errors, cancellation) frees them.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "trainscope/core/errors.h"

namespace ts::kernels::detail {

inline std::string cudaErrorText(cudaError_t err) {
    return std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + ")";
}

// Throws DeviceError "<call> failed: <reason>" unless err is cudaSuccess.
inline void checkCuda(cudaError_t err, const char* call) {
    if (err == cudaSuccess) return;
    // A failed call also leaves its error pending; clear it so the next launch check does not
    // report it again (sticky errors, which poison the context, stay anyway).
    (void)cudaGetLastError();
    throw ts::DeviceError(std::string(call) + " failed: " + cudaErrorText(err));
}

inline void checkCublas(cublasStatus_t status, const char* call) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    (void)cudaGetLastError();
    throw ts::DeviceError(std::string(call) + " failed: " + cublasLtGetStatusString(status) + " (" +
                          cublasLtGetStatusName(status) + ")");
}

// After a kernel launch: configuration errors show at once, faults at the next synchronization.
inline void checkLaunch(const char* kernel) {
    checkCuda(cudaGetLastError(), kernel);
}

// One allocation of device memory.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes, const char* what = "cudaMalloc") : bytes_(bytes) {
        checkCuda(cudaMalloc(&ptr_, bytes), what);
    }
    ~DeviceBuffer() { reset(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            ptr_ = o.ptr_, bytes_ = o.bytes_;
            o.ptr_ = nullptr, o.bytes_ = 0;
        }
        return *this;
    }
    void reset() {
        if (ptr_) (void)cudaFree(ptr_);
        ptr_ = nullptr, bytes_ = 0;
    }
    template <typename T = void>
    T* get() const {
        return static_cast<T*>(ptr_);
    }
    size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

class Event {
public:
    Event() { checkCuda(cudaEventCreate(&event_), "cudaEventCreate"); }
    ~Event() { (void)cudaEventDestroy(event_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return event_; }

private:
    cudaEvent_t event_ = nullptr;
};

class Stream {
public:
    Stream() { checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
    ~Stream() { (void)cudaStreamDestroy(stream_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return stream_; }

private:
    cudaStream_t stream_ = nullptr;
};

}  // namespace ts::kernels::detail
