#include "predict_command.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "predict_report.h"
#include "scenario_options.h"
#include "trace_predict_command.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profile_file.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::cli {
namespace {

using namespace ts::predictors;

// Without --precision: the profile's, else what the model's kind trains in on `gpu` (null: several).
TrainingScenario scenarioFrom(const PredictOptions& o, const PredictionInput& input, const GpuSpec* gpu) {
    const std::string name = !o.precision.empty() ? o.precision
                             : input.profilePrecision
                                 ? trainingPrecisionName(*input.profilePrecision)
                                 : trainingPrecisionName(defaultPrecisionFor(input.defaults.kind, gpu));
    auto precision = parseTrainingPrecision(name);
    if (!precision)
        throw ModelError("--precision",
                         "unknown precision " + quoted(name) + " (" + trainingPrecisionNames() + ")");
    checkMasterWeights(o.scenario, *precision == TrainingPrecision::Bf16Params);
    TrainingScenario s = scenarioFromOptions(o.scenario, input.profileOptimizer, input.defaults.optimizer);
    s.precision = *precision;
    return s;
}

}  // namespace

// A measured profile (a .json file whose format is trainscope-profile) rather than a model.
std::optional<Profile> loadProfileIfAny(const std::string& path) {
    if (!isProfileFile(path)) return std::nullopt;
    return readProfile(path);
}

PredictionInput loadPredictionInput(const std::string& modelOrProfile, const GpuDatabase& db,
                                    const ScenarioOptions& scenario, bool modelIn16Bit) {
    PredictionInput in;
    if (isKinetoTraceFile(modelOrProfile))  // read first: a damaged trace is refused for what is wrong with it
        throw ModelError(modelOrProfile, tracePredictionUnavailable(readKinetoTrace(modelOrProfile)));
    std::optional<Profile> profile = loadProfileIfAny(modelOrProfile);
    const std::string modelSpec = profile ? profile->scenario.model : modelOrProfile;
    if (profile && modelSpec.empty()) throw ModelError(modelOrProfile, "the profile does not name its model");
    if (profile && scenario.tensorParallel > 1)
        throw ModelError("--tensor-parallel",
                         "a measured profile is one GPU's whole model: tensor parallelism applies to a model");
    if (profile && scenario.expertParallel > 1)
        throw ModelError("--expert-parallel",
                         "a measured profile is one GPU's whole model: expert parallelism applies to a model");
    in.graph = std::make_unique<Graph>(loadModel(modelSpecFor(modelSpec, scenario)));
    checkTensorParallel(scenario, *in.graph, modelSpec);
    checkSequenceOption(scenario, *in.graph);
    in.defaults = scenarioDefaultsFor(*in.graph);
    if (scenario.fineTuning()) {
        if (profile)
            throw ModelError(modelOrProfile,
                             "a measured profile is of the whole model: --lora, --qlora and --train apply to a model");
        applyFineTuning(*in.graph, scenario, modelIn16Bit);
    }
    int64_t seq = scenario.seq;
    if (seq <= 0 && profile && profile->scenario.seq > 0) seq = profile->scenario.seq;
    in.predictor = std::make_unique<TrainingPredictor>(*in.graph, seq);
    if (profile) {
        in.predictor->useProfile(*profile, db);
        in.profileOptimizer = parseOptimizer(profile->scenario.optimizer);
        in.profilePrecision = parseTrainingPrecision(profile->scenario.precision);
    }
    return in;
}

CLI::App* addPredictCommand(CLI::App& app, PredictOptions& o) {
    CLI::App* cmd =
        app.add_subcommand("predict",
                           "Predict training time, throughput and memory on every GPU of the database (or one): per "
                           "precision, optimizer, batch size (or the largest that fits), data-parallel GPUs and "
                           "interconnect, with activation checkpointing; every figure with its expected range.");
    cmd->add_option("MODEL", o.model,
                    "model file or zoo:NAME[?options], as for inspect, or a profile file "
                    "(PROFILE.json from `profile`): predictions then start from its measurements")
        ->required();
    cmd->add_option("--gpu", o.gpu, "a GPU id or name, or all (default)");
    cmd->add_option("--batch,-b", o.batch,
                    "per-GPU batch size, or auto: the largest that fits each GPU "
                    "(default: the model's, 1 unless ?batch= says otherwise)");
    cmd->add_option(
        "--precision", o.precision,
        "fp32 (PyTorch's, with TF32 convolutions on Ampere and newer), fp32-strict (no TF32), "
        "tf32, amp-fp16, amp-bf16 (autocast), bf16-params (the model in bf16 with fp32 master weights, as "
        "FSDP's bf16 mixed precision and Megatron-LM run it) or fp8; for a trace: as-recorded (default), "
        "fp32, tf32 or fp32-strict, "
        "what its FP32 kernels run in on the other GPU. Default: a profile's own; a language model in "
        "amp-bf16 (amp-fp16 on a GPU without bf16, fp32 on one without tensor cores), any other model in fp32");
    addScenarioOptions(*cmd, o.scenario);
    cmd->add_flag("--json", o.json, "print JSON: model, scenario, predictions[] (one per GPU)");
    cmd->add_flag("--layers", o.layers, "every layer's forward and backward time (JSON: layers[] per GPU)");
    cmd->add_option("--gpu-db", o.gpuDbFiles, "extra GPU file(s) applied after the built-in database")
        ->check(CLI::ExistingFile);
    return cmd;
}

int runPredict(const PredictOptions& o) {
    if (isKinetoTraceFile(o.model)) return runPredictTrace(o);
    const GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    const std::optional<TrainingPrecision> precision = parseTrainingPrecision(o.precision);
    const PredictionInput input = loadPredictionInput(o.model, db, o.scenario, precision && isModelIn16Bit(*precision));
    const TrainingPredictor& predictor = *input.predictor;
    std::vector<const GpuSpec*> gpus;
    if (o.gpu == "all")
        for (const GpuSpec& spec : db.gpus()) gpus.push_back(&spec);
    else
        gpus.push_back(&db.get(o.gpu));
    TrainingScenario scenario = scenarioFrom(o, input, gpus.size() == 1 ? gpus.front() : nullptr);
    const int64_t batch = batchFrom(o.batch, input.graph->defaults.batch);

    const bool perLayer = o.layers || gpus.size() == 1;
    std::vector<TrainingPrediction> predictions;
    LayerBoundLists bounds;
    // Without --precision (or a profile's), each GPU trains in what the model's kind takes there.
    const bool precisionPerGpu = o.precision.empty() && !input.profilePrecision;
    for (const GpuSpec* gpu : gpus) {
        TrainingScenario s = scenario;
        s.batch = batch > 0 ? batch : 1;
        if (precisionPerGpu) s.precision = defaultPrecisionFor(input.defaults.kind, gpu);
        TrainingPrediction p = predictor.predict(*gpu, s, perLayer && batch > 0);
        if (batch == 0 && p.supported && p.maxBatch.value > 1) {  // auto: the largest that fits
            s.batch = int64_t(p.maxBatch.value);
            p = predictor.predict(*gpu, s, perLayer);
        }
        bounds.emplace_back();
        if (perLayer && p.supported) bounds.back() = LayerBounds(predictor, *gpu, s.precision).at(double(s.batch));
        predictions.push_back(std::move(p));
    }
    if (o.json)
        std::cout << predictReportJson(predictor.analysis(), predictions, o.layers, bounds).dump(1) << "\n";
    else
        printPredictTable(std::cout, predictor.analysis(), predictions, o.layers, bounds);
    return 0;
}

}  // namespace ts::cli
