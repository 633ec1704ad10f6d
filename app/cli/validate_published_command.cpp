#include "validate_published_command.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "trainscope/core/atomic_file.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/published/published_validation.h"

namespace ts::cli {
namespace {

// A JSON file's object, or an empty object where the file is not there.
nlohmann::ordered_json readJsonIfThere(const std::string& path) {
    std::ifstream in(path);
    if (!in) return nlohmann::ordered_json::object();
    std::stringstream text;
    text << in.rdbuf();
    try {
        nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.str());
        if (!j.is_object()) throw ModelError(path, "not a JSON object");
        return j;
    } catch (const nlohmann::json::exception& e) {
        throw ModelError(path, std::string("not JSON: ") + e.what());
    }
}

}  // namespace

CLI::App* addValidatePublishedCommand(CLI::App& app, ValidatePublishedOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "validate-published",
        "Predict every row of published training-throughput tables (NVIDIA DeepLearningExamples, PyTorch) that a "
        "TrainScope model stands for: each row's error, summaries by model, GPU, precision and GPU count, and the "
        "errors of ratios between rows of one model; rows that cannot be mapped are listed with why.");
    cmd->add_option("PATH", o.paths,
                    "CSV files or directories of them (default: ../shared/data/training-throughput beside the "
                    "source tree)");  // a missing path is bad input (exit 2), not a usage error
    cmd->add_flag("--json", o.json,
                  "print JSON (overall, by_model, by_gpu, by_precision, by_gpu_count, ratios, "
                  "ratios_by_kind, rows, unmapped)");
    cmd->add_option("--predictions", o.predictions, "also write every compared row to this CSV file");
    cmd->add_flag("--fit", o.fit,
                  "also fit the whole-iteration constants that only whole runs tell (convolution, memory, "
                  "grouped and depthwise convolution, FP32 and Winograd efficiencies, the step-time spread "
                  "behind the wait for the slowest GPU) "
                  "on these rows, and print their leave-one-model-out and "
                  "leave-one-GPU-out errors");
    cmd->add_option("--fit-parameters", o.fitParameters,
                    "with --fit: the constants to fit, comma-separated (default: the shipped ones, "
                    "conv_efficiency,memory_efficiency,grouped_conv_efficiency,depthwise_conv_efficiency,"
                    "fp32_efficiency,winograd_speedup,step_time_spread; "
                    "also tensor_core_16:Volta, tensor_core_16:Ampere, tensor_core_tf32:Ampere)")
        ->delimiter(',')
        ->needs("--fit");
    cmd->add_option("--write-errors", o.writeErrors,
                    "with --fit: write the whole-iteration interval table (resources/iteration-errors.json) "
                    "from the leave-one-model-out errors")
        ->needs("--fit");
    cmd->add_option("--write-out-of-sample-errors", o.writeOutOfSample,
                    "write into this interval table (resources/iteration-errors.json, from --fit --write-errors) "
                    "its out-of-sample part: from these rows (another benchmark's, e.g. "
                    "tests/data/published/lambda) on GPUs outside the fit, how wide a prediction for such a GPU is")
        ->excludes("--fit");
    cmd->add_option("--mapping", o.mapping,
                    "how rows become scenarios (default: the built-in resources/published-runs.json)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--gpu-db", o.gpuDbFiles, "extra GPU file(s) applied after the built-in database")
        ->check(CLI::ExistingFile);
    return cmd;
}

int runValidatePublished(const ValidatePublishedOptions& o) {
    std::vector<std::string> paths = o.paths;
    if (paths.empty()) paths.push_back(TRAINSCOPE_PUBLISHED_DIR);
    const GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    const std::vector<predictors::PublishedRow> rows = predictors::readPublishedRows(paths);
    if (rows.empty()) throw ModelError(paths.front(), "no rows of published throughput");
    nlohmann::json mapping;
    std::string origin = "resources/published-runs.json";
    if (o.mapping.empty()) {
        mapping = predictors::builtinPublishedMapping();
    } else {
        origin = o.mapping;
        std::ifstream in(o.mapping);
        std::stringstream text;
        text << in.rdbuf();
        try {
            mapping = nlohmann::json::parse(text.str());
        } catch (const nlohmann::json::exception& e) {
            throw ModelError(o.mapping, std::string("not JSON: ") + e.what());
        }
    }
    const predictors::PublishedMapping mapped = predictors::mapPublishedRows(rows, mapping, db, origin);
    auto progress = [](const std::string& model) { std::cerr << "analysing " << model << "\n"; };
    const predictors::PublishedPredictor predictor(mapped, db,
                                                   o.json ? std::function<void(const std::string&)>() : progress);
    const predictors::PublishedReport report =
        predictors::summarisePublished(predictor.predict(predictors::StreamModel::shipped()), mapped.unmapped);
    std::optional<predictors::PublishedFitResult> fit;
    if (o.fit)
        fit = predictors::fitPublished(
            predictor, db, predictors::StreamModel::shipped(),
            o.fitParameters.empty() ? predictors::shippedFitParameterNames() : o.fitParameters);
    if (fit && !o.writeErrors.empty()) {
        nlohmann::ordered_json table = predictors::iterationErrorTable(
            *fit, std::string("trainscope-cli ") + TRAINSCOPE_VERSION + " validate-published --fit --write-errors " +
                      o.writeErrors);
        // The out-of-sample part comes from other rows (--write-out-of-sample-errors): kept, to be rewritten
        // after a refit changes the constants.
        const nlohmann::ordered_json before = readJsonIfThere(o.writeErrors);
        if (before.contains("out_of_sample")) table["out_of_sample"] = before.at("out_of_sample");
        writeFileAtomically(o.writeErrors, table.dump(2) + "\n");
        std::cerr << "wrote " << o.writeErrors << "\n";
    }
    if (!o.writeOutOfSample.empty()) {
        nlohmann::ordered_json table = readJsonIfThere(o.writeOutOfSample);
        const std::set<std::string> fitted = predictors::fittedGpusOf(table, o.writeOutOfSample);
        std::string source;
        for (const std::string& p : paths) source += (source.empty() ? "" : " ") + p;
        if (!o.mapping.empty()) source += " --mapping " + o.mapping;
        table["out_of_sample"] = predictors::outOfSampleErrorTable(report, fitted, db, source);
        writeFileAtomically(o.writeOutOfSample, table.dump(2) + "\n");
        std::cerr << "wrote " << o.writeOutOfSample << "\n";
    }
    if (!o.predictions.empty()) {
        writeFileAtomically(o.predictions,
                            [&](std::ostream& out) { predictors::writePublishedPredictions(out, report); });
        std::cerr << "wrote " << o.predictions << " (" << report.predictions.size() << " rows)\n";
    }
    if (o.json) {
        nlohmann::ordered_json j = predictors::publishedReportJson(report);
        if (fit) j["fit"] = predictors::publishedFitJson(*fit);
        std::cout << j.dump(1) << "\n";
    } else {
        predictors::printPublishedReport(std::cout, report);
        if (fit) predictors::printPublishedFit(std::cout, *fit);
    }
    return 0;
}

}  // namespace ts::cli
