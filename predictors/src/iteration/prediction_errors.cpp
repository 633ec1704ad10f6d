#include "trainscope/predictors/iteration/prediction_errors.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace ts::predictors {
extern const char* const kBuiltinIterationErrorsJson;
}

namespace ts::predictors::errors {
namespace {

// `trainscope-cli validate-kernels --json` on the whole public data set (204,009 latencies of
// P100, P4, V100, T4, A100; FP32 forward): "model_only.classes" and "classes" mean_ape / 100.
const std::map<std::string, double> kModelOnly = {{"linear", 0.217},  {"bmm", 0.294}, {"conv", 0.398}, {"ln", 0.148},
                                                  {"softmax", 0.151}, {"add", 0.137}, {"mul", 0.139},  {"gelu", 0.088},
                                                  {"relu", 0.148},    {"tanh", 0.137}};
const std::map<std::string, double> kCross = {{"linear", 0.231},  {"bmm", 0.220}, {"conv", 0.184}, {"ln", 0.139},
                                              {"softmax", 0.154}, {"add", 0.130}, {"mul", 0.133},  {"gelu", 0.091},
                                              {"relu", 0.150},    {"tanh", 0.137}};

double lookup(const std::map<std::string, double>& m, const std::string& c, double otherwise) {
    auto it = m.find(c);
    return it == m.end() ? otherwise : it->second;
}

}  // namespace

double modelOnlyClassError(const std::string& opClass) {
    return lookup(kModelOnly, opClass, 0.248);
}
double crossClassError(const std::string& opClass) {
    return lookup(kCross, opClass, 0.192);
}
namespace {
const nlohmann::json& iterationErrors() {
    static const nlohmann::json table = nlohmann::json::parse(kBuiltinIterationErrorsJson);
    return table;
}
bool listed(const nlohmann::json& list, const std::string& s) {
    for (const nlohmann::json& x : list)
        if (x.is_string() && x.get<std::string>() == s) return true;
    return false;
}
}  // namespace

double wholeIterationError(const std::string& precision) {
    const nlohmann::json by = iterationErrors().value("by_precision", nlohmann::json::object());
    if (by.contains(precision)) return by.at(precision).get<double>();
    return iterationErrors().value("all", 0.0);
}

double extrapolationError(const std::string& gpuId, const std::string& architecture) {
    const nlohmann::json& table = iterationErrors();
    if (listed(table.value("fitted_gpus", nlohmann::json::array()), gpuId)) return 0;
    const nlohmann::json outside = table.value("out_of_sample", nlohmann::json::object());
    const bool seen = listed(outside.value("fitted_architectures", nlohmann::json::array()), architecture);
    return outside.value(seen ? "gpu_outside_fit" : "architecture_outside_fit", 0.0);
}

double combine(double a, double b) {
    return std::sqrt(a * a + b * b);
}

}  // namespace ts::predictors::errors
