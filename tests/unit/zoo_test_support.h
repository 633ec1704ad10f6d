#pragma once
// Helpers the zoo's test files share.
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace zoo_test {

// The ModelError loading `spec` gives; "" when it loads.
inline std::string errorOf(const std::string& spec) {
    try {
        ts::loadModel(spec);
    } catch (const ts::ModelError& e) {
        return e.what();
    }
    return "";
}

}  // namespace zoo_test
