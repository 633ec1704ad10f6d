#pragma once
// The small model the predictor tests share.
#include "trainscope/core/graph.h"
#include "trainscope/core/model_loader.h"

namespace predictor_test {

// x[N, 256] -> fc1 (Gemm) -> relu -> fc2 (Gemm): operations 0, 1, 2. Each Gemm saves its input,
// ReLU its output.
inline ts::Graph mlp() {
    return ts::importJsonModelText(R"({"trainscope_model": 1, "name": "mlp",
      "inputs": [{"name": "x", "shape": ["N", 256]}],
      "layers": [
        {"name": "fc1", "type": "Linear", "out_features": 512},
        {"name": "relu", "type": "ReLU"},
        {"name": "fc2", "type": "Linear", "out_features": 10}
      ]})",
                                   "mlp.json");
}

}  // namespace predictor_test
