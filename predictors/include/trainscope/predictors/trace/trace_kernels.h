#pragma once
// One GPU activity of a PyTorch profiler trace moved to another GPU (issue 24, deliverable 3).
// The measured duration is split into a floor (the shortest kernels of the trace: launch and
// ramp, scaled by the clock) and a variable part that scales by the ratio of one model evaluated
// on both GPUs, so a kernel keeps whatever efficiency it had on its own GPU (Habitat's idea):
//   d_X = floor_X + (d_Y - floor_Y) * model_X / model_Y
// except for GEMM-class kernels whose work the shapes give: a library picks another kernel per GPU,
// so only the kernel-scaling table's share of their efficiency transfers (its class's alpha and
// max_ratio): d_X = floor_X + model_X * clip((d_Y - floor_Y) / model_Y)^alpha.
// model_G is the stream model's (operation_times.h) per-kernel form with the kernel's recorded
// launch: compute work in whole waves of its grid at the occupancy its block, registers and
// shared memory allow on G, at the rate of the arithmetic it runs in (from its name); memory
// work at G's achieved bandwidth, over the SMs its grid can fill; the larger of the two when the
// launching operator's recorded shapes give its FLOPs and bytes (GEMMs, attention), compute alone
// for GEMM-class kernels without shapes, memory alone for every other class. Copies to and from
// the host scale with the PCIe link, collectives with the link NCCL's ring uses (linkFor).
// Everything is documented with its evidence in docs/traces.md ("Predicting from a trace").
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"

namespace ts::predictors {

// The arithmetic a GEMM, convolution or attention kernel runs in, from its name (cuBLAS, cuDNN,
// CUTLASS and FlashAttention naming): "sgemm" is FP32 on CUDA cores, "s1688"/"tf32" TF32,
// "h884"/"f16"/"half" FP16, "bf16"/"bfloat16" BF16, "e4m3"/"e5m2" FP8. Nullopt for other kernels.
std::optional<ComputePrecision> kernelMathPrecision(const std::string& kernelName, KernelClass kind);

// What the moved job does with FP32 data: as recorded (each kernel keeps its arithmetic where the
// target has it; FP32 convolutions recorded on a GPU without TF32, which cannot show the job's
// choice, take PyTorch's default, TF32, where the target has it), or one of the training precisions' FP32 modes: fp32
// (PyTorch's default: TF32 convolutions on GPUs with TF32, FP32 matrix multiplies), tf32 (both TF32), fp32-strict
// (neither).
enum class Fp32Math { AsRecorded, PyTorchDefault, Tf32, Strict };

// FLOPs and DRAM bytes of one call of an operator from its recorded "Input Dims" and "Input type"
// (mm, addmm, bmm, baddbmm, matmul, linear, scaled-dot-product attention forward and backward);
// nullopt for other operators or shapes that do not parse.
struct OperatorWork {
    double flops = 0;
    double bytes = 0;
};
std::optional<OperatorWork> operatorWork(const std::string& op, const std::string& inputDims,
                                         const std::string& inputTypes);

struct TraceChange;
struct TraceChangeWork;
struct OperatorChange;

// What the moves need from the trace alone, whatever the target: each operator's work from its
// shapes, its kernels' measured time, and the kernel floor; and, where the job changes its batch
// size or precision, each operator's work at the new ones (trace_change.h). Built once per trace
// and change and shared by the movers of every target GPU (parsing the shapes is most of a
// mover's construction).
struct TraceWork {
    std::vector<std::optional<OperatorWork>> operators;  // per trace.operators index
    std::vector<double> operatorKernelUs;                // per operator: its kernels' measured time
    double floorUs = 0;                                  // the shortest kernels' duration: launch and ramp, not work
    std::shared_ptr<const TraceChangeWork> change;       // null: the job runs as recorded
};
TraceWork analyseTraceWork(const KinetoTrace& trace);
// The same with the job changed; throws ModelError(trace.source, ...) where it cannot be
// (analyseTraceChange). A change of the FP32 arithmetic alone leaves `change` null.
TraceWork analyseTraceWork(const KinetoTrace& trace, const TraceChange& change);

// Bytes a collective moves over each GPU's link (NCCL's bus bandwidth convention): all-reduce
// 2 (n-1)/n of its message, all-gather and reduce-scatter (n-1)/n, others the message; 0 when the
// trace records no message size.
double collectiveBusBytes(const TraceCollective& c, int groupSize);

// How a moved duration was obtained, from most to least informed.
enum class MoveBasis { Shapes, Launch, ClassOnly, Link, Kept };
const char* moveBasisName(MoveBasis b);  // "shapes", "launch", "class", "link", "kept"

struct KernelMove {
    double durationUs = 0;  // including addedUs
    MoveBasis basis = MoveBasis::Kept;
    std::optional<ComputePrecision> originMath, targetMath;  // GEMM-class kernels
    double addedUs = 0;    // autocast casts or the grad scaler's unscale run before it (a changed precision)
    bool removed = false;  // a cast or grad-scaler kernel the changed precision does not run
    bool changed = false;  // its work changed with the batch size or precision
};

class TraceKernelMover {
public:
    // `trace` must outlive the mover. Throws ModelError when a GPU lacks the figures the model
    // needs (SMs, bandwidth, FP32 peak).
    // `work`: analyseTraceWork(trace), shared between movers; built here when null.
    TraceKernelMover(const KinetoTrace& trace, const GpuSpec& origin, const GpuSpec& target, Fp32Math math,
                     std::shared_ptr<const TraceWork> work = nullptr, const StreamModel& model = StreamModel::shipped(),
                     const KernelScalingTable& table = KernelScalingTable::builtin());
    // `targetMath`: the arithmetic the target runs this kernel in, when known better than `math`
    // says (the comparison of two traces takes it from the target's own kernels).
    KernelMove move(const TraceKernel& k, std::optional<ComputePrecision> targetMath = std::nullopt) const;

    double originFloorUs() const { return floorY_; }
    double targetFloorUs() const { return floorX_; }
    // Why parts of the trace moved with less information (collectives' link assumption, FP32
    // kernels changing arithmetic, ...): one sentence each, each said once.
    std::vector<std::string> notes() const;

private:
    struct Side {
        const GpuSpec* gpu = nullptr;
        double memBytesPerUs = 0;  // achieved DRAM bandwidth of kernels in an iteration
        double hostLinkGBs = 0;    // PCIe, 0 unknown
        double sms = 1;
    };
    double computeRate(const Side& s, ComputePrecision p, bool conv) const;  // FLOP per us
    double ringBytesPerUs(const Side& s, int gpus) const;                    // NCCL ring bus, 0 unknown
    ComputePrecision targetMathFor(ComputePrecision origin, KernelClass kind) const;
    double blocksPerWave(const Side& s, const TraceKernel& k, bool& fits) const;
    KernelMove moveWork(const TraceKernel& k, const OperatorChange* op,
                        std::optional<ComputePrecision> targetMath) const;

    const KinetoTrace& trace_;
    Side y_, x_;
    Fp32Math math_;
    const StreamModel& model_;
    double sustainedFp32Y_ = 0, sustainedFp32X_ = 0;
    std::shared_ptr<const TraceWork> work_;
    double floorY_ = 0, floorX_ = 0;
    std::array<const ScalingParams*, size_t(KernelClass::Other) + 1> classParams_{};
    mutable std::map<int, double> ringY_, ringX_;  // by group size
    mutable std::vector<std::string> notes_;
    mutable bool notedLink_ = false, notedHost_ = false, notedUnsupported_ = false, notedFit_ = false;
};

}  // namespace ts::predictors
