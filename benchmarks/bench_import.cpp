// Import and cost benchmark: prints the median wall time of importing each model and of
// computing its costs at batch 32. Targets (issue 2): ResNet-50 ONNX import under 300 ms.
//
//   bench_import [MODEL...]      default: the zoo's resnet50 and its largest models
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace {

template <typename F>
double medianMs(int reps, F&& f) {
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> models(argv + 1, argv + argc);
    if (models.empty()) models = {"zoo:resnet50", "zoo:bert_large", "zoo:gpt2_large", "zoo:transformer", "zoo:gnmt"};
    std::printf("%-60s %6s %8s %12s %12s\n", "model", "ops", "params", "import ms", "costs ms");
    for (const std::string& spec : models) {
        try {
            ts::Graph g = ts::loadModel(spec);
            double importMs = medianMs(5, [&] { ts::loadModel(spec); });
            double costMs = medianMs(5, [&] { ts::computeCosts(g, 32, 0); });
            std::printf("%-60s %6zu %7.1fM %12.2f %12.2f\n", spec.c_str(), g.ops.size(),
                        double(g.parameterCount()) / 1e6, importMs, costMs);
        } catch (const std::exception& e) {
            std::printf("%-60s failed: %s\n", spec.c_str(), e.what());
        }
    }
    return 0;
}
