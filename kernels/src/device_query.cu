#include <cuda_runtime.h>

#include "trainscope/kernels/device_query.h"

namespace ts::kernels {
int cudaDeviceCount(std::string* why) {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        if (why) *why = cudaGetErrorString(err);
        return 0;
    }
    if (n == 0 && why) *why = "no CUDA device";
    return n;
}
}  // namespace ts::kernels
