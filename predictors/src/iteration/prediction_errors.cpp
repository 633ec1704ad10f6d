#include "trainscope/predictors/iteration/prediction_errors.h"

#include <cmath>
#include <map>
#include <set>
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
// resources/iteration-errors.json, read once: predictions ask for it at every batch size of every GPU.
struct IterationErrors {
    std::map<std::string, double> byPrecision;
    double all = 0;
    std::set<std::string> fittedGpus, fittedArchitectures;
    double gpuOutsideFit = 0, architectureOutsideFit = 0;
};

const IterationErrors& iterationErrors() {
    static const IterationErrors table = [] {
        const nlohmann::json j = nlohmann::json::parse(kBuiltinIterationErrorsJson);
        const nlohmann::json none = nlohmann::json::object(), noList = nlohmann::json::array();
        const nlohmann::json& byPrecision = j.contains("by_precision") ? j.at("by_precision") : none;
        const nlohmann::json& fitted = j.contains("fitted_gpus") ? j.at("fitted_gpus") : noList;
        const nlohmann::json& outside = j.contains("out_of_sample") ? j.at("out_of_sample") : none;
        const nlohmann::json& architectures =
            outside.contains("fitted_architectures") ? outside.at("fitted_architectures") : noList;
        IterationErrors t;
        for (auto it = byPrecision.begin(); it != byPrecision.end(); ++it) t.byPrecision[it.key()] = it->get<double>();
        t.all = j.value("all", 0.0);
        for (const nlohmann::json& g : fitted) t.fittedGpus.insert(g.get<std::string>());
        for (const nlohmann::json& a : architectures) t.fittedArchitectures.insert(a.get<std::string>());
        t.gpuOutsideFit = outside.value("gpu_outside_fit", 0.0);
        t.architectureOutsideFit = outside.value("architecture_outside_fit", 0.0);
        return t;
    }();
    return table;
}
}  // namespace

double wholeIterationError(const std::string& precision) {
    const IterationErrors& t = iterationErrors();
    const auto it = t.byPrecision.find(precision);
    return it == t.byPrecision.end() ? t.all : it->second;
}

double extrapolationError(const std::string& gpuId, const std::string& architecture) {
    const IterationErrors& t = iterationErrors();
    if (t.fittedGpus.count(gpuId)) return 0;
    return t.fittedArchitectures.count(architecture) ? t.gpuOutsideFit : t.architectureOutsideFit;
}

double combine(double a, double b) {
    return std::sqrt(a * a + b * b);
}

}  // namespace ts::predictors::errors
