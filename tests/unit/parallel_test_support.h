#pragma once
// What the tensor- and expert-parallel tests share (test_tensor_parallel.cpp, test_expert_parallel.cpp): the
// built-in database's GPUs, the published Hugging Face configs and the message of a refusal.
#include <functional>
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"

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

}  // namespace partest
