// libFuzzer target: TorchScript archives through ts::importTorchScript (LibTorch's zip and
// pickle readers, then our graph conversion). Only ts::ModelError may come out. LibTorch itself
// is not instrumented, so ASan sees our code and what LibTorch hands back, not its insides.
#include "fuzz_common.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = ts::fuzz::writeTempFile(data, size, ".pt");
    try {
        ts::Graph g = ts::importTorchScript(path, {{"input", "3x32x32"}});
    } catch (const ts::ModelError&) {
    }
    return 0;
}
