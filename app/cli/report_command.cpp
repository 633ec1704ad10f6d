#include "report_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "predict_command.h"
#include "scenario_options.h"
#include "trace_input.h"
#include "trainscope/core/atomic_file.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/choice/hardware_choice.h"
#include "trainscope/predictors/choice/trace_choice.h"

#ifdef TRAINSCOPE_HAVE_REPORT
#include <QApplication>

#include "report_writer.h"
#endif

namespace ts::cli {
namespace {

using namespace ts::predictors;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// --format, else the output's suffix.
std::string formatOf(const ReportOptions& o) {
    const std::string known = "html, pdf, csv or json";
    if (!o.format.empty()) {
        const std::string f = lower(o.format);
        if (f == "html" || f == "pdf" || f == "csv" || f == "json") return f;
        throw ModelError("--format", "unknown format " + quoted(o.format) + " (" + known + ")");
    }
    const size_t dot = o.output.rfind('.');
    const std::string suffix = dot == std::string::npos ? "" : lower(o.output.substr(dot + 1));
    if (suffix == "html" || suffix == "htm") return "html";
    if (suffix == "pdf" || suffix == "csv" || suffix == "json") return suffix;
    throw ModelError(o.output, "cannot tell the report's format from the file name: give --format (" + known +
                                   ") or a .html, .pdf, .csv or .json file");
}

TrainingScenario baseFrom(const ReportOptions& o, const PredictionInput& input) {
    return scenarioFromOptions(o.scenario, input.profileOptimizer, input.defaults.optimizer);
}

// --tokens, or --epochs and --dataset-samples, else the model's kind's goal (model_defaults.h).
TrainingGoal goalFrom(const ReportOptions& o, const PredictionInput& input) {
    if (o.tokens > 0 && (o.epochs > 0 || o.datasetSamples > 0))
        throw ModelError("--tokens", "is a goal of its own: give it or --epochs/--dataset-samples, not both");
    if (o.tokens > 0 && !input.predictor->analysis().sequenceModel) {
        std::ostringstream tokens;
        tokens << o.tokens;
        throw ModelError("--tokens", input.graph->name + " has no sequence, so " + tokens.str() +
                                         " tokens cannot be its goal: give --epochs and --dataset-samples");
    }
    TrainingGoal goal = input.defaults.goal;
    if (o.tokens > 0) return TrainingGoal{1, goal.datasetSamples, o.tokens};
    if (o.epochs > 0 || o.datasetSamples > 0) goal.tokens = 0;  // the user's goal in samples
    if (o.epochs > 0) goal.epochs = o.epochs;
    if (o.datasetSamples > 0) goal.datasetSamples = o.datasetSamples;
    return goal;
}

HardwareChoiceOptions choiceOptionsFrom(const ReportOptions& o) {
    HardwareChoiceOptions c;
    c.modelLabel = o.model;
    if (!o.batch.empty() && o.batch != "auto") c.batch = batchFrom(o.batch, 0);
    for (const std::string& name : o.precisions) {
        if (lower(name) == "all") {
            c.precisions.clear();
            break;
        }
        auto p = parseTrainingPrecision(name);
        if (!p)
            throw ModelError("--precision", "unknown precision " + quoted(name) +
                                                " (" + trainingPrecisionNames() + ", or all)");
        if (std::find(c.precisions.begin(), c.precisions.end(), *p) == c.precisions.end()) c.precisions.push_back(*p);
    }
    return c;
}

std::vector<const GpuSpec*> gpusFrom(const ReportOptions& o, const GpuDatabase& db) {
    std::vector<const GpuSpec*> gpus;
    const bool all = o.gpus.empty() ||
                     std::any_of(o.gpus.begin(), o.gpus.end(), [](const std::string& g) { return lower(g) == "all"; });
    if (all) {
        for (const GpuSpec& g : db.gpus()) gpus.push_back(&g);
        return gpus;
    }
    for (const std::string& name : o.gpus) {
        const GpuSpec* g = &db.get(name);  // throws, listing the known ids
        if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
    }
    return gpus;
}

#ifdef TRAINSCOPE_HAVE_REPORT
// Plots are drawn with QCustomPlot, which needs an application object; offscreen needs no display.
std::unique_ptr<QApplication> reportApplication() {
    static int argc = 3;
    static char arg0[] = "trainscope-cli", arg1[] = "-platform", arg2[] = "offscreen";
    static char* argv[] = {arg0, arg1, arg2, nullptr};
    if (QCoreApplication::instance()) return nullptr;
    return std::make_unique<QApplication>(argc, argv);
}
#endif

// html or pdf of a model's or a trace's choice. `source` names where the format came from
// (--format, or the output file) in errors.
template <typename Choice>
void writeRendered(const Choice& choice, const std::string& format, const std::string& path,
                   const std::string& source) {
#ifdef TRAINSCOPE_HAVE_REPORT
    const std::unique_ptr<QApplication> app = reportApplication();
    const auto f = format == "pdf" ? report::ReportFormat::Pdf : report::ReportFormat::Html;
    const QString error = report::writeReport(choice, f, QString::fromStdString(path));
    if (!error.isEmpty()) throw ModelError("", error.toStdString());
#else
    (void)choice;
    (void)path;
    throw ModelError(source, format +
                                 " reports need the GUI build (Qt 6 and QCustomPlot), and this trainscope-cli "
                                 "was built without it: use --format csv or json, or the GUI build");
#endif
}

std::string summaryLine(const HardwareChoice& c) {
    const auto best =
        std::find_if(c.rows.begin(), c.rows.end(), [](const HardwareChoiceRow& r) { return r.recommended; });
    std::string line = std::to_string(c.rows.size()) + (c.rows.size() == 1 ? " GPU ranked" : " GPUs ranked");
    if (best == c.rows.end()) return line + "; nothing fits on any of them";
    line += "; first: " + best->gpuId + " at batch " + std::to_string(best->batch) + ", " +
            trainingPrecisionName(best->precision);
    return line;
}

}  // namespace

CLI::App* addReportCommand(CLI::App& app, ReportOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "report",
        "Write the hardware-choice report: every GPU (or those given) with its recommended batch size "
        "and precision, ranked by the cost of training the goal (then by time), with the predicted "
        "ranges and the assumptions. html and pdf (with plots) need the GUI build; csv and json do not.");
    cmd->add_option("MODEL", o.model,
                    "model file or zoo:NAME[?options], or a profile file, as for predict; or a PyTorch profiler "
                    "trace: which GPU runs its recorded job for what time per step and cost")
        ->required();
    cmd->add_option("-o,--output", o.output, "the file to write")->required();
    cmd->add_option("--format", o.format, "html, pdf, csv or json (default: from the output's suffix)");
    cmd->add_option("--gpu", o.gpus, "GPU ids or names, or all (default); repeat or separate with commas")
        ->delimiter(',');
    cmd->add_option("--batch,-b", o.batch, "per-GPU batch size, or auto (default): chosen per GPU (docs/report.md)");
    cmd->add_option(
           "--precision", o.precisions,
           "precisions to consider: fp32, fp32-strict, tf32, amp-fp16, amp-bf16, bf16-params, fp16-params, fp8, "
           "or all (default: every precision each GPU supports but fp32-strict and the 16-bit models, "
           "bf16-params and fp16-params, which a training loop must be written for); repeat or separate with commas; "
           "for a "
           "trace one of as-recorded (default), fp32, tf32 or fp32-strict")
        ->delimiter(',');
    addScenarioOptions(*cmd, o.scenario);
    cmd->add_option("--epochs", o.epochs, "epochs in the training goal (default 1)")->check(CLI::Range(1e-6, 1e9));
    cmd->add_option("--dataset-samples", o.datasetSamples,
                    "samples per epoch (default 1281167, ImageNet-1k's training set)")
        ->check(CLI::Range(1.0, 1e15));
    cmd->add_option("--tokens", o.tokens,
                    "a training goal in tokens, for a sequence model (a language model's default: 20 tokens per "
                    "parameter, Chinchilla's compute-optimal ratio)")
        ->check(CLI::Range(1.0, 1e18));
    cmd->add_option("--gpu-db", o.gpuDbFiles, "extra GPU file(s) applied after the built-in database")
        ->check(CLI::ExistingFile);
    return cmd;
}

namespace {

// The report of a PyTorch profiler trace: the options that need a model refused by name, then
// every GPU asked for predicted from the trace and costed (predictors/choice/trace_choice.h).
int runTraceReport(const ReportOptions& o, const std::string& format) {
    refuseModelOptionsForTrace(o.scenario);
    const std::string noGoal =
        "a trace's cost is per 1,000 of its steps: a goal in samples needs the model's "
        "samples per step (use the model or its profile)";
    if (o.epochs > 0) throw ModelError("--epochs", noGoal);
    if (o.datasetSamples > 0) throw ModelError("--dataset-samples", noGoal);
    if (o.tokens > 0) throw ModelError("--tokens", noGoal);
    if (o.precisions.size() > 1)
        throw ModelError("--precision",
                         "a trace's report takes one precision (as-recorded, fp32, fp32-strict, tf32, "
                         "amp-fp16 or amp-bf16), not " +
                             std::to_string(o.precisions.size()));
    TraceChoiceOptions options;
    options.change = traceChangeFrom(o.precisions.empty() ? "" : o.precisions.front(), o.batch);
    const GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    options.priceSnapshot = db.priceSnapshot();
    options.amortisation = db.amortisation();
    const std::vector<const GpuSpec*> gpus = gpusFrom(o, db);
    const TraceInput in = loadTraceInput(o.model, db);
    const TraceChoice choice = chooseHardwareForTrace(in.trace, *in.origin, in.match, gpus, options);
    if (format == "csv")
        writeFileAtomically(o.output, traceChoiceCsv(choice));
    else if (format == "json")
        writeFileAtomically(o.output, traceChoiceJson(choice));
    else
        writeRendered(choice, format, o.output, o.format.empty() ? o.output : "--format");
    std::string line = std::to_string(choice.rows.size()) + (choice.rows.size() == 1 ? " GPU" : " GPUs") +
                       " ranked for the job recorded on " + choice.recordedGpuId;
    if (const TraceChoiceRow* c = choice.cheapest()) line += "; cheapest: " + c->gpuId;
    if (const TraceChoiceRow* f = choice.fastest()) line += "; fastest: " + f->gpuId;
    std::cout << "Wrote " << o.output << " (" << format << "): " << line << "\n";
    return 0;
}

}  // namespace

int runReport(const ReportOptions& o) {
    const std::string format = formatOf(o);
    if (isKinetoTraceFile(o.model)) return runTraceReport(o, format);
    HardwareChoiceOptions options = choiceOptionsFrom(o);
    const bool bf16Params = std::find(options.precisions.begin(), options.precisions.end(),
                                      TrainingPrecision::Bf16Params) != options.precisions.end();
    const bool modelIn16Bit = std::any_of(options.precisions.begin(), options.precisions.end(),
                                          [](TrainingPrecision p) { return isModelIn16Bit(p); });
    checkMasterWeights(o.scenario, bf16Params);
    const GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    options.priceSnapshot = db.priceSnapshot();
    options.amortisation = db.amortisation();
    const std::vector<const GpuSpec*> gpus = gpusFrom(o, db);
    const PredictionInput input = loadPredictionInput(o.model, db, o.scenario, modelIn16Bit);
    const HardwareChoice choice =
        chooseHardware(*input.predictor, gpus, baseFrom(o, input), goalFrom(o, input), options);
    if (format == "csv")
        writeFileAtomically(o.output, hardwareChoiceCsv(choice));
    else if (format == "json")
        writeFileAtomically(o.output, hardwareChoiceJson(choice));
    else
        writeRendered(choice, format, o.output, o.format.empty() ? o.output : "--format");
    std::cout << "Wrote " << o.output << " (" << format << "): " << summaryLine(choice) << "\n";
    return 0;
}

}  // namespace ts::cli
