#pragma once
// The model's module tree (ts::computeCosts(...).modules) with the operations of each module as
// leaves: output shape, parameters, predicted forward and backward time on the target GPU and
// their share of the iteration, activation memory saved for backward, FLOPs, what bounds the layer
// and tensor-core use. Modules sum their operations; their bound is the one holding most of their
// time and their tensor-core figure the share of their time on tensor cores.
// DisplayRole is text; SortRole the number behind it; OpRole the first graph operation of a row.
// It reads the snapshot it was last refreshed with, never the state's newer one.
#include <QAbstractItemModel>
#include <memory>
#include <vector>

#include "trainscope/predictors/iteration/layer_bounds.h"

namespace ts::gui {

class ExplorerState;
struct PredictionSnapshot;

class ModuleTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column {
        Name,
        OutputShape,
        Parameters,
        ForwardMs,
        BackwardMs,
        SharePercent,
        ActivationMb,
        Gflop,
        Bound,
        TensorCores,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int OpRole = Qt::UserRole + 1;

    explicit ModuleTreeModel(ExplorerState& state, QObject* parent = nullptr);
    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Takes the state's published snapshot. Rebuilds the tree when the model changed, otherwise
    // updates the figures in place and says so:
    // with a dataChanged per parent, or (TopLevelOnly) for the top row alone, for a view that
    // repaints and re-sorts itself (on a 1,000-layer model the per-parent signals cost a view more
    // than the repaint).
    enum class ChangeSignals { EveryParent, TopLevelOnly };
    void refresh(ChangeSignals notify = ChangeSignals::EveryParent);
    // The row of graph operation `op` (column 0); invalid when the tree has no such leaf.
    QModelIndex indexOfOp(int op) const;
    // What the rows show now.
    const std::shared_ptr<const PredictionSnapshot>& snapshot() const { return snapshot_; }

private:
    struct Node {
        int parent = -1;  // node index; -1 for the root module
        int row = 0;      // row under its parent
        std::vector<int> children;
        int module = -1;   // index into costs().modules, or
        int layer = -1;    // index into costs().layers (an operation)
        int firstOp = -1;  // first graph operation in the subtree
        double forwardMs = 0, backwardMs = 0;
        double boundMs[predictors::kPassBoundCount] = {};  // time by PassBound
        double tensorMs = 0;                               // time on tensor cores
        int tensorUse = 0;                                 // leaf: TensorCoreUse
        double savedBytes = 0;                             // kept for backward at the precision shown
        bool timed = false;
    };
    void rebuild();
    void updateTimes();
    void sumTimes(int node);
    int sumFirstOp(int node);
    QVariant display(const Node& node, int column, bool sortValue) const;

    ExplorerState& state_;
    std::shared_ptr<const PredictionSnapshot> snapshot_;  // what the rows show
    std::vector<Node> nodes_;                             // nodes_[0] is the model when there is one
    std::vector<int> opNode_;                             // graph op -> leaf node, -1 when none
    double iterationMs_ = 0;
};

}  // namespace ts::gui
