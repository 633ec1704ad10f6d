#include "explorer_state.h"

#include "trainscope/predictors/choice/hardware_choice.h"

#include <QLocale>
#include <algorithm>
#include <cmath>

#include "trainscope/core/model_loader.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

// A user's GPU file that cannot be read must not keep the explorer from starting.
GpuDatabase loadDatabase() {
    try {
        return GpuDatabase::load();
    } catch (const std::exception& e) {
        qWarning("trainscope: GPU database: %s; using the built-in one", e.what());
        return GpuDatabase::builtin();
    }
}

// Batch sizes for the plot: every size up to 16, then about 12 points per doubling, up to `last`.
// A 6% grid and the report's candidate batch sizes (1, 2, 3, 4, 6, 8, 12, ...), so that the
// recommendation is one the report would make.
std::vector<int64_t> plotBatches(int64_t last) {
    std::vector<int64_t> batches = predictors::candidateBatches(last);
    for (double b = 1; b <= double(last); b = std::max(b + 1, b * 1.06)) batches.push_back(int64_t(b));
    batches.push_back(last);
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    return batches;
}

}  // namespace

ExplorerState::ExplorerState(QObject* parent) : QObject(parent), db_(loadDatabase()) {
    if (!db_.find(settings_.gpuId) && !db_.gpus().empty()) settings_.gpuId = db_.gpus().front().id;
}

ExplorerState::~ExplorerState() = default;

bool ExplorerState::openModel(const std::string& spec) {
    try {
        install(loadForExplorer(spec, db_));
        // On this thread (screenshots, tests): the predictions too, before the views are drawn.
        if (trace_)
            setTracePredictions(trace_.get(),
                                std::make_shared<const TracePredictions>(predictTraceOnEveryGpu(*trace_, db_)));
    } catch (const std::exception& e) {
        spec_ = spec;
        ++generation_;
        selectedOp_ = -1;
        predictor_.reset();
        profile_.reset();
        graph_.reset();
        trace_.reset();
        tracePredictions_.reset();
        error_ = QString::fromUtf8(e.what());
        Q_EMIT changed();
    }
    return hasModel() || hasTrace();
}

void ExplorerState::installTrace(std::shared_ptr<const TraceDocument> doc) {
    spec_ = doc->spec;
    ++generation_;
    selectedOp_ = -1;
    graph_.reset();
    predictor_.reset();
    profile_.reset();
    trace_ = std::move(doc);
    tracePredictions_.reset();
    // The controls show the trace's own batch size and precision (TraceRepredictor follows them).
    if (trace_->batch.batch > 0) settings_.batch = std::clamp<int64_t>(trace_->batch.batch, 1, kMaxBatch);
    settings_.precision = trace_->precision.precision;
    error_.clear();
    recompute();
    Q_EMIT changed();
}

void ExplorerState::setTracePredictions(const TraceDocument* forDoc,
                                        std::shared_ptr<const TracePredictions> predictions) {
    if (!trace_ || forDoc != trace_.get()) return;
    tracePredictions_ = std::move(predictions);
    Q_EMIT changed();
}

void ExplorerState::install(LoadedModel model) {
    if (model.trace) return installTrace(std::move(model.trace));
    spec_ = model.spec;
    ++generation_;
    selectedOp_ = -1;
    trace_.reset();
    tracePredictions_.reset();
    graph_ = std::move(model.graph);
    predictor_ = std::move(model.predictor);
    profile_ = std::move(model.profile);
    if (model.profilePrecision) settings_.precision = *model.profilePrecision;
    if (model.profileOptimizer) settings_.optimizer = *model.profileOptimizer;
    if (model.profileBatch > 0) settings_.batch = model.profileBatch;
    followMeasuredGpu();
    error_.clear();
    recompute();
    Q_EMIT changed();
}

void ExplorerState::useProfile(const Profile& profile) {
    if (!predictor_) return;
    predictor_->useProfile(profile, db_);
    profile_ = std::make_unique<Profile>(profile);
    followMeasuredGpu();
    recompute();
    Q_EMIT changed();
}

void ExplorerState::followMeasuredGpu() {
    // The measured GPU becomes the target, so the figures on screen are the measured ones.
    if (const GpuSpec* gpu = predictor_ ? predictor_->measuredGpu() : nullptr)
        if (db_.find(gpu->id)) settings_.gpuId = gpu->id;
}

void ExplorerState::applySettings(const ExplorerSettings& settings) {
    ExplorerSettings s = settings;
    s.batch = std::clamp<int64_t>(s.batch, 1, kMaxBatch);
    s.gpus = std::max(s.gpus, 1);
    if (!db_.find(s.gpuId)) s.gpuId = settings_.gpuId;
    settings_ = s;
    recompute();
    Q_EMIT changed();
}

void ExplorerState::reloadPrices() {
    db_.takePricesFrom(loadDatabase());
    Q_EMIT changed();
}

void ExplorerState::setBatch(int64_t batch) {
    batch = std::clamp<int64_t>(batch, 1, kMaxBatch);
    if (batch == settings_.batch) return;
    settings_.batch = batch;
    if (predictor_) {
        try {
            predictBatch();
        } catch (const std::exception&) {
            recompute();  // shows the reason as an unsupported prediction
        }
    }
    Q_EMIT changed();
}

void ExplorerState::setPrecision(TrainingPrecision p) {
    if (p == settings_.precision) return;
    settings_.precision = p;
    recompute();
    Q_EMIT changed();
}

void ExplorerState::setOptimizer(Optimizer o) {
    if (o == settings_.optimizer) return;
    settings_.optimizer = o;
    recompute();
    Q_EMIT changed();
}

void ExplorerState::setTargetGpu(const std::string& id) {
    if (id == settings_.gpuId || !db_.find(id)) return;
    settings_.gpuId = id;
    recompute();
    Q_EMIT changed();
}

void ExplorerState::setGpuCount(int gpus) {
    gpus = std::max(gpus, 1);
    if (gpus == settings_.gpus) return;
    settings_.gpus = gpus;
    recompute();
    Q_EMIT changed();
}

void ExplorerState::setInterconnect(InterconnectKind kind) {
    if (kind == settings_.interconnect) return;
    settings_.interconnect = kind;
    recompute();
    Q_EMIT changed();
}

void ExplorerState::setCheckpointing(bool on) {
    if (on == settings_.checkpointing) return;
    settings_.checkpointing = on;
    recompute();
    Q_EMIT changed();
}

void ExplorerState::setGoal(const TrainingGoal& goal) {
    if (goal.epochs == goal_.epochs && goal.datasetSamples == goal_.datasetSamples) return;
    goal_ = goal;
    Q_EMIT changed();  // costs are derived in the views from the predictions; nothing to recompute
}

void ExplorerState::setSelectedOp(int op) {
    if (!graph_ || op < 0 || size_t(op) >= graph_->ops.size()) op = -1;
    if (op == selectedOp_) return;
    selectedOp_ = op;
    Q_EMIT selectionChanged(op);
}

TrainingScenario ExplorerState::scenario() const {
    TrainingScenario s;
    s.batch = settings_.batch;
    s.precision = settings_.precision;
    s.optimizer = settings_.optimizer;
    s.dataParallel.gpus = settings_.gpus;
    s.dataParallel.interconnect = settings_.interconnect;
    s.checkpointing = settings_.checkpointing;
    return s;
}

void ExplorerState::recompute() {
    plan_.reset();
    if (!predictor_) return;
    // Runs from the controls' slots, where an exception must not escape: a scenario the predictor
    // rejects shows as an unsupported prediction with the reason.
    try {
        predictAll();
    } catch (const std::exception& e) {
        plan_.reset();
        current_ = TrainingPrediction{};
        current_.supported = false;
        current_.reason = e.what();
        allGpus_.clear();
        sweep_ = GpuSweep{};
        sweep_.supported = false;
        recommended_ = 0;
    }
}

// Everything but the batch size changed: every GPU predicted in full (where the figures come from,
// why a GPU is unsupported), and the sweep plan that later batch sizes reuse is prepared.
void ExplorerState::predictAll() {
    const TrainingScenario s = scenario();
    costs_ = computeCosts(*graph_, s.batch);
    const GpuSpec* target = targetGpu();
    allGpus_.clear();
    std::vector<const GpuSpec*> gpus;
    for (const GpuSpec& gpu : db_.gpus()) {
        gpus.push_back(&gpu);
        if (&gpu == target) {
            current_ = predictor_->predict(gpu, s, true);
            allGpus_.push_back(current_);
        } else {
            allGpus_.push_back(predictor_->predict(gpu, s, false));
        }
    }
    plan_ = std::make_unique<SweepPlan>(*predictor_, gpus, std::vector<TrainingPrecision>{s.precision}, s);
    plottedUpTo_ = 0;
    updateSweep();
}

// Only the batch size changed (the slider): the target's per-layer prediction, the model's costs
// at this batch, and every GPU's headline figures from the prepared plan (microseconds per GPU).
// The plot's sweep is reused unless the batch moved past its end.
void ExplorerState::predictBatch() {
    if (!plan_) return predictAll();
    const TrainingScenario s = scenario();
    costs_ = computeCosts(*graph_, s.batch);
    if (const GpuSpec* target = targetGpu()) current_ = predictor_->predict(*target, s, true);
    const std::vector<GpuSweep> now = plan_->evaluate({s.batch});
    for (size_t i = 0; i < now.size() && i < allGpus_.size(); ++i) {
        TrainingPrediction& p = allGpus_[i];
        if (p.gpuId == current_.gpuId) {
            p = current_;
            continue;
        }
        p.scenario = s;
        if (!now[i].supported || !p.supported || now[i].points.empty()) continue;
        const SweepPoint& point = now[i].points.front();
        p.iterationMs = point.iterationMs;
        p.samplesPerS = point.samplesPerS;
        p.peakMemoryBytes = point.peakMemoryBytes;
        p.fits = point.fits;
        p.maxBatch = now[i].maxBatch;
        p.layers.clear();  // per layer only for the target GPU
    }
    updateSweep();
}

// The target's throughput and memory over batch sizes, up to twice the current batch (and twice the
// largest that fits); recomputed only when that end moves beyond what was plotted.
void ExplorerState::updateSweep() {
    const GpuSpec* target = targetGpu();
    if (!target || !plan_) {
        sweep_ = GpuSweep{};
        recommended_ = 0;
        return;
    }
    const int64_t batch = settings_.batch;
    const int64_t fitting = current_.supported ? int64_t(current_.maxBatch.high) : 0;
    const int64_t last = std::clamp<int64_t>(std::max({int64_t(64), 2 * fitting, 2 * batch}), 1, kMaxBatch);
    if (plottedUpTo_ > 0 && last <= plottedUpTo_ && 4 * last > plottedUpTo_) return;
    const std::vector<int64_t> batches = plotBatches(last);
    std::vector<GpuSweep> sweeps =
        SweepPlan(*predictor_, {target}, {settings_.precision}, scenario()).evaluate(batches);
    sweep_ = sweeps.empty() ? GpuSweep{} : std::move(sweeps.front());
    plottedUpTo_ = last;
    recommended_ = sweep_.supported ? predictors::recommendBatch(sweep_, 0.03, predictors::candidateBatches(last)).batch : 0;
}

QString formatInterval(const Interval& v, int decimals, const QString& unit) {
    QLocale locale;
    const QString value = locale.toString(v.value, 'f', decimals);
    if (v.low == v.high) return value + unit;
    return QString("%1%2 (%3 – %4)")
        .arg(value, unit, locale.toString(v.low, 'f', decimals), locale.toString(v.high, 'f', decimals));
}

// GiB throughout the explorer, as the GPU's capacity is sold ("80 GB" is 80 GiB) and as the report
// and PyTorch's memory summaries count.
QString formatBytes(double bytes) {
    return QLocale().toString(bytes / kGiB, 'f', 2) + " GiB";
}

QString gpuLabel(const GpuSpec& gpu) {
    return QString::fromStdString(gpu.name) + " (" + QString::fromStdString(gpu.id) + ")";
}

}  // namespace ts::gui
