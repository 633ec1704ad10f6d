#include "module_tree_model.h"

#include <QLocale>
#include <unordered_map>

#include "explorer_state.h"

namespace ts::gui {

using namespace ts::predictors;

ModuleTreeModel::ModuleTreeModel(ExplorerState& state, QObject* parent) : QAbstractItemModel(parent), state_(state) {
    rebuild();
}

void ModuleTreeModel::rebuild() {
    nodes_.clear();
    generation_ = state_.modelGeneration();
    if (!state_.hasModel()) return;
    const ModelCosts& costs = state_.costs();
    // Modules are in pre-order, so a module's parent node exists before it.
    std::vector<int> moduleNode(costs.modules.size(), -1);
    for (size_t m = 0; m < costs.modules.size(); ++m) {
        Node node;
        node.module = int(m);
        const int parentModule = costs.modules[m].parent;
        node.parent = parentModule >= 0 ? moduleNode[size_t(parentModule)] : -1;
        if (m > 0 && node.parent < 0) continue;  // malformed tree: skip rather than crash
        moduleNode[m] = int(nodes_.size());
        if (node.parent >= 0) {
            node.row = int(nodes_[size_t(node.parent)].children.size());
            nodes_[size_t(node.parent)].children.push_back(moduleNode[m]);
        }
        nodes_.push_back(node);
    }
    // Operations after their module's submodules.
    for (size_t m = 0; m < costs.modules.size(); ++m) {
        const int parentNode = moduleNode[m];
        if (parentNode < 0) continue;
        for (int layer : costs.modules[m].layers) {
            if (layer < 0 || size_t(layer) >= costs.layers.size()) continue;
            Node node;
            node.layer = layer;
            node.parent = parentNode;
            node.row = int(nodes_[size_t(parentNode)].children.size());
            nodes_[size_t(parentNode)].children.push_back(int(nodes_.size()));
            nodes_.push_back(node);
        }
    }
    updateTimes();
}

void ModuleTreeModel::updateTimes() {
    if (nodes_.empty()) return;
    std::unordered_map<int, const LayerTime*> byOp;
    const TrainingPrediction& p = state_.current();
    if (p.supported)
        for (const LayerTime& t : p.layers) byOp[t.op] = &t;
    const ModelCosts& costs = state_.costs();
    for (Node& node : nodes_) {
        node.forwardMs = node.backwardMs = 0;
        node.timed = false;
        if (node.layer < 0) continue;
        auto it = byOp.find(costs.layers[size_t(node.layer)].op);
        if (it == byOp.end()) continue;
        node.forwardMs = it->second->forwardMs.value;
        node.backwardMs = it->second->backwardMs.value;
        node.timed = true;
    }
    sumTimes(0);
}

double ModuleTreeModel::sumTimes(int index) {
    Node& node = nodes_[size_t(index)];
    if (node.layer >= 0) return node.forwardMs + node.backwardMs;
    double forward = 0, backward = 0;
    bool timed = false;
    for (int child : node.children) {
        sumTimes(child);
        const Node& c = nodes_[size_t(child)];
        forward += c.forwardMs;
        backward += c.backwardMs;
        timed = timed || c.timed;
    }
    node.forwardMs = forward;
    node.backwardMs = backward;
    node.timed = timed;
    return forward + backward;
}

void ModuleTreeModel::refresh() {
    if (state_.modelGeneration() != generation_ || (state_.hasModel() && nodes_.empty())) {
        beginResetModel();
        rebuild();
        endResetModel();
        return;
    }
    updateTimes();
    if (nodes_.empty()) return;
    // Every figure may change with the settings: signal each parent's rows.
    for (size_t n = 0; n < nodes_.size(); ++n) {
        const Node& node = nodes_[n];
        if (node.children.empty()) continue;
        const QModelIndex parentIndex = createIndex(node.row, 0, quintptr(n));
        Q_EMIT dataChanged(index(0, 0, parentIndex),
                           index(int(node.children.size()) - 1, ColumnCount - 1, parentIndex));
    }
    Q_EMIT dataChanged(index(0, 0), index(0, ColumnCount - 1));
}

QModelIndex ModuleTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, quintptr(0));
    const Node& p = nodes_[size_t(parent.internalId())];
    return createIndex(row, column, quintptr(p.children[size_t(row)]));
}

QModelIndex ModuleTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const Node& node = nodes_[size_t(child.internalId())];
    if (node.parent < 0) return {};
    return createIndex(nodes_[size_t(node.parent)].row, 0, quintptr(node.parent));
}

int ModuleTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return nodes_.empty() ? 0 : 1;
    if (parent.column() != 0) return 0;
    return int(nodes_[size_t(parent.internalId())].children.size());
}

int ModuleTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant ModuleTreeModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !state_.hasModel()) return {};
    if (role == Qt::TextAlignmentRole && index.column() != Name)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    const Node& node = nodes_[size_t(index.internalId())];
    const ModelCosts& costs = state_.costs();
    const Graph& g = *state_.graph();
    QLocale locale;
    double parameters = 0, forwardFlops = 0, activationBytes = 0;
    QString name;
    if (node.module >= 0) {
        const ModuleCost& m = costs.modules[size_t(node.module)];
        name = QString::fromStdString(m.name.empty() ? g.name : m.name);
        parameters = double(m.parameters);
        forwardFlops = m.forwardFlops;
        activationBytes = m.activationBytes;
    } else {
        const LayerCost& l = costs.layers[size_t(node.layer)];
        const Operation& op = g.ops[size_t(l.op)];
        name = QString::fromStdString(op.name) + " [" + QString::fromStdString(op.type) + "]";
        parameters = double(l.parameters);
        forwardFlops = l.cost.forwardFlops;
        activationBytes = l.activationBytes;
    }
    switch (Column(index.column())) {
        case Name:
            return name;
        case Parameters:
            return locale.toString(qlonglong(parameters));
        case ForwardGflop:
            return locale.toString(forwardFlops / 1e9, 'f', 3);
        case ActivationMb:
            return locale.toString(activationBytes / 1e6, 'f', 2);
        case ForwardMs:
            return node.timed ? locale.toString(node.forwardMs, 'f', 3) : QString();
        case BackwardMs:
            return node.timed ? locale.toString(node.backwardMs, 'f', 3) : QString();
        case ColumnCount:
            break;
    }
    return {};
}

QVariant ModuleTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractItemModel::headerData(section, orientation, role);
    switch (Column(section)) {
        case Name:
            return tr("Module / operation");
        case Parameters:
            return tr("Parameters");
        case ForwardGflop:
            return tr("Forward GFLOP");
        case ActivationMb:
            return tr("Saved activations (MB)");
        case ForwardMs:
            return tr("Forward (ms)");
        case BackwardMs:
            return tr("Backward (ms)");
        case ColumnCount:
            break;
    }
    return {};
}

}  // namespace ts::gui
