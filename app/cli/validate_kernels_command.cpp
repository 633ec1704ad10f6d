#include "validate_kernels_command.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "trainscope/core/atomic_file.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/scaling/kernel_measurements.h"
#include "trainscope/predictors/scaling/kernel_scaling_table.h"
#include "trainscope/predictors/scaling/kernel_validation.h"

namespace ts::cli {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string today() {
    std::time_t t = std::time(nullptr);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
    return buf;
}

// Where the shipped parameters came from; stored in the table so it explains itself.
json provenance(const ValidateKernelsOptions& o, const predictors::MeasurementSet& set) {
    json gpus = json::object();
    for (const auto& op : set.ops) {
        json ids = json::array();
        for (const GpuSpec& g : op.gpus) ids.push_back(g.id);
        gpus[op.opClass] = ids;
    }
    return {{"dataset",
             "Per-operator latencies on five NVIDIA GPUs (PyTorch 2.1, CUDA 12.1, FP32, forward) published "
             "with the NeuSight artifact: Lee, Phanishayee, Mahajan, \"Forecasting GPU Performance for "
             "Deep Learning Training and Inference\", ASPLOS 2025"},
            {"licence", "MIT (Copyright (c) 2025 Georgia Institute of Technology and Microsoft Corporation)"},
            {"paths", o.paths},
            {"rows", set.rows},
            {"gpus", gpus},
            {"generated", today()},
            {"generator", std::string("trainscope-cli ") + TRAINSCOPE_VERSION +
                              " validate-kernels --fit-all -o resources/kernel-scaling.json PATH..."},
            {"method",
             "Per class: each GPU's host floor (3rd percentile of its latencies; conv: bmm's on the same "
             "machine) and achieved DRAM bandwidth fraction (median over the largest 10% by bytes); shared "
             "parameters by exhaustive grid search on every ordered GPU pair of ALL the GPUs listed "
             "(loss: mean of min(|ln(pred/actual)|, 1); classes over 5000 configurations use every third). "
             "GEMM/conv classes: then ln kernel-time factors per architecture (architecture_log_offsets), "
             "ridge least squares of ln(actual/predicted) on the same pairs; an architecture without one gets 1; "
             "then, per GEMM shape class (octave bins of reduction, output columns and rows), the same fit of what "
             "the constant factors leave (shape_log_offsets, stronger ridge). "
             "unseen_gpu: what any other GPU gets (floor_quantile of the floors, median efficiency). "
             "The leave-one-GPU-out errors of this procedure: trainscope-cli validate-kernels PATH."}};
}

// One CSV row per prediction. The configuration is one field of `name=value` pairs separated by
// spaces, because the size columns differ between classes.
void writePredictionHeader(std::ostream& out) {
    out << "class,configuration,path,origin,target,predicted_ms,measured_ms,ape_pct\n";
}

void writePrediction(std::ostream& out, const predictors::ValidationPrediction& p) {
    const predictors::OperatorMeasurements& op = *p.op;
    const std::vector<double>& sizes = op.configs[p.config].sizes;
    out << op.opClass << ',';
    for (size_t i = 0; i < sizes.size(); ++i) {
        out << (i ? " " : "") << op.sizeColumns[i] << '=';
        if (sizes[i] == std::floor(sizes[i]) && std::abs(sizes[i]) < 1e15)
            out << int64_t(sizes[i]);  // dimensions are integers: never 1e+06
        else
            out << sizes[i];
    }
    const double apePct = 100 * std::abs(p.predictedMs - p.measuredMs) / p.measuredMs;
    out << ',' << (p.origin ? "cross" : "model-only") << ',' << (p.origin ? p.origin->id : "") << ',' << p.target->id
        << ',' << p.predictedMs << ',' << p.measuredMs << ',' << apePct << '\n';
}

}  // namespace

int runValidateKernels(const ValidateKernelsOptions& o) {
    const auto t0 = Clock::now();
    GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    predictors::MeasurementSet set = predictors::readKernelMeasurements(o.paths, db);
    const double readSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (set.ops.empty()) {
        std::string why = "no rows of a GPU the database knows";
        for (const auto& u : set.unknownDevices) why += "; unknown device '" + u.device + "' in " + u.file;
        throw ModelError(o.paths.front(), why);
    }

    if (o.fitAll) {
        predictors::KernelScalingTable table = predictors::fitScalingTable(set, provenance(o, set));
        const std::string text = table.toJson().dump(2) + "\n";
        if (o.output.empty() || o.output == "-") {
            std::cout << text;
        } else {
            writeFileAtomically(o.output, text);
            std::cerr << "wrote " << o.output << " (" << table.classes.size() << " classes, " << set.rows << " rows)\n";
        }
        for (const auto& u : set.unknownDevices)
            std::cerr << "note: " << u.file << ": device '" << u.device << "' is not in the GPU database; " << u.rows
                      << " rows skipped\n";
        return 0;
    }

    predictors::ValidationOptions options;
    options.targetHostKnown = o.targetHostKnown;
    predictors::ValidationReport report;
    if (o.predictions.empty()) {
        report = predictors::validateKernels(set, options);
    } else {
        writeFileAtomically(o.predictions, [&](std::ostream& out) {
            out.precision(6);
            writePredictionHeader(out);
            options.onPrediction = [&out](const predictors::ValidationPrediction& p) { writePrediction(out, p); };
            report = predictors::validateKernels(set, options);
        });
        std::cerr << "wrote " << o.predictions << " (" << report.cross.overall.n + report.modelOnly.overall.n
                  << " predictions)\n";
    }
    const double totalSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (o.json) {
        json j = predictors::validationReportJson(report);
        j["read_seconds"] = readSeconds;
        j["total_seconds"] = totalSeconds;
        std::cout << j.dump(1) << "\n";
    } else {
        predictors::printValidationReport(std::cout, report);
        char buf[160];
        std::snprintf(buf, sizeof buf, "time: %.1f s (read %.1f s, fit %.1f s, predict %.1f s)\n", totalSeconds,
                      readSeconds, report.fitSeconds, report.predictSeconds);
        std::cout << buf;
    }
    return 0;
}

}  // namespace ts::cli
