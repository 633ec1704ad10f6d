#pragma once
// What the tensor- and expert-parallel tests share (test_tensor_parallel.cpp, test_expert_parallel.cpp): the
// built-in database's GPUs, the published Hugging Face configs, the message of a refusal and the scenario
// they predict.
#include <functional>
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/training_scenario.h"

namespace partest {

inline const ts::GpuSpec& gpu(const std::string& id) {
    return ts::GpuDatabase::builtin().get(id);
}

// tests/data/hf-configs/NAME.json
inline std::string config(const std::string& name) {
    return std::string(TRAINSCOPE_TEST_DATA_DIR) + "/hf-configs/" + name + ".json";
}

// The ModelError `f` throws, as its message; "" when it throws none.
inline std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const ts::ModelError& e) {
        return e.what();
    }
    return "";
}

// What the sharded LLM runs of these tests train: bf16 weights (fp32 master copy), AdamW, `batch`
// sequences on each of `gpus` GPUs.
inline ts::predictors::TrainingScenario bf16Scenario(int gpus, int64_t batch = 1) {
    ts::predictors::TrainingScenario s;
    s.batch = batch;
    s.precision = ts::predictors::TrainingPrecision::Bf16Params;
    s.optimizer = ts::predictors::Optimizer::AdamW;
    s.dataParallel.gpus = gpus;
    return s;
}

}  // namespace partest
