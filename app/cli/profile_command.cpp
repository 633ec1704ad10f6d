#include "profile_command.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profile_file.h"
#include "trainscope/core/profiler.h"
#include "trainscope/kernels/device_query.h"

namespace ts::cli {
namespace {

constexpr int kExitCancelled = 130;  // as a shell reports a command stopped by SIGINT

std::atomic<bool> gCancelled{false};

extern "C" void onInterrupt(int) {
    gCancelled.store(true);
    // A second Ctrl-C ends the process at once.
    std::signal(SIGINT, SIG_DFL);
}

std::vector<int64_t> parseBatches(const std::string& text, bool& autoBatch) {
    autoBatch = false;
    std::vector<int64_t> out;
    if (text.empty()) return out;
    if (text == "auto") {
        autoBatch = true;
        return out;
    }
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        size_t used = 0;
        long long n = 0;
        try {
            n = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != item.size() || n < 1 || n > (1LL << 24))
            throw ModelError("--batch", "'" + item + "' is not a batch size (expected N, N,M,... or auto)");
        out.push_back(n);
    }
    return out;
}

std::string megabytes(double bytes) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(bytes < 10e6 ? 2 : 1) << bytes / 1e6 << " MB";
    return s.str();
}

void printSummary(const Profile& p) {
    std::cout << "Profile of " << p.scenario.modelName << " on " << p.environment.deviceName << " ("
              << p.environment.device << "), " << p.scenario.precision << ", " << p.scenario.optimizer
              << "; loss: " << p.scenario.loss << "\n";
    for (const ProfileRun& r : p.runs) {
        std::cout << "\nbatch " << r.batch << ": ";
        if (!r.fits) {
            std::cout << "does not fit (" << r.error << ")\n";
            continue;
        }
        std::cout << std::fixed << std::setprecision(3) << r.iteration.medianMs << " ms per iteration (cv "
                  << std::setprecision(1) << 100 * r.iteration.cv << "%), " << std::setprecision(1)
                  << r.samplesPerSecond() << " samples/s" << (r.complete ? "" : "  [incomplete: " + r.error + "]")
                  << "\n";
        for (const IterationPart& part : r.parts)
            std::cout << "  " << std::left << std::setw(74) << part.name << std::right << std::setw(10)
                      << std::setprecision(3) << part.ms << " ms\n";
        const MemoryProfile& m = r.memory;
        std::cout << "  memory: weights " << megabytes(m.weights) << ", gradients " << megabytes(m.gradients)
                  << ", optimizer state " << megabytes(m.optimizerState) << ", activations " << megabytes(m.activations)
                  << ", inputs " << megabytes(m.inputs) << ", workspace " << megabytes(m.workspace) << "; peak "
                  << megabytes(m.peakAllocated);
        if (m.cudaContext > 0) std::cout << " (+ " << megabytes(m.cudaContext) << " outside the allocator)";
        std::cout << "\n";
    }
    if (!p.kernelsRecorded) std::cout << "\nkernels not recorded: " << p.kernelsMissingReason << "\n";
    for (const std::string& n : p.notes) std::cout << "note: " << n << "\n";
    if (!p.complete) std::cout << "\nINCOMPLETE: " << p.incompleteReason << "\n";
}

}  // namespace

CLI::App* addProfileCommand(CLI::App& app, ProfileCommandOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "profile",
        "Measure training of a model on the local GPU (or the CPU): each layer's forward and backward "
        "time in isolation, the whole iteration and its parts, memory by category, GPU kernels; at one "
        "or more batch sizes. Writes a profile file (docs/profile-format.md). Ctrl-C stops and writes "
        "what was measured, marked incomplete.");
    cmd->add_option("MODEL", o.model, "model file or zoo:NAME[?options]")->required();
    cmd->add_option("--device", o.device, "cpu, cuda or cuda:N (default cpu)");
    cmd->add_option("--batch,-b", o.batch, "batch size, a list N,M,... or auto (grow until out of memory)");
    cmd->add_option("--batch-cap", o.batchCap,
                    "with --batch auto: the largest batch tried (default 4096 on a GPU, "
                    "8 on the CPU)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
    cmd->add_option("--seq", o.seq, "sequence length for sequence models")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
    cmd->add_option("--precision", o.precision,
                    "fp32 (PyTorch's default: TF32 convolutions on Ampere and newer), fp32-strict, tf32, amp-fp16 or "
                    "amp-bf16 (default fp32)");
    cmd->add_option("--optimizer", o.optimizer, "sgd, sgd-momentum, adam or adamw (default sgd)");
    cmd->add_option("-o,--output", o.output, "profile file to write")->required();
    cmd->add_option("--trace", o.trace, "also write one iteration as a Chrome/Perfetto trace (JSON)");
    cmd->add_flag("--no-layers", o.noLayers, "skip the per-layer measurements");
    cmd->add_flag("--no-kernels", o.noKernels, "do not record GPU kernels (CUPTI)");
    cmd->add_flag("--quick", o.quick, "one warm-up and at most 5 repeats per figure");
    return cmd;
}

int runProfile(const ProfileCommandOptions& c) {
    ProfileOptions o;
    o.device = c.device;
    o.batches = parseBatches(c.batch, o.autoBatch);
    o.autoBatchCap = c.batchCap;
    o.seq = c.seq;
    const auto precision = parseTrainingPrecision(c.precision);
    if (!precision)
        throw ModelError("", "unknown precision '" + c.precision + "' (expected " + trainingPrecisionNames() + ")");
    const auto optimizer = parseOptimizer(c.optimizer);
    if (!optimizer) throw ModelError("", "unknown optimizer '" + c.optimizer + "' (expected " + optimizerNames() + ")");
    if (auto why = unprofilableReason(*precision, *optimizer)) throw ModelError("", *why);
    o.precision = *precision;
    o.optimizer = *optimizer;
    o.perLayer = !c.noLayers;
    o.recordKernels = !c.noKernels;
    if (c.quick) {
        o.warmup = 1;
        o.minRepeats = 3;
        o.maxRepeats = 5;
        o.maxSecondsPerMeasurement = 0.5;
    }
    o.modelSpec = c.model;
    if (!executionSupported())
        throw DeviceError("this build of TrainScope has no LibTorch, so it cannot profile models");

    Graph g = loadModel(c.model);
    if (o.batches.empty() && !o.autoBatch) o.batches.push_back(g.defaults.batch);
    if (c.device != "cpu") {
        DeviceQuery q = kernels::queryDevices();
        if (!q.available) throw DeviceError(c.device + " cannot be used: " + q.status);
        int index = c.device.size() > 5 ? std::atoi(c.device.c_str() + 5) : 0;
        for (const DeviceProperties& d : q.devices)
            if (d.index == index) o.deviceProperties = d;
    }
    // On a terminal one line is rewritten in place; in a log, one line per stage.
    const bool terminal = isatty(STDERR_FILENO) != 0;
    std::string lastStage;
    o.progress = [&](const ProfileProgress& p) {
        if (terminal) {
            std::cerr << "\r" << p.stage;
            if (p.total > 1) std::cerr << " " << p.done << "/" << p.total;
            std::cerr << "        " << std::flush;
        } else if (p.stage != lastStage) {
            std::cerr << p.stage << "\n";
        }
        lastStage = p.stage;
    };
    gCancelled.store(false);
    o.cancelled = &gCancelled;
    auto previous = std::signal(SIGINT, onInterrupt);
    ProfileResult result;
    try {
        result = profileModel(g, o);
    } catch (const ExecutionError& e) {
        std::signal(SIGINT, previous);
        std::cerr << "\n";
        throw ModelError(c.model, e.what());
    }
    std::signal(SIGINT, previous);
    if (terminal) std::cerr << "\n";
    result.profile.environment.software.trainscope = TRAINSCOPE_VERSION;
    writeProfile(result.profile, c.output);
    std::cerr << "wrote " << c.output << "\n";
    if (!c.trace.empty()) {
        writeTrace(result.timeline, result.profile.scenario.modelName + " on " + result.profile.environment.device,
                   c.trace);
        std::cerr << "wrote " << c.trace << "\n";
    }
    printSummary(result.profile);
    if (gCancelled.load()) return kExitCancelled;
    return result.profile.complete ? 0 : 2;  // stopped by a problem with the model (named above)
}

}  // namespace ts::cli
