// TorchScript importer (LibTorch). Placeholder until the importer lands.
#include <torch/script.h>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace ts {
bool torchScriptSupported() { return true; }
Graph importTorchScript(const std::string& path, const std::map<std::string, std::string>&) {
    throw ModelError(path, "TorchScript import is not implemented yet");
}
}  // namespace ts
