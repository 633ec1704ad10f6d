// Tensor-core peak per precision: square GEMMs through cuBLASLt with FP32 accumulation, the
// algorithm cuBLASLt's heuristic ranks first (falling back to the next ones if it fails to run).
#include <cublasLt.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "benchmarks.h"

namespace ts::kernels::detail {
namespace {

struct Precision {
    const char* name;   // measurement name
    const char* label;  // for messages
    cudaDataType_t ab;  // A and B element type
    cudaDataType_t cd;  // C and D element type
    cublasComputeType_t compute;
    size_t abBytes, cdBytes;
    int minMajor, minMinor;  // first compute capability with these tensor cores
    ElementKind fill;
    const char* types;
};

Precision describe(ts::ComputePrecision p) {
    switch (p) {
        case ts::ComputePrecision::Tf32:
            return {"tensor_tf32",
                    "TF32",
                    CUDA_R_32F,
                    CUDA_R_32F,
                    CUBLAS_COMPUTE_32F_FAST_TF32,
                    4,
                    4,
                    8,
                    0,
                    ElementKind::F32,
                    "A/B/C/D fp32, TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32)"};
        case ts::ComputePrecision::Fp16:
            return {"tensor_fp16",
                    "FP16",
                    CUDA_R_16F,
                    CUDA_R_16F,
                    CUBLAS_COMPUTE_32F,
                    2,
                    2,
                    7,
                    0,
                    ElementKind::F16,
                    "A/B/C/D fp16, FP32 accumulate"};
        case ts::ComputePrecision::Bf16:
            return {"tensor_bf16",
                    "BF16",
                    CUDA_R_16BF,
                    CUDA_R_16BF,
                    CUBLAS_COMPUTE_32F,
                    2,
                    2,
                    8,
                    0,
                    ElementKind::BF16,
                    "A/B/C/D bf16, FP32 accumulate"};
        case ts::ComputePrecision::Fp32:  // not a tensor-core precision: measureFp32Peak measures it
            throw std::invalid_argument("measureTensorPeak: fp32 runs on CUDA cores (measureFp32Peak)");
        case ts::ComputePrecision::Fp8:
            return {"tensor_fp8",
                    "FP8",
                    CUDA_R_8F_E4M3,
                    CUDA_R_16BF,
                    CUBLAS_COMPUTE_32F,
                    1,
                    2,
                    8,
                    9,
                    ElementKind::E4M3,
                    "A/B fp8 e4m3 with unit scale pointers, C/D bf16, FP32 accumulate with fast accumulation"};
    }
    throw std::invalid_argument("measureTensorPeak: unknown precision");
}

// cuBLASLt descriptors, destroyed on every path.
template <typename T, cublasStatus_t (*Destroy)(T)>
struct LtDeleter {
    void operator()(T p) const { (void)Destroy(p); }
};
template <typename T, cublasStatus_t (*Destroy)(T)>
using LtPtr = std::unique_ptr<std::remove_pointer_t<T>, LtDeleter<T, Destroy>>;
using Handle = LtPtr<cublasLtHandle_t, cublasLtDestroy>;
using MatmulDesc = LtPtr<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using Layout = LtPtr<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference = LtPtr<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

Layout makeLayout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {
    cublasLtMatrixLayout_t layout = nullptr;
    checkCublas(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld), "cublasLtMatrixLayoutCreate");
    return Layout(layout);
}

template <typename T>
void setDesc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
    checkCublas(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value), "cublasLtMatmulDescSetAttribute");
}

// "algo 21 tile 18 stages 22 split-K 1": the configuration ids cuBLASLt chose.
std::string describeAlgo(const cublasLtMatmulAlgo_t& algo) {
    int32_t id = -1, splitK = 1;
    uint32_t tile = 0, stages = 0;
    size_t written = 0;
    (void)cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
    (void)cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &written);
    (void)cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &written);
    (void)cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitK, sizeof splitK,
                                               &written);
    return "cuBLASLt algo " + std::to_string(id) + " tile " + std::to_string(tile) + " stages " +
           std::to_string(stages) + " split-K " + std::to_string(splitK);
}

constexpr size_t kWorkspaceBytes = size_t(64) << 20;

}  // namespace

ts::Measurement measureTensorPeak(const BenchContext& ctx, ts::ComputePrecision which) {
    const Precision p = describe(which);
    const ts::DeviceProperties& dev = ctx.device;
    if (dev.ccMajor * 10 + dev.ccMinor < p.minMajor * 10 + p.minMinor)
        throw ts::DeviceError("unsupported on compute capability " + std::to_string(dev.ccMajor) + "." +
                              std::to_string(dev.ccMinor) + " (" + p.label + " tensor cores need " +
                              std::to_string(p.minMajor) + "." + std::to_string(p.minMinor) + " or newer)");

    // The largest square size (8192, or 4096 quick) whose operands fit in 80% of free memory.
    size_t freeBytes = 0, totalBytes = 0;
    checkCuda(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
    uint64_t n = ctx.quick ? 4096 : 8192;
    auto bytesFor = [&](uint64_t s) { return s * s * (2 * p.abBytes + p.cdBytes) + kWorkspaceBytes; };
    while (n > 1024 && bytesFor(n) > 0.8 * freeBytes) n /= 2;
    if (bytesFor(n) > 0.8 * freeBytes)
        throw ts::DeviceError("only " + std::to_string(freeBytes >> 20) +
                              " MiB of GPU memory is free, too little for a " + std::to_string(n) + "^3 " + p.label +
                              " GEMM");

    DeviceBuffer a(n * n * p.abBytes, "cudaMalloc (GEMM operand A)");
    DeviceBuffer b(n * n * p.abBytes, "cudaMalloc (GEMM operand B)");
    DeviceBuffer d(n * n * p.cdBytes, "cudaMalloc (GEMM result)");
    DeviceBuffer workspace(kWorkspaceBytes, "cudaMalloc (cuBLASLt workspace)");
    DeviceBuffer scales(2 * sizeof(float), "cudaMalloc");
    fillRandom(a.get(), n * n, p.fill, 11, ctx.stream);
    fillRandom(b.get(), n * n, p.fill, 12, ctx.stream);
    const float ones[2] = {1.0f, 1.0f};
    checkCuda(cudaMemcpyAsync(scales.get(), ones, sizeof ones, cudaMemcpyHostToDevice, ctx.stream), "cudaMemcpyAsync");
    checkCuda(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");

    cublasLtHandle_t rawHandle = nullptr;
    checkCublas(cublasLtCreate(&rawHandle), "cublasLtCreate");
    Handle handle(rawHandle);
    cublasLtMatmulDesc_t rawDesc = nullptr;
    checkCublas(cublasLtMatmulDescCreate(&rawDesc, p.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    MatmulDesc desc(rawDesc);
    // "TN" (A transposed, B not): the layout cuBLASLt requires for FP8, used for every precision.
    setDesc(desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
    setDesc(desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
    if (which == ts::ComputePrecision::Fp8) {
        const float* scaleA = scales.get<float>();
        const float* scaleB = scaleA + 1;
        setDesc(desc.get(), CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, scaleA);
        setDesc(desc.get(), CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, scaleB);
        // Fast accumulation skips cuBLASLt's periodic promotion of partial sums on the CUDA cores:
        // what the tensor cores deliver, the figure datasheets quote (and forward passes use).
        setDesc(desc.get(), CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t{1});
    }
    // Column-major: op(A) = A^T is n x n from a stored k x m matrix, B is k x n, D is m x n.
    const Layout la = makeLayout(p.ab, n, n, n), lb = makeLayout(p.ab, n, n, n), ld = makeLayout(p.cd, n, n, n);

    cublasLtMatmulPreference_t rawPref = nullptr;
    checkCublas(cublasLtMatmulPreferenceCreate(&rawPref), "cublasLtMatmulPreferenceCreate");
    Preference pref(rawPref);
    const uint64_t maxWorkspace = kWorkspaceBytes;
    checkCublas(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &maxWorkspace, sizeof maxWorkspace),
                "cublasLtMatmulPreferenceSetAttribute");

    const std::string shape = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n) + " GEMM";
    cublasLtMatmulHeuristicResult_t results[8] = {};
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(handle.get(), desc.get(), la.get(), lb.get(), ld.get(),
                                                             ld.get(), pref.get(), 8, results, &found);
    if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0))
        throw ts::DeviceError("cuBLASLt has no algorithm for a " + shape + " with " + p.types);
    checkCublas(hs, "cublasLtMatmulAlgoGetHeuristic");

    const float alpha = 1.0f, beta = 0.0f;
    const cublasLtMatmulAlgo_t* algo = nullptr;
    auto gemm = [&] {
        checkCublas(
            cublasLtMatmul(handle.get(), desc.get(), &alpha, a.get(), la.get(), b.get(), lb.get(), &beta, d.get(),
                           ld.get(), d.get(), ld.get(), algo, workspace.get(), kWorkspaceBytes, ctx.stream),
            "cublasLtMatmul");
    };
    // The first algorithm that runs; an exception from the last candidate says why none did.
    for (int i = 0; i < found && !algo; ++i) {
        if (results[i].state != CUBLAS_STATUS_SUCCESS || results[i].workspaceSize > kWorkspaceBytes) continue;
        algo = &results[i].algo;
        try {
            gemm();
            checkCuda(cudaStreamSynchronize(ctx.stream), "cublasLtMatmul");
        } catch (const ts::DeviceError&) {
            algo = nullptr;
            if (i == found - 1) throw;
        }
    }
    if (!algo) throw ts::DeviceError("none of the algorithms cuBLASLt proposed for a " + shape + " could run");

    EventTimer timer;
    const int calls = callsPerRun(timer.time(ctx.stream, gemm), ctx.repeat.runMs);
    const Stats stats = repeatUntilStable(
        [&] {
            return timer.time(ctx.stream, [&] {
                for (int c = 0; c < calls; ++c) gemm();
            });
        },
        ctx.repeat, ctx.cancelled);
    const double flops = 2.0 * static_cast<double>(n) * n * n * calls;
    return measured(p.name, "TFLOP/s", flops / (stats.median * 1e-3) / 1e12, stats,
                    shape + " (TN), " + p.types + ", " + describeAlgo(*algo) + ", workspace up to " +
                        std::to_string(kWorkspaceBytes >> 20) + " MiB, " + std::to_string(calls) +
                        " GEMMs per timed run");
}

}  // namespace ts::kernels::detail
