#include "explorer_state.h"

#include <QEventLoop>
#include <QLocale>
#include <algorithm>
#include <cmath>

#include "background_job.h"
#include "trainscope/predictors/iteration/operation_times.h"

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

std::shared_ptr<const PredictionSnapshot> withGoal(const PredictionSnapshot& s, const TrainingGoal& goal) {
    auto copy = std::make_shared<PredictionSnapshot>(s);
    copy->goal = goal;
    return copy;
}

bool sameGoal(const TrainingGoal& a, const TrainingGoal& b) {
    return a.epochs == b.epochs && a.datasetSamples == b.datasetSamples && a.tokens == b.tokens;
}

// At least `gpus`, in whole tensor-parallel groups of `group`.
int wholeGroups(int gpus, int group) {
    group = std::max(group, 1);
    return std::max(group, (gpus + group - 1) / group * group);
}

// The GPUs of one group: tensor- or expert-parallel (a model is split one way or the other).
int groupOf(const ExplorerSettings& s) {
    return std::max(1, s.tensorParallel) * std::max(1, s.expertParallel);
}

}  // namespace

ExplorerState::ExplorerState(QObject* parent)
    : QObject(parent), db_(std::make_shared<const GpuDatabase>(loadDatabase())) {
    if (!db_->find(settings_.gpuId) && !db_->gpus().empty()) settings_.gpuId = db_->gpus().front().id;
    published_ = emptySnapshot(db_, settings_, goal_, "");
}

ExplorerState::~ExplorerState() {
    // The jobs are children: their destructors wait for their threads. Cancel first so they stop soon.
    delete waiting_;
    waiting_ = nullptr;
    if (running_) running_->cancel();
}

bool ExplorerState::openModel(const std::string& spec) {
    try {
        install(loadForExplorer(spec, *db_));
        // On this thread (screenshots, tests): the predictions too, before the views are drawn.
        if (trace_)
            setTracePredictions(trace_.get(),
                                std::make_shared<const TracePredictions>(predictTraceOnEveryGpu(*trace_, *db_)));
        waitForPredictions();
    } catch (const std::exception& e) {
        spec_ = spec;
        dropModel(QString::fromUtf8(e.what()));
    }
    return hasModel() || hasTrace();
}

void ExplorerState::dropModel(const QString& error) {
    cancelPredictions();
    model_.reset();
    trace_.reset();
    tracePredictions_.reset();
    error_ = error;
    selectedOp_ = -1;
    published_ = emptySnapshot(db_, settings_, goal_, error.toStdString());
    Q_EMIT settingsChanged();
    Q_EMIT changed();
}

void ExplorerState::installTrace(std::shared_ptr<const TraceDocument> doc) {
    cancelPredictions();
    spec_ = doc->spec;
    model_.reset();
    trace_ = std::move(doc);
    tracePredictions_.reset();
    // The controls show the trace's own batch size and precision (TraceRepredictor follows them).
    if (trace_->batch.batch > 0) settings_.batch = std::clamp<int64_t>(trace_->batch.batch, 1, kMaxBatch);
    settings_.precision = trace_->precision.precision;
    error_.clear();
    selectedOp_ = -1;
    published_ = emptySnapshot(db_, settings_, goal_, "");
    Q_EMIT settingsChanged();
    Q_EMIT changed();
}

void ExplorerState::setTracePredictions(const TraceDocument* forDoc,
                                        std::shared_ptr<const TracePredictions> predictions) {
    if (!trace_ || forDoc != trace_.get()) return;
    tracePredictions_ = std::move(predictions);
    Q_EMIT changed();
}

void ExplorerState::install(LoadedModel loaded) {
    if (loaded.trace) return installTrace(std::move(loaded.trace));
    auto m = std::make_shared<ExplorerModel>();
    m->spec = loaded.spec;
    m->generation = ++generations_;
    profileUpdates_ = 0;
    m->graph = std::shared_ptr<const Graph>(std::move(loaded.graph));
    m->profile = std::shared_ptr<const Profile>(std::move(loaded.profile));
    m->defaults = scenarioDefaultsFor(*m->graph);
    const TrainingPredictor& predictor = *loaded.predictor;
    m->seq = predictor.analysis().sequenceModel ? predictor.analysis().seq : 0;
    m->predictor = std::shared_ptr<const TrainingPredictor>(std::move(loaded.predictor));
    model_ = m;
    settings_.seq = 0;  // the model's own length
    settings_.loraRank = 0;  // every parameter trains
    settings_.loraDropout = 0;
    // The model as opened: a shard where its spec says so, with whole groups of GPUs.
    settings_.tensorParallel = predictor.analysis().tensorParallel;
    settings_.sequenceParallel = predictor.analysis().sequenceParallel;
    settings_.expertParallel = predictor.analysis().expertParallel;
    settings_.gpus = wholeGroups(settings_.gpus, groupOf(settings_));
    applyKindChoices();
    if (loaded.profilePrecision) settings_.precision = *loaded.profilePrecision;
    if (loaded.profileOptimizer) settings_.optimizer = *loaded.profileOptimizer;
    if (loaded.profileBatch > 0) settings_.batch = std::clamp<int64_t>(loaded.profileBatch, 1, kMaxBatch);
    followMeasuredGpu(*m->predictor);
    error_.clear();
    Q_EMIT settingsChanged();
    requestPredictions();
}

int64_t kindDefaultBatch(ModelKind kind, const std::string& spec, int64_t specBatch) {
    const size_t query = spec.find('?');
    if (query != std::string::npos && (spec.find("?batch=", query) != std::string::npos ||
                                       spec.find("&batch=", query) != std::string::npos))
        return specBatch;
    return kind == ModelKind::Language ? 8 : 32;
}

void ExplorerState::applyKindChoices() {
    if (!model_) return;
    const ModelKind kindOf = model_->defaults.kind;
    const size_t kind = size_t(kindOf);
    settings_.optimizer = choices_.optimizer[kind].value_or(model_->defaults.optimizer);
    goal_ = choices_.goal[kind].value_or(model_->defaults.goal);
    settings_.precision = choices_.precision[kind].value_or(defaultPrecisionFor(kindOf, db_->find(settings_.gpuId)));
    settings_.batch = std::clamp<int64_t>(
        choices_.batch[kind].value_or(kindDefaultBatch(kindOf, model_->spec, model_->graph->defaults.batch)), 1,
        kMaxBatch);
}

void ExplorerState::useProfile(const Profile& profile) {
    if (!model_) return;
    // A new analysis of the model with the measurements: off the GUI thread, with the predictions.
    auto m = std::make_shared<ExplorerModel>(*model_);
    m->profile = std::make_shared<const Profile>(profile);
    m->predictor.reset();  // made by the job (makeExplorerModel)
    model_ = m;
    ++profileUpdates_;
    // The measured GPU becomes the target (as the predictor will find it), so the figures on screen
    // are the measured ones.
    if (profile.environment.gpu)
        if (const GpuSpec* gpu = db_->matchDevice(profile.environment.gpu->name)) settings_.gpuId = gpu->id;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::followMeasuredGpu(const TrainingPredictor& predictor) {
    // The measured GPU becomes the target, so the figures on screen are the measured ones.
    if (const GpuSpec* gpu = predictor.measuredGpu())
        if (db_->find(gpu->id)) settings_.gpuId = gpu->id;
}

void ExplorerState::applySettings(const ExplorerSettings& settings) {
    ExplorerSettings s = settings;
    s.batch = std::clamp<int64_t>(s.batch, 1, kMaxBatch);
    s.tensorParallel = settings_.tensorParallel;  // the open model's shard
    s.sequenceParallel = settings_.sequenceParallel;
    s.expertParallel = settings_.expertParallel;
    s.gpus = wholeGroups(std::max(s.gpus, 1), groupOf(s));
    s.seq = std::max<int64_t>(s.seq, 0);
    if (!db_->find(s.gpuId)) s.gpuId = settings_.gpuId;
    settings_ = s;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::reloadPrices() {
    GpuDatabase db = *db_;
    db.takePricesFrom(loadDatabase());
    db_ = std::make_shared<const GpuDatabase>(std::move(db));
    if (model_)
        requestPredictions();
    else
        publish(emptySnapshot(db_, settings_, goal_, published_->error));
}

void ExplorerState::setBatch(int64_t batch) {
    batch = std::clamp<int64_t>(batch, 1, kMaxBatch);
    if (batch == settings_.batch) return;
    settings_.batch = batch;
    if (model_) choices_.batch[size_t(model_->defaults.kind)] = batch;
    Q_EMIT settingsChanged();
    // At once from the published snapshot's plans; a job still running takes the batch when it ends.
    if (auto moved = published_->hasModel() ? atBatch(*published_, batch) : nullptr)
        publish(std::move(moved));
    else if (!running_)
        requestPredictions();
}

void ExplorerState::setPrecision(TrainingPrecision p) {
    if (p == settings_.precision) return;
    settings_.precision = p;
    if (model_) choices_.precision[size_t(model_->defaults.kind)] = p;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setOptimizer(Optimizer o) {
    if (o == settings_.optimizer) return;
    settings_.optimizer = o;
    if (model_) choices_.optimizer[size_t(model_->defaults.kind)] = o;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setTargetGpu(const std::string& id) {
    if (id == settings_.gpuId || !db_->find(id)) return;
    settings_.gpuId = id;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setGpuCount(int gpus) {
    gpus = wholeGroups(std::max(gpus, 1), groupOf(settings_));
    if (gpus == settings_.gpus) return;
    settings_.gpus = gpus;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setInterconnect(InterconnectKind kind) {
    if (kind == settings_.interconnect) return;
    settings_.interconnect = kind;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setCheckpointing(Checkpointing c) {
    if (c == settings_.checkpointing) return;
    settings_.checkpointing = c;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setZeroStage(int stage) {
    stage = std::clamp(stage, 0, 3);
    if (stage == settings_.zeroStage) return;
    settings_.zeroStage = stage;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setAccumulation(int64_t microBatches) {
    microBatches = std::clamp<int64_t>(microBatches, 1, 1024);
    if (microBatches == settings_.accumulation) return;
    settings_.accumulation = microBatches;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setOptimizerImplementation(OptimizerImplementation implementation) {
    if (implementation == settings_.optimizerImplementation) return;
    settings_.optimizerImplementation = implementation;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setChannelsLast(bool channelsLast) {
    if (channelsLast == settings_.channelsLast) return;
    settings_.channelsLast = channelsLast;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setMasterWeights(bool masterWeights) {
    if (masterWeights == settings_.masterWeights) return;
    settings_.masterWeights = masterWeights;
    Q_EMIT settingsChanged();
    requestPredictions();
}

bool ExplorerState::modelHasConvolutions() const {
    if (!model_ || !model_->graph) return false;
    const auto& ops = model_->graph->ops;
    return std::any_of(ops.begin(), ops.end(), [](const auto& op) { return op.type == "Conv" || op.type == "ConvTranspose"; });
}

bool ExplorerState::modelShardable() const {
    return model_ && model_->graph && !model_->profile &&
           (model_->baseGraph ? model_->baseGraph : model_->graph)->format == "huggingface";
}

void ExplorerState::setTensorParallel(int gpus) {
    gpus = std::clamp(gpus, 1, 64);
    if (gpus == settings_.tensorParallel || !modelShardable()) return;
    settings_.tensorParallel = gpus;
    settings_.sequenceParallel &= gpus > 1;  // nothing to split the sequence over
    if (gpus > 1) settings_.expertParallel = 1;  // experts split both ways are not modelled
    settings_.gpus = wholeGroups(settings_.gpus, groupOf(settings_));
    Q_EMIT settingsChanged();
    requestPredictions();
}

bool ExplorerState::modelHasExperts() const {
    if (!modelShardable()) return false;
    const auto& ops = (model_->baseGraph ? model_->baseGraph : model_->graph)->ops;
    return std::any_of(ops.begin(), ops.end(), [](const auto& op) { return op.type == "MixtureOfExperts"; });
}

void ExplorerState::setExpertParallel(int gpus) {
    gpus = std::clamp(gpus, 1, 64);
    if (gpus == settings_.expertParallel || !modelHasExperts()) return;
    settings_.expertParallel = gpus;
    if (gpus > 1) settings_.tensorParallel = 1, settings_.sequenceParallel = false;
    settings_.gpus = wholeGroups(settings_.gpus, groupOf(settings_));
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setSequenceParallel(bool on) {
    on &= settings_.tensorParallel > 1;
    if (on == settings_.sequenceParallel || !modelShardable()) return;
    settings_.sequenceParallel = on;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setLoraRank(int64_t rank) {
    rank = std::clamp<int64_t>(rank, 0, 4096);
    if (rank == settings_.loraRank || !model_) return;
    settings_.loraRank = rank;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setLoraDropout(double p) {
    p = std::clamp(p, 0.0, kMaxLoraDropout);
    if (p == settings_.loraDropout || !model_) return;
    settings_.loraDropout = p;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setSequenceLength(int64_t seq) {
    seq = std::max<int64_t>(seq, 0);
    if (seq == settings_.seq || (model_ && model_->seq == 0)) return;
    settings_.seq = seq;
    Q_EMIT settingsChanged();
    requestPredictions();
}

void ExplorerState::setGoal(const TrainingGoal& goal) {
    if (sameGoal(goal, goal_)) return;
    goal_ = goal;
    if (model_) choices_.goal[size_t(model_->defaults.kind)] = goal;
    Q_EMIT settingsChanged();
    // Costs are derived in the views from the predictions: nothing to predict.
    publish(withGoal(*published_, goal));
}

ModelKind ExplorerState::modelKind() const {
    return model_ ? model_->defaults.kind : ModelKind::Other;
}

void ExplorerState::setModelChoices(const ModelChoices& choices) {
    choices_ = choices;
    if (!model_) return;
    const ExplorerSettings before = settings_;
    const TrainingGoal goal = goal_;
    applyKindChoices();
    if (!sameGoal(goal, goal_)) publish(withGoal(*published_, goal_));
    Q_EMIT settingsChanged();
    if (before.optimizer != settings_.optimizer || before.precision != settings_.precision ||
        before.batch != settings_.batch)
        requestPredictions();
}

void ExplorerState::setSelectedOp(int op) {
    const Graph* g = published_->graph();
    if (!g || op < 0 || size_t(op) >= g->ops.size()) op = -1;
    if (op == selectedOp_) return;
    selectedOp_ = op;
    Q_EMIT selectionChanged(op);
}

void ExplorerState::cancelPredictions() {
    ++requests_;  // a running prediction's result is of a model no longer shown: dropped
    if (running_) running_->cancel();
    delete waiting_;
    waiting_ = nullptr;
}

void ExplorerState::requestPredictions() {
    if (!model_) {
        // Nothing to predict (a trace, or no model): the settings are published as they are.
        publish(emptySnapshot(db_, settings_, goal_, published_->error));
        return;
    }
    const uint64_t request = ++requests_;
    auto result = std::make_shared<std::shared_ptr<const PredictionSnapshot>>();
    auto model = model_;
    auto db = db_;
    const ExplorerSettings settings = settings_;
    const TrainingGoal goal = goal_;
    // A profile just recorded: the model is analysed again with it (makeExplorerModel).
    const bool withNewProfile = !model->predictor;
    auto* job = new BackgroundJob(tr("Predicting"), [=](JobContext& context) {
        auto m = model;
        if (withNewProfile)
            m = makeExplorerModel(m->spec, m->generation, m->graph, m->profile, m->seq, *db, m->baseGraph, m->lora);
        if (!context.cancelled()) *result = predictSnapshot(m, db, settings, goal, context.cancelFlag());
    });
    job->setParent(this);
    connect(job, &BackgroundJob::finished, this,
            [this, job, request, result, withNewProfile](bool, const QString& error) {
                std::shared_ptr<const PredictionSnapshot> snapshot = *result;
                if (!snapshot && !error.isEmpty() && request == requests_ && model_)
                    snapshot = emptySnapshot(db_, settings_, goal_, error.toStdString());
                const bool rejected = withNewProfile && request == requests_ && snapshot && snapshot->model &&
                                      !snapshot->model->profileProblem.empty();
                jobEnded(job, request, std::move(snapshot));
                if (rejected) Q_EMIT profileRejected(QString::fromStdString(model_->profileProblem));
            });
    startJob(job);
}

void ExplorerState::startJob(BackgroundJob* job) {
    if (running_) {
        // One job at a time: the running one is told to stop and this one waits for it; a job
        // that was waiting is superseded before it started.
        running_->cancel();
        delete waiting_;
        waiting_ = job;
        return;
    }
    running_ = job;
    Q_EMIT predictingChanged(true);
    job->start();
}

void ExplorerState::jobEnded(BackgroundJob* job, uint64_t request, std::shared_ptr<const PredictionSnapshot> result) {
    job->deleteLater();
    if (running_ == job) running_ = nullptr;
    // Only the latest request's result is shown; an older one is dropped.
    if (request == requests_ && result) {
        // The job's analysis (another length, a new profile) is the model's from now on.
        if (result->model && model_ && result->model->generation == model_->generation) model_ = result->model;
        // The batch size and the goal may have moved on while it was predicted.
        if (result->hasModel() && result->settings.batch != settings_.batch)
            if (auto moved = atBatch(*result, settings_.batch)) result = std::move(moved);
        if (!sameGoal(result->goal, goal_)) result = withGoal(*result, goal_);
        publish(std::move(result));
    }
    if (waiting_) {
        running_ = waiting_;
        waiting_ = nullptr;
        running_->start();
    } else if (!running_) {
        Q_EMIT predictingChanged(false);
    }
}

void ExplorerState::publish(std::shared_ptr<const PredictionSnapshot> snapshot) {
    const bool newModel =
        snapshot->model && (!published_->model || published_->model->generation != snapshot->model->generation);
    published_ = std::move(snapshot);
    if (newModel) {
        spec_ = published_->model->spec;
        selectedOp_ = -1;
        trace_.reset();  // a model opened over a trace replaces it once its predictions are ready
        tracePredictions_.reset();
        Q_EMIT settingsChanged();  // the controls follow the model (its length, no trace)
    }
    Q_EMIT changed();
}

void ExplorerState::waitForPredictions() {
    if (!running_) return;
    QEventLoop loop;
    const QMetaObject::Connection c = connect(this, &ExplorerState::predictingChanged, &loop, [&loop](bool busy) {
        if (!busy) loop.quit();
    });
    loop.exec();
    disconnect(c);
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
