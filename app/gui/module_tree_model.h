#pragma once
// The model's module tree (ts::computeCosts(...).modules) with the operations of each module as
// leaves: parameters, forward FLOPs, activation bytes saved for backward, and the predicted
// forward and backward time on the target GPU (summed over a module's operations).
#include <QAbstractItemModel>
#include <vector>

namespace ts::gui {

class ExplorerState;

class ModuleTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Name, Parameters, ForwardGflop, ActivationMb, ForwardMs, BackwardMs, ColumnCount };

    explicit ModuleTreeModel(ExplorerState& state, QObject* parent = nullptr);
    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Rebuilds the tree when the model changed, otherwise updates the figures in place.
    void refresh();

private:
    struct Node {
        int parent = -1;  // node index; -1 for the root module
        int row = 0;      // row under its parent
        std::vector<int> children;
        int module = -1;  // index into costs().modules, or
        int layer = -1;   // index into costs().layers (an operation)
        double forwardMs = 0, backwardMs = 0;
        bool timed = false;
    };
    void rebuild();
    void updateTimes();
    double sumTimes(int node);

    ExplorerState& state_;
    std::vector<Node> nodes_;  // nodes_[0] is the model when there is one
    int generation_ = -1;      // of the model the tree was built for
};

}  // namespace ts::gui
