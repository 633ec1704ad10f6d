// Built when LibTorch was not found: TorchScript files get a clear error.
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace ts {
bool torchScriptSupported() { return false; }
Graph importTorchScript(const std::string& path, const std::map<std::string, std::string>&) {
    throw ModelError(path, "this build of TrainScope has no LibTorch, so it cannot read TorchScript files "
                           "(re-run the set-up, which installs PyTorch's LibTorch)");
}
}  // namespace ts
