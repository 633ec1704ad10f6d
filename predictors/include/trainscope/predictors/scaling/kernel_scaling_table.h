#pragma once
// The shipped calibration of the scaling models (resources/kernel-scaling.json, compiled in):
// per operator class, the shared parameters and each measured GPU's statistics, fitted on all
// GPUs of the public measurements. This is what lets a machine without any GPU predict: a GPU
// the table does not know gets the estimates an unseen GPU gets in validation.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainscope/predictors/scaling/kernel_measurements.h"
#include "trainscope/predictors/scaling/kernel_scaling.h"

namespace ts::predictors {

inline constexpr const char* kKernelScalingFormat = "trainscope-kernel-scaling";
inline constexpr int kKernelScalingVersion = 1;

struct ClassScaling {
    std::string opClass;
    ScalingParams params;
    std::map<std::string, GpuOpStats> gpus;  // GPU database id -> its own statistics
    GpuOpStats unseen;                       // for any other GPU
};

class KernelScalingTable {
public:
    // The table compiled into this binary.
    static const KernelScalingTable& builtin();
    // Throws ModelError naming `origin` when the text is not a valid table.
    static KernelScalingTable fromJson(const std::string& text, const std::string& origin);
    nlohmann::ordered_json toJson() const;

    // The class's entry; a class the table lacks uses linear (Gemm), conv (Conv) or add (Memory).
    // Throws ModelError when the table has none of these.
    const ClassScaling& forClass(const std::string& opClass) const;
    GpuOpStats statsFor(const ClassScaling& c, const GpuSpec& gpu) const;

    double predictCross(const KernelWork& originWork, double originLatencyMs, const GpuSpec& origin,
                        const GpuSpec& target) const;
    double predictModelOnly(const KernelWork& work, const GpuSpec& target) const;

    std::vector<ClassScaling> classes;
    nlohmann::json provenance;  // where the parameters came from and how they were fitted
};

// Fits every class on all of its GPUs (the shipped table). `provenance` is stored as given.
KernelScalingTable fitScalingTable(const MeasurementSet& set, nlohmann::json provenance);

}  // namespace ts::predictors
