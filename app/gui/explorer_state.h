#pragma once
// What every view of the explorer follows: the open model, the settings the controls set (batch,
// precision, optimizer, target GPU, number of GPUs, sequence length) and the predictions at those
// settings, published as immutable snapshots (prediction_snapshot.h). A change of the batch size
// alone is answered at once from the published snapshot's prepared plans (microseconds per GPU);
// every other change is predicted on a worker thread while the views keep showing the last
// snapshot, one job at a time: a newer request cancels the running one, whose result is dropped.
// Views and item models read a snapshot only and repaint on changed(); the controls write the
// settings. Plain C++ types from core/ and predictors/ only (no LibTorch), so this header is safe
// next to Qt's keywords.
#include <QObject>
#include <QString>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model_loading.h"
#include "prediction_snapshot.h"

namespace ts::gui {

class BackgroundJob;

// The optimizer, training goal, precision and batch size the user chose for each kind of model
// (model_defaults.h), remembered between models and sessions, so that a language model does not
// open at the batch and precision last used on an image classifier; a kind without a choice opens
// with its defaults (predictors::defaultPrecisionFor, kindDefaultBatch).
struct ModelChoices {
    std::array<std::optional<predictors::Optimizer>, 3> optimizer;  // by ModelKind
    std::array<std::optional<predictors::TrainingGoal>, 3> goal;
    std::array<std::optional<predictors::TrainingPrecision>, 3> precision;
    std::array<std::optional<int64_t>, 3> batch;
};

// A language model at batch 8 (fine-tuning's micro-batches), others at 32; a batch in the model's
// spec (?batch=N) wins.
int64_t kindDefaultBatch(predictors::ModelKind kind, const std::string& spec, int64_t specBatch);

class ExplorerState : public QObject {
    Q_OBJECT
public:
    explicit ExplorerState(QObject* parent = nullptr);
    ~ExplorerState() override;  // cancels a running prediction and waits for its thread

    // Opens a model (file, zoo:NAME, a profile file or a trace) on this thread and waits for its
    // predictions (screenshots, tests, the report without a display). On failure the previous
    // model is dropped, error() says why and false comes back; the views then show the error.
    bool openModel(const std::string& spec);
    // Shows a model loaded elsewhere (loadForExplorer on a worker thread) once its first snapshot
    // is predicted, on a worker too; the open model (or trace) stays on screen until then. A
    // profile's precision, optimizer and largest measured batch become the settings, so that the
    // first figures are the measured ones; otherwise the model's kind's optimizer and goal apply.
    void install(LoadedModel model);
    // Measured results of the open model arrived (a profile recorded here): predictions start from
    // them from now on, predicted off the GUI thread. A profile that does not fit the model is
    // reported through profileRejected() and the calibration stays.
    void useProfile(const Profile& profile);
    // Every setting at once (restored from the last session): one prediction.
    void applySettings(const ExplorerSettings& settings);

    // The predictions every view shows now; never null. Views and item models keep the one they
    // drew from, so that what they show stays one generation's.
    std::shared_ptr<const PredictionSnapshot> snapshot() const { return published_; }
    // A prediction job runs or waits: the published snapshot is not yet of settings().
    bool predicting() const { return running_ != nullptr; }
    // Runs the event loop until no prediction job runs (screenshots, tests, the benchmark).
    void waitForPredictions();

    // Of the published snapshot (for the window and tests; views hold a snapshot instead).
    bool hasModel() const { return published_->hasModel(); }
    const Graph* graph() const { return published_->graph(); }
    const predictors::TrainingPredictor* predictor() const { return published_->predictor(); }
    const Profile* profile() const { return published_->model ? published_->model->profile.get() : nullptr; }
    const std::string& modelSpec() const { return spec_; }
    int modelGeneration() const { return published_->model ? published_->model->generation : -1; }
    // Measured profiles taken since the model opened (useProfile: each batch size as it is measured,
    // then the whole); their predictions may be superseded before they are published.
    int profileUpdates() const { return profileUpdates_; }
    const predictors::TrainingPrediction& current() const { return published_->current; }
    const std::vector<predictors::TrainingPrediction>& allGpus() const { return published_->allGpus; }
    const predictors::GpuSweep& batchSweep() const { return published_->sweep; }
    int64_t recommendedBatch() const { return published_->recommendedBatch; }
    const ModelCosts& costs() const { return published_->costs; }
    const GpuSpec* targetGpu() const { return db_->find(settings_.gpuId); }
    const QString& error() const { return error_; }

    // A PyTorch profiler trace is open instead of a model (hasModel() is then false): the views
    // show its measured steps, operators and kernels, and its predictions on other GPUs.
    bool hasTrace() const { return trace_ != nullptr; }
    const TraceDocument* trace() const { return trace_.get(); }
    std::shared_ptr<const TraceDocument> traceDocument() const { return trace_; }
    // Shows a trace read elsewhere (traceOpeningWork); its predictions follow separately.
    void installTrace(std::shared_ptr<const TraceDocument> doc);
    // The open trace's predictions on other GPUs, as far as they are ready; null before any.
    // Ignored unless `forDoc` is the open trace (a late result of a trace since closed).
    void setTracePredictions(const TraceDocument* forDoc, std::shared_ptr<const TracePredictions> predictions);
    const TracePredictions* tracePredictions() const { return tracePredictions_.get(); }

    const GpuDatabase& database() const { return *db_; }
    // The user's GPU file changed (the Prices dialog wrote it): prices are read again and the
    // predictions made anew with them.
    void reloadPrices();

    // What the controls show: the settings asked for, which the published snapshot follows as
    // soon as its prediction is done.
    const ExplorerSettings& settings() const { return settings_; }
    // Setters emit settingsChanged() and predict when the value differs; the batch at once.
    void setBatch(int64_t batch);
    void setPrecision(predictors::TrainingPrecision p);
    void setOptimizer(predictors::Optimizer o);
    void setTargetGpu(const std::string& id);
    void setGpuCount(int gpus);
    void setInterconnect(predictors::InterconnectKind kind);
    void setCheckpointing(predictors::Checkpointing c);
    void setZeroStage(int stage);             // 0 (DDP) to 3 (FSDP full sharding)
    void setAccumulation(int64_t microBatches);  // 1 to 1024
    void setChannelsLast(bool channelsLast);
    void setMasterWeights(bool masterWeights);
    void setOptimizerImplementation(predictors::OptimizerImplementation implementation);
    // The open model has convolutions (the memory format matters only to them).
    bool modelHasConvolutions() const;
    void setLoraRank(int64_t rank);              // 0 (full fine-tuning) to 4096: another analysis
    void setLoraDropout(double p);               // PEFT's lora_dropout, 0 to kMaxLoraDropout: another analysis
    // The open model can be built as a tensor-parallel shard: a Hugging Face config.json, no profile.
    bool modelShardable() const;
    // 1 to 64 GPUs per group: another shard of the model, built off the GUI thread; the GPU count
    // moves up to a whole number of groups.
    void setTensorParallel(int gpus);
    // With a tensor-parallel group: sequence parallelism, another shard of the model.
    void setSequenceParallel(bool on);
    // The open model is shardable and has routed experts (a mixture of experts).
    bool modelHasExperts() const;
    // 1 to 64 GPUs per expert-parallel group (each holds its share of the routed experts): another
    // shard, built off the GUI thread; tensor parallelism goes back to 1 (splitting experts both ways
    // is not modelled), the GPU count up to whole groups. A model whose experts the degree does not
    // divide says so as the model's error.
    void setExpertParallel(int gpus);
    // Rebuilds the model's analysis at another sequence length off the GUI thread (a model
    // without one ignores it); 0 goes back to the model's own.
    void setSequenceLength(int64_t seq);
    // How much training the cost figures are for (GPUs view, report): published at once.
    void setGoal(const predictors::TrainingGoal& goal);
    const predictors::TrainingGoal& goal() const { return goal_; }
    // The sequence length of the model asked for (0: it has none); settings().seq 0 means this one.
    int64_t modelSequenceLength() const { return model_ ? model_->seq : 0; }
    // The kind of the open model (Other without one) and the user's choices per kind.
    predictors::ModelKind modelKind() const;
    const ModelChoices& modelChoices() const { return choices_; }
    // Restored choices; the open model takes its kind's.
    void setModelChoices(const ModelChoices& choices);

    // The layer selected in any view (graph operation index; -1 none). Every view highlights it.
    void setSelectedOp(int op);
    int selectedOp() const { return selectedOp_; }

    static constexpr int64_t kMaxBatch = kMaxExplorerBatch;
    static constexpr double kMaxLoraDropout = 0.9;  // the control's range; recipes use 0.05 to 0.1

Q_SIGNALS:
    void changed();          // a new snapshot is published
    // The settings asked for changed, or the model shown (its sequence length, a trace): the
    // controls follow.
    void settingsChanged();
    void predictingChanged(bool predicting);
    void selectionChanged(int op);
    // A measured profile could not be used (another model, another sequence length): the sentence.
    void profileRejected(const QString& reason);

private:
    void requestPredictions();  // everything but the batch changed: a job on the worker thread
    void cancelPredictions();   // the model is dropped: what runs or waits will not be shown
    void startJob(BackgroundJob* job);
    void jobEnded(BackgroundJob* job, uint64_t request, std::shared_ptr<const PredictionSnapshot> result);
    void publish(std::shared_ptr<const PredictionSnapshot> snapshot);
    void dropModel(const QString& error);
    void followMeasuredGpu(const predictors::TrainingPredictor& predictor);
    void applyKindChoices();

    std::shared_ptr<const GpuDatabase> db_;
    int profileUpdates_ = 0;
    ExplorerSettings settings_;
    predictors::TrainingGoal goal_;
    ModelChoices choices_;
    std::string spec_;
    int generations_ = 0;
    QString error_;
    std::shared_ptr<const ExplorerModel> model_;  // the model asked for (its predictor at some length)
    std::shared_ptr<const PredictionSnapshot> published_;
    std::shared_ptr<const TraceDocument> trace_;
    std::shared_ptr<const TracePredictions> tracePredictions_;
    // The prediction jobs: the running one and the one waiting for it to stop; the latest request.
    BackgroundJob* running_ = nullptr;
    BackgroundJob* waiting_ = nullptr;
    uint64_t requests_ = 0;
    int selectedOp_ = -1;
};

// Display helpers shared by the views.
QString formatInterval(const predictors::Interval& v, int decimals, const QString& unit);
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
QString formatBytes(double bytes);  // "12.34 GiB"
QString gpuLabel(const GpuSpec& gpu);

}  // namespace ts::gui
