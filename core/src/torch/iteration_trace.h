#pragma once
// Internal (LibTorch): one training iteration traced for the timeline: host spans for zero_grad,
// each layer's forward, the loss, each layer's backward (from autograd hooks), and the optimizer
// step; with a kernel tracer, every GPU kernel on its stream's row, forward kernels attributed to
// their layer.
#include "device_runtime.h"
#include "graph_executor.h"
#include "profiling/kernel_tracer.h"
#include "training_step.h"

namespace ts::torchexec {

Timeline traceIteration(GraphExecutor& ex, const LossFunction& loss, TrainingStep& step, DeviceRuntime& rt,
                        TrainingPrecision precision, profiling::KernelTracer* tracer);

}  // namespace ts::torchexec
