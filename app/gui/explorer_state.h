#pragma once
// What every view of the explorer follows: the open model, the settings the controls set (batch,
// precision, optimizer, target GPU, number of GPUs) and the predictions at those settings. The
// views read it and repaint on changed(); the controls write it. Plain C++ types from core/ and
// predictors/ only (no LibTorch), so this header is safe next to Qt's keywords.
#include <QObject>
#include <QString>
#include <memory>
#include <string>
#include <vector>

#include "model_loading.h"
#include "trainscope/core/costs.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/graph.h"
#include "trainscope/core/profile.h"
#include "trainscope/predictors/choice/training_cost.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::gui {

struct ExplorerSettings {
    int64_t batch = 32;
    predictors::TrainingPrecision precision = predictors::TrainingPrecision::Fp32;
    predictors::Optimizer optimizer = predictors::Optimizer::Sgd;
    std::string gpuId = "a100-sxm4-80gb";
    int gpus = 1;
    predictors::InterconnectKind interconnect = predictors::InterconnectKind::NvLink;
    bool checkpointing = false;
};

class ExplorerState : public QObject {
    Q_OBJECT
public:
    explicit ExplorerState(QObject* parent = nullptr);
    ~ExplorerState() override;

    // Opens a model (file, zoo:NAME or a profile file) on this thread. On failure the previous
    // model is dropped, error() says why and false comes back; the views then show the error.
    bool openModel(const std::string& spec);
    // Shows a model loaded elsewhere (loadForExplorer on a worker thread). A profile's precision,
    // optimizer and largest measured batch become the settings, so the first figures are measured.
    void install(LoadedModel model);
    // Measured results of the open model arrived (a profile recorded here): predictions start from
    // them from now on. Throws ModelError when the profile is not of this model.
    void useProfile(const Profile& profile);
    // Every setting at once (restored from the last session): one recompute.
    void applySettings(const ExplorerSettings& settings);
    bool hasModel() const { return predictor_ != nullptr; }
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
    const QString& error() const { return error_; }
    const std::string& modelSpec() const { return spec_; }
    const Graph* graph() const { return graph_.get(); }
    int modelGeneration() const { return generation_; }  // changes whenever a model is opened

    const predictors::TrainingPredictor* predictor() const { return predictor_.get(); }
    // The measured profile the predictions start from, when one was opened or recorded (else null).
    // Its runs carry per-layer times and, on a GPU with CUPTI, each layer's kernels.
    const Profile* profile() const { return profile_.get(); }
    const GpuDatabase& database() const { return db_; }
    // The user's GPU file changed (the Prices dialog wrote it): prices are read again, in place.
    // Emits changed(); predictions do not depend on prices and stay.
    void reloadPrices();
    const GpuSpec* targetGpu() const { return db_.find(settings_.gpuId); }
    const ExplorerSettings& settings() const { return settings_; }

    // Setters recompute and emit changed() only when the value differs.
    void setBatch(int64_t batch);
    void setPrecision(predictors::TrainingPrecision p);
    void setOptimizer(predictors::Optimizer o);
    void setTargetGpu(const std::string& id);
    void setGpuCount(int gpus);
    void setInterconnect(predictors::InterconnectKind kind);
    void setCheckpointing(bool on);
    // How much training the cost figures are for (GPUs view, report). Emits changed().
    void setGoal(const predictors::TrainingGoal& goal);
    const predictors::TrainingGoal& goal() const { return goal_; }

    // The layer selected in any view (graph operation index; -1 none). Every view highlights it.
    void setSelectedOp(int op);
    int selectedOp() const { return selectedOp_; }

    // At the current settings (valid while hasModel()).
    const predictors::TrainingPrediction& current() const { return current_; }               // target GPU, per layer
    const std::vector<predictors::TrainingPrediction>& allGpus() const { return allGpus_; }  // db order
    const predictors::GpuSweep& batchSweep() const { return sweep_; }  // target GPU over batch sizes
    // The smallest of the report's candidate batch sizes within 3% of the best throughput that fits
    // the target (predictors' recommendBatch over the sweep, as the report chooses); 0: none fits.
    int64_t recommendedBatch() const { return recommended_; }
    const ModelCosts& costs() const { return costs_; }

    static constexpr int64_t kMaxBatch = 4096;

Q_SIGNALS:
    void changed();
    void selectionChanged(int op);

private:
    predictors::TrainingScenario scenario() const;
    void recompute();
    void followMeasuredGpu();
    void predictAll();    // throws what the predictor throws
    void predictBatch();  // the same, when only the batch size changed
    void updateSweep();

    GpuDatabase db_;
    ExplorerSettings settings_;
    std::string spec_;
    int generation_ = 0;
    QString error_;
    std::unique_ptr<Graph> graph_;
    std::unique_ptr<predictors::TrainingPredictor> predictor_;
    std::unique_ptr<Profile> profile_;
    std::shared_ptr<const TraceDocument> trace_;
    std::shared_ptr<const TracePredictions> tracePredictions_;
    predictors::TrainingPrediction current_;
    std::vector<predictors::TrainingPrediction> allGpus_;
    predictors::GpuSweep sweep_;
    std::unique_ptr<predictors::SweepPlan> plan_;  // every GPU at the current settings but the batch
    int64_t plottedUpTo_ = 0;                      // the sweep's last batch size
    int64_t recommended_ = 0;
    ModelCosts costs_;
    predictors::TrainingGoal goal_;
    int selectedOp_ = -1;
};

// Display helpers shared by the views.
QString formatInterval(const predictors::Interval& v, int decimals, const QString& unit);
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
QString formatBytes(double bytes);  // "12.34 GiB"
QString gpuLabel(const GpuSpec& gpu);

}  // namespace ts::gui
