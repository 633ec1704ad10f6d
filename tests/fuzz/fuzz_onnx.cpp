// libFuzzer target: ONNX models through ts::importOnnx (the path loadModel takes for *.onnx).
// Only ts::ModelError may come out; anything else propagates and libFuzzer reports it.
#include "fuzz_common.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = ts::fuzz::writeTempFile(data, size, ".onnx");
    try {
        ts::Graph g = ts::importOnnx(path, {});
    } catch (const ts::ModelError&) {
    }
    return 0;
}
