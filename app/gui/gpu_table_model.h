#pragma once
// Every GPU of the database at the current settings: one row each, with the predicted iteration
// time, throughput, largest batch, whether the batch fits, the GPU's price and what the training
// goal costs there (predictors::trainingCost, so that every view and the report agree), and whether
// the precision is supported. DisplayRole is text; SortRole the number behind it, which the sorting
// proxy uses (figures that do not apply sort last). A language model's throughput and cost are per
// token. It reads the snapshot it was last refreshed with, never the state's newer one.
#include <QAbstractTableModel>
#include <memory>

#include "trainscope/predictors/choice/training_cost.h"

namespace ts::gui {

class ExplorerState;
struct PredictionSnapshot;

class GpuTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Gpu,
        IterationMs,
        SamplesPerS,
        MaxBatch,
        Fits,
        UsdPerGpuHour,
        UsdPerMillionSamples,
        HoursToTrain,
        UsdToTrain,
        Supported,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int GpuIdRole = Qt::UserRole + 1;

    explicit GpuTableModel(ExplorerState& state, QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Takes the state's published snapshot: rows stay (one per GPU), values change.
    void refresh();
    const std::shared_ptr<const PredictionSnapshot>& snapshot() const { return snapshot_; }

    // The cost of the goal on row's GPU, as the cost columns show it.
    predictors::TrainingCost costOf(int row) const;
    // Whether the row's cost figures apply: supported, fits and has a throughput.
    bool costApplies(int row) const;

private:
    ExplorerState& state_;
    std::shared_ptr<const PredictionSnapshot> snapshot_;  // what the rows show
    int rows_ = 0;
};

}  // namespace ts::gui
