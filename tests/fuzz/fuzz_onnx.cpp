// libFuzzer target: ONNX models through ts::importOnnx (the path loadModel takes for *.onnx), then
// ts::computeCosts of the graph it builds (with the operations the importer adds: views of folded
// parameters, split-off BatchNorms, batch expansions). Only ts::ModelError may come out; anything else
// propagates and libFuzzer reports it.
#include "fuzz_common.h"
#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = ts::fuzz::writeTempFile(data, size, ".onnx");
    try {
        ts::Graph g = ts::importOnnx(path, {});
        ts::computeCosts(g, 2, 16);
    } catch (const ts::ModelError&) {
    }
    return 0;
}
