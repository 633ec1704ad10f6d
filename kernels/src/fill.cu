// Test data for the benchmarks, written on the device (GEMM operands are up to 256 MiB each).
#include "benchmarks.h"

namespace ts::kernels::detail {
namespace {

__device__ uint32_t mix(uint32_t x) {  // a well-spread 32-bit hash (lowbias32)
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Bit patterns are built directly so no conversion intrinsics are needed on older GPUs:
// exponents are chosen for magnitudes in [0.25, 1) and the NaN encodings never occur.
__global__ void fillKernel(uint8_t* data, size_t count, int kind, uint32_t seed) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const uint32_t h = mix(static_cast<uint32_t>(i) ^ mix(static_cast<uint32_t>(i >> 32) + seed));
        const uint32_t sign = h >> 31, bit = (h >> 30) & 1;
        switch (kind) {
            case 0:  // float32: sign, exponent 125..126, 23 random mantissa bits
                reinterpret_cast<uint32_t*>(data)[i] = (sign << 31) | ((125 + bit) << 23) | (h & 0x7fffff);
                break;
            case 1:  // float16: exponent 13..14 (bias 15)
                reinterpret_cast<uint16_t*>(data)[i] =
                    static_cast<uint16_t>((sign << 15) | ((13 + bit) << 10) | (h & 0x3ff));
                break;
            case 2:  // bfloat16: exponent 125..126 (bias 127)
                reinterpret_cast<uint16_t*>(data)[i] =
                    static_cast<uint16_t>((sign << 15) | ((125 + bit) << 7) | (h & 0x7f));
                break;
            default:  // fp8 e4m3: exponent 5..6 (bias 7); S.1111.111 (NaN) cannot occur
                data[i] = static_cast<uint8_t>((sign << 7) | ((5 + bit) << 3) | (h & 0x7));
                break;
        }
    }
}

}  // namespace

void fillRandom(void* data, size_t count, ElementKind kind, uint32_t seed, cudaStream_t stream) {
    if (count == 0) return;
    constexpr int kThreads = 256;
    const size_t needed = (count + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(needed < 65536 ? needed : 65536);
    fillKernel<<<blocks, kThreads, 0, stream>>>(static_cast<uint8_t*>(data), count, static_cast<int>(kind), seed);
    checkLaunch("fill kernel launch");
}

}  // namespace ts::kernels::detail
