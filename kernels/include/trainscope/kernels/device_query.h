#pragma once
#include <string>
namespace ts::kernels {
// Number of CUDA devices visible to this process; 0 with the reason in *why when none.
int cudaDeviceCount(std::string* why);
}  // namespace ts::kernels
