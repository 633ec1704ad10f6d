// Built when LibTorch was not found: profiling and execution say so.
#include "trainscope/core/profiler.h"

namespace ts {
namespace {
[[noreturn]] void noTorch() {
    throw ExecutionError("this build of TrainScope has no LibTorch, so it cannot execute or profile models "
                         "(re-run the set-up, which installs PyTorch's LibTorch)");
}
}  // namespace
bool executionSupported() { return false; }
ProfileResult profileModel(const Graph&, const ProfileOptions&) { noTorch(); }
std::vector<HostTensor> runForward(const Graph&, const std::map<std::string, HostTensor>&, int64_t, int64_t) {
    noTorch();
}
}  // namespace ts
