#include "device_runtime.h"

#include <ATen/Parallel.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/CPUAllocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#include <torch/headeronly/version.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <unordered_map>
#include <regex>

#include "trainscope/core/errors.h"

namespace ts::torchexec {
namespace {

// Wraps LibTorch's CPU allocator to count the bytes of live CPU tensors (current and peak), so
// that CPU profiles measure memory as the CUDA caching allocator's counters do on a GPU. The data
// pointer is its own context (LibTorch's raw_allocate, used by oneDNN, requires that), so sizes and
// the inner allocations are kept in a table.
class CountingCpuAllocator final : public c10::Allocator {
public:
    explicit CountingCpuAllocator(c10::Allocator* inner) : inner_(inner) {}

    c10::DataPtr allocate(size_t bytes) override {
        c10::DataPtr inner = inner_->allocate(bytes);
        void* data = inner.get();
        if (!data) return inner;  // zero bytes: nothing to count
        {
            std::lock_guard<std::mutex> lock(mutex_);
            blocks_.emplace(data, Block{std::move(inner), bytes});
        }
        add(static_cast<int64_t>(bytes));
        return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &release; }
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        default_copy_data(dest, src, count);
    }

    int64_t current() const { return current_.load(); }
    int64_t peak() const { return peak_.load(); }
    void resetPeak() { peak_.store(current_.load()); }

    static CountingCpuAllocator* instance;

private:
    struct Block {
        c10::DataPtr inner;
        size_t bytes;
    };
    static void release(void* data) {
        CountingCpuAllocator* self = instance;
        c10::DataPtr inner;  // frees the memory through the inner allocator when it goes out of scope
        {
            std::lock_guard<std::mutex> lock(self->mutex_);
            auto it = self->blocks_.find(data);
            if (it == self->blocks_.end()) return;
            self->current_.fetch_sub(static_cast<int64_t>(it->second.bytes));
            inner = std::move(it->second.inner);
            self->blocks_.erase(it);
        }
    }
    void add(int64_t bytes) {
        int64_t now = current_.fetch_add(bytes) + bytes;
        int64_t p = peak_.load();
        while (now > p && !peak_.compare_exchange_weak(p, now)) {
        }
    }

    c10::Allocator* inner_;
    std::mutex mutex_;
    std::unordered_map<void*, Block> blocks_;
    std::atomic<int64_t> current_{0};
    std::atomic<int64_t> peak_{0};
};

CountingCpuAllocator* CountingCpuAllocator::instance = nullptr;

CountingCpuAllocator& countingAllocator() {
    // Installed once for the process, above LibTorch's default priority; never destroyed, since
    // tensors allocated through it may outlive any profile.
    static CountingCpuAllocator* instance = [] {
        auto* a = new CountingCpuAllocator(c10::GetCPUAllocator());
        CountingCpuAllocator::instance = a;
        c10::SetCPUAllocator(a, /*priority=*/100);
        return a;
    }();
    return *instance;
}

std::string cpuModelName() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    return "CPU";
}

std::string hostName() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
}

std::string versionText(int v) {  // CUDA's 13020 -> "13.2"
    return v <= 0 ? "" : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void describeSoftware(SoftwareVersions& s) { s.libtorch = TORCH_VERSION; }

class CpuRuntime final : public DeviceRuntime {
public:
    CpuRuntime() : alloc_(countingAllocator()) {}
    at::Device device() const override { return at::Device(at::kCPU); }
    bool isCuda() const override { return false; }
    std::string name() const override { return "cpu"; }
    void describe(ProfileEnvironment& env) const override {
        env.device = "cpu";
        env.deviceName = cpuModelName();
        env.cpuThreads = at::get_num_threads();
        env.host = hostName();
        describeSoftware(env.software);
    }
    void synchronize() override {}
    double timeMs(const std::function<void()>& work) override {
        auto t0 = std::chrono::steady_clock::now();
        work();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    MemoryCounters memory() const override {
        MemoryCounters m;
        m.allocated = m.reserved = alloc_.current();
        m.peakAllocated = m.peakReserved = alloc_.peak();
        return m;
    }
    void resetPeak() override { alloc_.resetPeak(); }
    void releaseCachedMemory() override {}
    int64_t memoryOutsideAllocator() const override { return 0; }

private:
    CountingCpuAllocator& alloc_;
};

class CudaRuntime final : public DeviceRuntime {
public:
    explicit CudaRuntime(int index) : index_(static_cast<c10::DeviceIndex>(index)) {
        c10::cuda::set_device(index_);
        // Create the context now so that its memory is not counted as the model's.
        at::empty({1}, at::TensorOptions().device(device()));
        synchronize();
    }
    at::Device device() const override { return at::Device(at::kCUDA, index_); }
    bool isCuda() const override { return true; }
    std::string name() const override { return "cuda:" + std::to_string(index_); }
    void describe(ProfileEnvironment& env) const override {
        env.device = name();
        env.deviceName = at::cuda::getDeviceProperties(index_)->name;
        env.cpuThreads = at::get_num_threads();
        env.host = hostName();
        describeSoftware(env.software);
        int v = 0;
        if (cudaRuntimeGetVersion(&v) == cudaSuccess) env.software.cudaRuntime = versionText(v);
        if (cudaDriverGetVersion(&v) == cudaSuccess) env.software.driver = versionText(v);
        try {
            long cudnn = at::detail::getCUDAHooks().versionCuDNN();  // 91002 -> 9.10.2
            if (cudnn > 0)
                env.software.cudnn = std::to_string(cudnn / 10000) + "." + std::to_string((cudnn % 10000) / 100) +
                                     "." + std::to_string(cudnn % 100);
        } catch (const std::exception&) {
        }
    }
    void synchronize() override { c10::cuda::device_synchronize(); }
    double timeMs(const std::function<void()>& work) override {
        at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
        auto stream = at::cuda::getCurrentCUDAStream(index_);
        start.record(stream);
        work();
        stop.record(stream);
        stop.synchronize();
        return static_cast<double>(start.elapsed_time(stop));
    }
    MemoryCounters memory() const override {
        auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index_);
        const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
        MemoryCounters m;
        m.allocated = stats.allocated_bytes[agg].current;
        m.peakAllocated = stats.allocated_bytes[agg].peak;
        m.reserved = stats.reserved_bytes[agg].current;
        m.peakReserved = stats.reserved_bytes[agg].peak;
        return m;
    }
    void resetPeak() override { c10::cuda::CUDACachingAllocator::resetPeakStats(index_); }
    void releaseCachedMemory() override {
        synchronize();
        c10::cuda::CUDACachingAllocator::emptyCache();
    }
    int64_t memoryOutsideAllocator() const override {
        size_t freeBytes = 0, total = 0;
        if (cudaMemGetInfo(&freeBytes, &total) != cudaSuccess) return 0;
        int64_t used = static_cast<int64_t>(total - freeBytes);
        return std::max<int64_t>(0, used - memory().reserved);
    }

private:
    c10::DeviceIndex index_;
};

}  // namespace

std::unique_ptr<DeviceRuntime> DeviceRuntime::open(const std::string& spec) {
    if (spec == "cpu") return std::make_unique<CpuRuntime>();
    static const std::regex cudaSpec(R"(cuda(:(\d{1,3}))?)");
    std::smatch m;
    if (!std::regex_match(spec, m, cudaSpec))
        throw DeviceError("unknown device '" + spec + "' (expected cpu, cuda or cuda:N)");
    int index = m[2].matched ? std::stoi(m[2].str()) : 0;
    if (!at::detail::getCUDAHooks().hasCUDA()) {
        int count = 0;
        cudaError_t err = cudaGetDeviceCount(&count);
        std::string why = err == cudaSuccess ? "no CUDA device is visible" : cudaGetErrorString(err);
        throw DeviceError(spec + " cannot be used: " + why + " (profile with --device cpu instead)");
    }
    int count = static_cast<int>(at::cuda::device_count());
    if (index >= count)
        throw DeviceError(spec + " does not exist: this machine has " + std::to_string(count) + " CUDA device" +
                          (count == 1 ? "" : "s"));
    try {
        return std::make_unique<CudaRuntime>(index);
    } catch (const c10::Error& e) {
        throw DeviceError(spec + " cannot be used: " + shortMessage(e));
    }
}

bool isOutOfMemory(const std::exception& e) {
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return true;
    if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
    std::string what = e.what();
    return what.find("out of memory") != std::string::npos || what.find("DefaultCPUAllocator: can't allocate") !=
                                                                   std::string::npos;
}

std::string shortMessage(const std::exception& e) {
    std::string msg;
    if (const auto* c = dynamic_cast<const c10::Error*>(&e)) msg = c->what_without_backtrace();
    else msg = e.what();
    msg = msg.substr(0, msg.find('\n'));
    return msg.size() > 400 ? msg.substr(0, 400) + "..." : msg;
}

}  // namespace ts::torchexec
