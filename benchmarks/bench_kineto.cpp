// Kineto trace benchmark: writes a synthetic PyTorch profiler trace of the size asked (steps of
// operators, runtime launches, flows and kernels with every argument Kineto records), then reads
// it with ts::readKinetoTrace and summarises it, printing the wall time and the peak resident
// memory the read added, and the time to predict it on one GPU and on every GPU of the database.
// Targets (issue 24): 100 MB in under 5 s; 1 GB in bounded memory.
//
//   bench_kineto [MB...] [--gzip] [--keep DIR]      default: 100 MB, plain JSON, in $TMPDIR
#include <sys/resource.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <string>
#include <vector>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/trace_summary.h"
#include "trainscope/predictors/trace/trace_prediction.h"

namespace {

// Peak resident set of this process so far, in MiB (VmHWM).
double peakRssMiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024;
    return 0;
}

// Writes through stdio or zlib's gzip writer; the trace is never held in memory.
class Out {
public:
    Out(const std::string& path, bool gzip) : gz_(gzip) {
        if (gz_)
            g_ = gzopen(path.c_str(), "wb1");
        else
            f_ = std::fopen(path.c_str(), "wb");
        if (!f_ && !g_) throw std::runtime_error("cannot write " + path);
    }
    ~Out() {
        if (g_) gzclose(g_);
        if (f_) std::fclose(f_);
    }
    void put(const char* s, size_t n) {
        if (gz_)
            gzwrite(g_, s, unsigned(n));
        else
            std::fwrite(s, 1, n, f_);
        bytes_ += double(n);
    }
    double bytes() const { return bytes_; }

private:
    bool gz_;
    FILE* f_ = nullptr;
    gzFile g_ = nullptr;
    double bytes_ = 0;
};

void writeTrace(const std::string& path, double megabytes, bool gzip, int64_t& kernels) {
    Out out(path, gzip);
    char buf[4096];
    auto emit = [&](int n) { out.put(buf, size_t(n)); };
    emit(std::snprintf(
        buf, sizeof buf,
        "{\n \"schemaVersion\": 1,\n \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", "
        "\"totalGlobalMem\": 85031714816, \"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": 108}],\n"
        " \"traceEvents\": [\n"));
    const char* names[] = {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align4>(Params)",
                           "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)",
                           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(ReduceOp)",
                           "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"};
    double ts = 1.7e12;
    int64_t correlation = 1, step = 1;
    const double limit = megabytes * 1e6;
    while (out.bytes() < limit) {
        const double stepStart = ts;
        emit(std::snprintf(
            buf, sizeof buf,
            "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%lld\", \"pid\": 1, "
            "\"tid\": 1, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"External id\": %lld}},\n",
            static_cast<long long>(step), stepStart, 2000 * 60.0, static_cast<long long>(correlation)));
        for (int i = 0; i < 2000 && out.bytes() < limit; ++i, ts += 60) {
            const int k = i % 4;
            emit(std::snprintf(
                buf, sizeof buf,
                "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 1, \"tid\": 1, \"ts\": "
                "%.3f, "
                "\"dur\": 40.5, \"args\": {\"External id\": %lld, \"Input Dims\": [[64, 1024], [4096, 1024], [4096]], "
                "\"Input type\": [\"float\", \"float\", \"float\"], \"Sequence number\": %d, \"Fwd thread id\": 0}},\n"
                "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, \"tid\": 1, \"ts\": "
                "%.3f, "
                "\"dur\": 30.25, \"args\": {\"External id\": %lld, \"Input Dims\": [[4096], [64, 1024], [1024, 4096], "
                "[], []], "
                "\"Input type\": [\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]}},\n"
                "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, "
                "\"ts\": %.3f, \"dur\": 6.125, \"args\": {\"External id\": %lld, \"cbid\": 211, \"correlation\": "
                "%lld}},\n"
                "  {\"ph\": \"s\", \"id\": %lld, \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"cat\": \"ac2g\", \"name\": "
                "\"ac2g\"},\n"
                "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, \"ts\": %.3f, "
                "\"dur\": 35.5, "
                "\"args\": {\"External id\": %lld, \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": %d, "
                "\"correlation\": %lld, \"registers per thread\": 232, \"shared memory\": 98304, \"blocks per SM\": "
                "1.185185, "
                "\"warps per SM\": 9.481481, \"grid\": [128, 2, 1], \"block\": [256, 1, 1], "
                "\"est. achieved occupancy %%\": 13}},\n"
                "  {\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": 7, \"ts\": %.3f, \"cat\": \"ac2g\", \"name\": "
                "\"ac2g\", "
                "\"bp\": \"e\"},\n",
                ts, static_cast<long long>(correlation), i, ts + 2, static_cast<long long>(correlation), ts + 10,
                static_cast<long long>(correlation), static_cast<long long>(correlation),
                static_cast<long long>(correlation), ts + 10, names[k], k == 3 ? 20 : 7, ts + 20,
                static_cast<long long>(correlation), k == 3 ? 20 : 7, static_cast<long long>(correlation),
                static_cast<long long>(correlation), ts + 20));
            ++correlation;
            ++kernels;
        }
        ts = stepStart + 2000 * 60.0;
        ++step;
    }
    emit(std::snprintf(buf, sizeof buf,
                       "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 1, \"tid\": 0, \"args\": "
                       "{\"name\": \"python\"}}\n ]\n}\n"));
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<double> sizes;
    bool gzip = false;
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--gzip") == 0)
            gzip = true;
        else if (std::strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
            dir = argv[++i];
        else
            sizes.push_back(std::atof(argv[i]));
    }
    if (sizes.empty()) sizes = {100};
    const bool keep = !dir.empty();
    if (!keep) {
        const char* tmp = std::getenv("TMPDIR");
        dir = tmp && *tmp ? tmp : "/tmp";
    }
    std::printf("%10s %10s %10s %10s %10s %12s %12s %10s %14s %12s\n", "JSON MB", "file MB", "kernels", "read s",
                "summary s", "base RSS MiB", "peak RSS MiB", "added MiB", "predict 1 GPU s", "all GPUs s");
    for (double mb : sizes) {
        const std::string path =
            dir + "/trainscope-bench-kineto-" + std::to_string(int(mb)) + (gzip ? ".json.gz" : ".json");
        int64_t kernels = 0;
        writeTrace(path, mb, gzip, kernels);
        const double fileMb = double(std::filesystem::file_size(path)) / 1e6;
        {  // reset the peak (VmHWM) to the current resident set, so each size's peak is its own
            std::ofstream("/proc/self/clear_refs") << "5";
        }
        const double base = peakRssMiB();
        try {
            const auto t0 = std::chrono::steady_clock::now();
            const ts::KinetoTrace trace = ts::readKinetoTrace(path);
            const auto t1 = std::chrono::steady_clock::now();
            const ts::TraceSummary summary = ts::summarizeTrace(trace, ts::GpuDatabase::builtin());
            const auto t2 = std::chrono::steady_clock::now();
            const double peak = peakRssMiB();
            // The trace predicted on an H100 from its A100, then on every GPU of the database
            // (the work of its operators' shapes analysed once, as `predict TRACE` does).
            const ts::GpuDatabase& db = ts::GpuDatabase::builtin();
            const ts::GpuSpec* origin = ts::matchTraceGpu(trace, db);
            double oneS = -1, allS = -1;
            if (origin) {
                (void)ts::predictors::predictTrace(trace, *origin, db.get("h100-sxm"));
                const auto t3 = std::chrono::steady_clock::now();
                const auto work = std::make_shared<const ts::predictors::TraceWork>(ts::predictors::analyseTraceWork(trace));
                for (const ts::GpuSpec& g : db.gpus()) {
                    try {
                        (void)ts::predictors::predictTrace(trace, *origin, g, {}, work);
                    } catch (const ts::ModelError&) {
                    }
                }
                const auto t4 = std::chrono::steady_clock::now();
                oneS = std::chrono::duration<double>(t3 - t2).count();
                allS = std::chrono::duration<double>(t4 - t3).count();
            }
            std::printf("%10.0f %10.1f %10lld %10.2f %10.2f %12.0f %12.0f %10.0f %14.2f %12.2f\n", mb, fileMb,
                        static_cast<long long>(trace.kernels.size()), std::chrono::duration<double>(t1 - t0).count(),
                        std::chrono::duration<double>(t2 - t1).count(), base, peak, peak - base, oneS, allS);
            if (int64_t(trace.kernels.size()) != kernels || summary.steps.empty())
                std::printf("  unexpected: %lld kernels written, %zu read\n", static_cast<long long>(kernels),
                            trace.kernels.size());
        } catch (const ts::ModelError& e) {
            std::printf("%10.0f refused: %s\n", mb, e.what());
        }
        if (!keep) std::filesystem::remove(path);
        std::fflush(stdout);
    }
    return 0;
}
