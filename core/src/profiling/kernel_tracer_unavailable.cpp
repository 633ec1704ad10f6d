// KernelTracer in builds without CUPTI (no LibTorch, or no CUPTI headers and library found):
// it never starts and says why; the profile completes from CUDA events alone.
#include "profiling/kernel_tracer.h"

namespace ts::profiling {

struct KernelTracer::State {
    std::string reason = "this build of TrainScope has no CUPTI, so kernels are not recorded";
};

KernelTracer::KernelTracer() : state_(std::make_unique<State>()) {}
KernelTracer::~KernelTracer() = default;

bool KernelTracer::start() {
    return false;
}
bool KernelTracer::active() const {
    return false;
}
const std::string& KernelTracer::reason() const {
    return state_->reason;
}
void KernelTracer::push(uint64_t) {}
void KernelTracer::pop() {}
std::vector<KernelActivity> KernelTracer::collect() {
    return {};
}
uint64_t KernelTracer::timestampNs() const {
    return 0;
}
std::string KernelTracer::cuptiVersion() const {
    return "";
}

}  // namespace ts::profiling
