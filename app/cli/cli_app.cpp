#include "cli_app.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hardware_commands.h"
#include "inspect_report.h"
#include "profile_command.h"
#include "predict_command.h"
#include "report_command.h"
#include "trace_report.h"
#include "validate_command.h"
#include "validate_kernels_command.h"
#include "validate_published_command.h"
#include "trace_predict_command.h"
#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/model_loader.h"

namespace ts::cli {
namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitNoDevice = 4;

struct InspectOptions {
    std::string model;
    int64_t batch = 0;
    int64_t seq = 0;
    bool json = false;
    int depth = -1;
    int top = 15;
};

int runInspect(const InspectOptions& o) {
    if (isKinetoTraceFile(o.model)) return runInspectTrace(o.model, o.json, o.top);
    Graph g = loadModel(o.model);
    int64_t batch = o.batch > 0 ? o.batch : g.defaults.batch;
    int64_t seq = o.seq > 0 ? o.seq : g.defaults.seq;
    ModelCosts costs;
    try {
        costs = computeCosts(g, batch, seq);
    } catch (const ShapeError& e) {
        throw ModelError(o.model, e.what());
    }
    if (o.json) std::cout << inspectJson(g, costs).dump(1) << "\n";
    else printInspectTable(std::cout, g, costs, o.depth);
    return 0;
}

int runZooList() {
    for (const ZooEntry& e : zooModels()) {
        std::cout << "zoo:" << e.name << "  " << e.description << "\n";
        for (const ZooParam& p : e.params)
            std::cout << "    ?" << p.name << "=" << p.defaultValue << "  " << p.help << "\n";
    }
    return 0;
}

}  // namespace

int run(int argc, char** argv) {
    CLI::App app{"TrainScope: per-layer costs, profiles and predictions for deep-learning training.\n"
                 "A MODEL is an ONNX file (.onnx), a TorchScript file (.pt), a TrainScope JSON model (.json)\n"
                 "or a built-in model zoo:NAME (see `trainscope-cli zoo`); options follow '?', e.g.\n"
                 "zoo:bert_large?seq=512, zoo:resnet50?image=160, model.onnx?seq=128.",
                 "trainscope-cli"};
    app.set_version_flag("--version", std::string("trainscope-cli ") + TRAINSCOPE_VERSION);
    app.require_subcommand(1);

    InspectOptions inspect;
    CLI::App* inspectCmd = app.add_subcommand(
        "inspect", "Show the model's module tree with analytic per-layer costs: output shapes, parameters, "
                   "forward and backward FLOPs (a multiply-add is 2 FLOPs), and bytes saved for backward.");
    inspectCmd->add_option("MODEL", inspect.model,
                           "model file or zoo:NAME[?options], or a PyTorch profiler trace (TRACE.json[.gz]): its "
                           "steps, GPU busy and idle time, top operators and kernels (docs/traces.md)")
        ->required();
    inspectCmd->add_option("--batch,-b", inspect.batch, "batch size at which costs are evaluated (default 1)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 30));
    inspectCmd->add_option("--seq", inspect.seq, "sequence length for sequence models (default: the model's)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
    inspectCmd->add_flag("--json", inspect.json,
                         "print JSON (model, totals, layers[], modules[]) instead of the table");
    inspectCmd->add_option("--depth", inspect.depth, "show modules down to this depth in the table (default: all)")
        ->check(CLI::Range(0, 64));
    inspectCmd->add_option("--top", inspect.top, "for a trace: operators, kernels and stretches listed (default 15)")
        ->check(CLI::Range(1, 100000));

    CLI::App* zooCmd = app.add_subcommand("zoo", "List the built-in models and their options.");

    auto addGpuDbOption = [](CLI::App* cmd, std::vector<std::string>& files) {
        cmd->add_option("--gpu-db", files,
                        "extra GPU file(s) applied after the built-in database, ~/.config/trainscope/gpus.json "
                        "and $TRAINSCOPE_GPU_DB (format: docs/gpu-database.md)")
            ->check(CLI::ExistingFile);
    };
    GpusOptions gpus;
    CLI::App* gpusCmd = app.add_subcommand(
        "gpus", "List the GPU database: datasheet peaks per precision, memory, bandwidth, prices; with an ID, "
                "every figure of that GPU with its source, its per-SM limits and ridge points.");
    gpusCmd->add_option("GPU", gpus.gpu, "a GPU id, name or CUDA device name to show in detail");
    gpusCmd->add_flag("--json", gpus.json, "print the database (or the one GPU) as JSON");
    addGpuDbOption(gpusCmd, gpus.gpuDbFiles);

    OccupancyOptions occupancy;
    CLI::App* occupancyCmd = app.add_subcommand(
        "occupancy", "Occupancy and wave size of a kernel shape on every GPU of the database (or one), from the "
                     "CUDA toolkit's cuda_occupancy.h and each GPU's per-SM limits.");
    occupancyCmd->add_option("--gpu", occupancy.gpu, "a GPU id or name, or all (default)");
    occupancyCmd->add_option("--threads", occupancy.threads, "threads per block (default 256)")->check(CLI::Range(1, 4096));
    occupancyCmd->add_option("--registers", occupancy.registers, "registers per thread (default 32)")
        ->check(CLI::Range(0, 1024));
    occupancyCmd->add_option("--shared-memory", occupancy.sharedMemory, "shared memory per block in bytes (default 0)")
        ->check(CLI::Range(0, 1 << 24));
    occupancyCmd->add_option("--grid", occupancy.grid, "thread blocks in the grid (default: one full wave)")
        ->check(CLI::Range(int64_t(0), int64_t(1) << 40));
    occupancyCmd->add_flag("--json", occupancy.json, "print JSON");
    addGpuDbOption(occupancyCmd, occupancy.gpuDbFiles);

    DevicesOptions devices;
    CLI::App* devicesCmd = app.add_subcommand(
        "devices", "Detect the local GPUs (name, compute capability, SMs, memory, clocks) and the database entry "
                   "each one matches.");
    devicesCmd->add_flag("--json", devices.json, "print JSON");
    addGpuDbOption(devicesCmd, devices.gpuDbFiles);

    CalibrateOptions calibrate;
    CLI::App* calibrateCmd = app.add_subcommand(
        "calibrate", "Measure the local GPU with micro-benchmarks (DRAM and L2 bandwidth, FP32 and tensor-core "
                     "peaks through cuBLASLt, launch latency, SM clock under load), show them beside the "
                     "datasheet, and write its calibrated entry.");
    calibrateCmd->add_option("-o,--output", calibrate.output,
                             "GPU file to write the entry into (default: " + defaultUserGpuFile() +
                                 ", which later runs read)");
    calibrateCmd->add_option("--device", calibrate.device, "CUDA device index (default 0)")->check(CLI::Range(0, 63));
    calibrateCmd->add_flag("--quick", calibrate.quick, "smaller problem sizes and fewer repetitions");
    calibrateCmd->add_flag("--json", calibrate.json, "print JSON");
    addGpuDbOption(calibrateCmd, calibrate.gpuDbFiles);

    ValidateKernelsOptions validateKernels;
    CLI::App* validateKernelsCmd = app.add_subcommand(
        "validate-kernels", "Validate the cross-GPU scaling models leave-one-GPU-out on per-operator latency "
                            "measurements (CSV files of the NeuSight schema): errors per class and GPU pair, for "
                            "prediction from another GPU's measurement and from the model alone.");
    validateKernelsCmd->add_option("PATH", validateKernels.paths, "CSV files or directories of them")
        ->required()
        ->check(CLI::ExistingPath);
    validateKernelsCmd->add_flag("--json", validateKernels.json, "print JSON (overall, classes, targets, pairs, "
                                                                 "model_only, fitted) instead of the tables");
    validateKernelsCmd->add_flag("--fit-all", validateKernels.fitAll,
                                 "instead, fit on every GPU and write the scaling table "
                                 "(resources/kernel-scaling.json)");
    validateKernelsCmd->add_option("-o,--output", validateKernels.output,
                                   "with --fit-all: file to write (default: stdout)");
    validateKernelsCmd
        ->add_flag("--target-host-known", validateKernels.targetHostKnown,
                   "diagnostic, not leave-one-GPU-out: take each target's host floor and achieved bandwidth from "
                   "its own rows, to show how much of the error they cause")
        ->excludes("--fit-all");
    validateKernelsCmd
        ->add_option("--predictions", validateKernels.predictions,
                     "also write every prediction to this CSV file (class, configuration, path, origin, target, "
                     "predicted and measured ms, APE %), for analyses the tables do not show")
        ->excludes("--fit-all");
    addGpuDbOption(validateKernelsCmd, validateKernels.gpuDbFiles);

    ProfileCommandOptions profile;
    CLI::App* profileCmd = addProfileCommand(app, profile);
    PredictOptions predict;
    CLI::App* predictCmd = addPredictCommand(app, predict);
    ValidateOptions validate;
    CLI::App* validateCmd = addValidateCommand(app, validate);
    ReportOptions report;
    CLI::App* reportCmd = addReportCommand(app, report);
    ValidatePublishedOptions validatePublished;
    CLI::App* validatePublishedCmd = addValidatePublishedCommand(app, validatePublished);
    ValidateTracesOptions validateTraces;
    CLI::App* validateTracesCmd = addValidateTracesCommand(app, validateTraces);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 1;
    }
    try {
        if (inspectCmd->parsed()) return runInspect(inspect);
        if (zooCmd->parsed()) return runZooList();
        if (gpusCmd->parsed()) return runGpus(gpus);
        if (devicesCmd->parsed()) return runDevices(devices);
        if (occupancyCmd->parsed()) return runOccupancy(occupancy);
        if (calibrateCmd->parsed()) return runCalibrate(calibrate);
        if (validateKernelsCmd->parsed()) return runValidateKernels(validateKernels);
        if (profileCmd->parsed()) return runProfile(profile);
        if (predictCmd->parsed()) return runPredict(predict);
        if (validateCmd->parsed()) return runValidate(validate);
        if (reportCmd->parsed()) return runReport(report);
        if (validatePublishedCmd->parsed()) return runValidatePublished(validatePublished);
        if (validateTracesCmd->parsed()) return runValidateTraces(validateTraces);
    } catch (const ModelError& e) {
        std::cerr << "trainscope-cli: " << e.what() << "\n";
        return kExitBadInput;
    } catch (const DeviceError& e) {
        std::cerr << "trainscope-cli: " << e.what() << "\n";
        return kExitNoDevice;
    } catch (const std::exception& e) {
        // Anything else is a bug, but the user still gets a sentence and a status, not a crash.
        std::cerr << "trainscope-cli: internal error: " << e.what() << "\n";
        return 3;
    }
    return 1;
}

}  // namespace ts::cli
