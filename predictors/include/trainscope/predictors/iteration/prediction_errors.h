#pragma once
// Where the intervals come from: the predictors' own validation error on each kind of prediction,
// as relative errors e (an interval is [v / (1 + e), v (1 + e)]). Each constant says whether it
// was measured (and on what) or is an assumption waiting for ground truth; docs/prediction.md
// has the table. Independent sources combine in quadrature.
#include <string>

namespace ts::predictors::errors {

// Mean absolute percentage error of one operator's latency, leave-one-GPU-out on the public
// five-GPU measurements (`trainscope-cli validate-kernels`, full data, 2026-11-21 table):
// predicted from the model alone, and from another GPU's measurement (cross path).
double modelOnlyClassError(const std::string& opClass);  // unknown class: the overall 0.248
double crossClassError(const std::string& opClass);      // unknown class: the overall 0.192

// The plain roofline ratio's mean APE on the same data (docs/kernel-scaling.md): what an operator
// the scaling table has no class for is expected to miss by.
inline constexpr double kUncalibratedRoofline = 0.601;

// Assumptions, not yet validated (no GPU ground truth exists; docs/prediction.md).
inline constexpr double kBackwardPass = 0.20;                     // backward modelled from the forward class models
inline constexpr double kTensorCorePrecision = 0.25;              // compute-bound work moved to a tensor-core rate
inline constexpr double kNarrowerElements = 0.10;                 // bandwidth-bound work at 16-bit elements
inline constexpr double kOptimizerStep = 0.25;                    // foreach optimizer kernels as DRAM traffic
inline constexpr double kCommunication = 0.30;                    // NCCL ring all-reduce at an assumed efficiency
inline constexpr double kSlowestGpuWait = 0.50;                   // one step-time spread for every pipeline
inline constexpr double kHostDispatch = 0.30;                     // the GPU waiting for eager PyTorch's dispatch
inline constexpr double kActivationBytes = 0.10;                  // autograd's saved tensors from analytic costs
inline constexpr double kWorkspace = 0.50;                        // cuBLAS workspaces + one layer's transients
inline constexpr double kCudaContext = 0.50;                      // context and library kernels by architecture
inline constexpr double kProfileInterpolation = 0.05;             // between two measured batch sizes
inline constexpr double kProfileExtrapolationPerDoubling = 0.05;  // beyond them, per factor of 2
inline constexpr double kProfilePrecision = 0.10;                 // a measured layer moved to another precision
inline constexpr double kProfileOther = 0.25;                     // the measured iteration outside the layers, moved

// Measured: the whole iteration predicted without a profile, at a precision (fp32, tf32, amp-fp16,
// ...): the relative error whose interval held 80% of the published training-throughput rows
// predicted leave-one-model-out (resources/iteration-errors.json, written by validate-published
// --fit --write-errors). 0 where the table has nothing.
double wholeIterationError(const std::string& precision);

// Measured: the same for a GPU outside that fit (resources/iteration-errors.json's "out_of_sample", written by
// validate-published --write-out-of-sample-errors from Lambda's published benchmarks, which nothing is fitted
// on): 0 for a GPU the fit had rows of, else the error of a GPU of an architecture the fit saw or did not.
double extrapolationError(const std::string& gpuId, const std::string& architecture);

// A measured median's spread: two coefficients of variation.
inline double measuredSpread(double cv) {
    return 2 * cv;
}

// sqrt(a^2 + b^2).
double combine(double a, double b);

}  // namespace ts::predictors::errors
