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
double wholeIterationError(const std::string& precision) {
    static const nlohmann::json table = nlohmann::json::parse(kBuiltinIterationErrorsJson);
    const nlohmann::json by = table.value("by_precision", nlohmann::json::object());
    if (by.contains(precision)) return by.at(precision).get<double>();
    return table.value("all", 0.0);
}

double combine(double a, double b) {
    return std::sqrt(a * a + b * b);
}

}  // namespace ts::predictors::errors
