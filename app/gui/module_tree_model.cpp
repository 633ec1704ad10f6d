#include "module_tree_model.h"

#include <QLocale>
#include <QStringList>
#include <algorithm>

#include "explorer_state.h"
#include "layer_figures.h"
#include "prediction_snapshot.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

QString shapeText(const std::vector<int64_t>& shape) {
    QStringList dims;
    for (int64_t d : shape) dims << QString::number(d);
    return "[" + dims.join(", ") + "]";
}

int generationOf(const PredictionSnapshot& s) {
    return s.model ? s.model->generation : -1;
}

}  // namespace

ModuleTreeModel::ModuleTreeModel(ExplorerState& state, QObject* parent)
    : QAbstractItemModel(parent), state_(state), snapshot_(state.snapshot()) {
    rebuild();
}

void ModuleTreeModel::rebuild() {
    nodes_.clear();
    opNode_.clear();
    if (!snapshot_->hasModel()) return;
    const ModelCosts& costs = snapshot_->costs;
    opNode_.assign(snapshot_->graph()->ops.size(), -1);
    // Modules are in pre-order, so a module's parent node exists before it.
    std::vector<int> moduleNode(costs.modules.size(), -1);
    for (size_t m = 0; m < costs.modules.size(); ++m) {
        Node node;
        node.module = int(m);
        const int parentModule = costs.modules[m].parent;
        node.parent = parentModule >= 0 && size_t(parentModule) < m ? moduleNode[size_t(parentModule)] : -1;
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
            node.firstOp = costs.layers[size_t(layer)].op;
            node.parent = parentNode;
            node.row = int(nodes_[size_t(parentNode)].children.size());
            nodes_[size_t(parentNode)].children.push_back(int(nodes_.size()));
            if (node.firstOp >= 0 && size_t(node.firstOp) < opNode_.size())
                opNode_[size_t(node.firstOp)] = int(nodes_.size());
            nodes_.push_back(node);
        }
    }
    if (!nodes_.empty()) sumFirstOp(0);
    updateTimes();
}

int ModuleTreeModel::sumFirstOp(int index) {
    Node& node = nodes_[size_t(index)];
    if (node.layer >= 0) return node.firstOp;
    int first = -1;
    for (int child : node.children) {
        const int op = sumFirstOp(child);
        if (op >= 0 && (first < 0 || op < first)) first = op;
    }
    node.firstOp = first;
    return first;
}

void ModuleTreeModel::updateTimes() {
    if (nodes_.empty()) return;
    const LayerFigureTable figures = computeLayerFigures(*snapshot_);
    iterationMs_ = figures.iterationMs;
    for (Node& node : nodes_) {
        node.forwardMs = node.backwardMs = node.tensorMs = node.savedBytes = 0;
        std::fill(std::begin(node.boundMs), std::end(node.boundMs), 0.0);
        node.timed = false;
        if (node.layer < 0) continue;
        const LayerFigures* f = figures.find(node.firstOp);
        if (!f) continue;
        node.forwardMs = f->forwardMs;
        node.backwardMs = f->backwardMs;
        node.boundMs[int(f->bound)] = f->totalMs();
        node.tensorUse = int(f->tensorCores);
        node.tensorMs = usesTensorCores(f->tensorCores) ? f->totalMs() : 0;
        node.savedBytes = f->savedBytes;
        node.timed = true;
    }
    sumTimes(0);
}

void ModuleTreeModel::sumTimes(int index) {
    if (nodes_[size_t(index)].layer >= 0) return;
    Node sum;
    for (int child : nodes_[size_t(index)].children) {
        sumTimes(child);
        const Node& c = nodes_[size_t(child)];
        sum.forwardMs += c.forwardMs;
        sum.backwardMs += c.backwardMs;
        sum.tensorMs += c.tensorMs;
        sum.savedBytes += c.savedBytes;
        for (int b = 0; b < predictors::kPassBoundCount; ++b) sum.boundMs[b] += c.boundMs[b];
        sum.timed = sum.timed || c.timed;
    }
    Node& node = nodes_[size_t(index)];
    node.forwardMs = sum.forwardMs;
    node.backwardMs = sum.backwardMs;
    node.tensorMs = sum.tensorMs;
    node.savedBytes = sum.savedBytes;
    std::copy(std::begin(sum.boundMs), std::end(sum.boundMs), std::begin(node.boundMs));
    node.timed = sum.timed;
}

void ModuleTreeModel::refresh(ChangeSignals notify) {
    std::shared_ptr<const PredictionSnapshot> next = state_.snapshot();
    // Another graph of the same model (another LoRA set-up, another tensor-parallel shard) numbers its
    // operations anew, as another model does.
    const bool rebuilt = generationOf(*next) != generationOf(*snapshot_) || (next->hasModel() && nodes_.empty()) ||
                         next->graph() != snapshot_->graph() ||
                         next->costs.layers.size() != snapshot_->costs.layers.size();
    if (rebuilt) {
        beginResetModel();
        snapshot_ = std::move(next);
        rebuild();
        endResetModel();
        return;
    }
    snapshot_ = std::move(next);
    updateTimes();
    if (nodes_.empty()) return;
    // Every figure but the name may change with the settings: signal each parent's rows.
    if (notify == ChangeSignals::EveryParent)
        for (size_t n = 0; n < nodes_.size(); ++n) {
            const Node& node = nodes_[n];
            if (node.children.empty()) continue;
            const QModelIndex parentIndex = createIndex(node.row, 0, quintptr(n));
            Q_EMIT dataChanged(index(0, OutputShape, parentIndex),
                               index(int(node.children.size()) - 1, ColumnCount - 1, parentIndex));
        }
    Q_EMIT dataChanged(index(0, OutputShape), index(0, ColumnCount - 1));
}

QModelIndex ModuleTreeModel::indexOfOp(int op) const {
    if (op < 0 || size_t(op) >= opNode_.size() || opNode_[size_t(op)] < 0) return {};
    const int n = opNode_[size_t(op)];
    return createIndex(nodes_[size_t(n)].row, 0, quintptr(n));
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
    // The nodes point into the costs of snapshot_, which the rows keep until the next refresh().
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !snapshot_->hasModel()) return {};
    const Node& node = nodes_[size_t(index.internalId())];
    switch (role) {
        case Qt::TextAlignmentRole:
            if (index.column() == Name || index.column() == OutputShape || index.column() == Bound ||
                index.column() == TensorCores)
                return {};
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        case OpRole:
            return node.firstOp;
        case Qt::ToolTipRole:
            if (index.column() != Name) return headerData(index.column(), Qt::Horizontal, role);
            if (node.module >= 0) return QString::fromStdString(snapshot_->costs.modules[size_t(node.module)].path);
            return display(node, Name, false);
        case Qt::DisplayRole:
            return display(node, index.column(), false);
        case SortRole:
            return display(node, index.column(), true);
        default:
            return {};
    }
}

QVariant ModuleTreeModel::display(const Node& node, int column, bool sortValue) const {
    const ModelCosts& costs = snapshot_->costs;
    const Graph& g = *snapshot_->graph();
    QLocale locale;
    double parameters = 0, flops = 0, activationBytes = 0;
    QString name, shape;
    if (node.module >= 0) {
        const ModuleCost& m = costs.modules[size_t(node.module)];
        name = QString::fromStdString(m.name.empty() ? g.name : m.name);
        parameters = double(m.parameters);
        flops = m.forwardFlops + m.backwardFlops;
        activationBytes = m.activationBytes;
    } else {
        const LayerCost& l = costs.layers[size_t(node.layer)];
        const Operation& op = g.ops[size_t(l.op)];
        name = QString::fromStdString(op.name) + " [" + QString::fromStdString(op.type) + "]";
        shape = shapeText(l.outputShape);
        parameters = double(l.parameters);
        flops = l.cost.forwardFlops + l.cost.backwardFlops;
        activationBytes = l.activationBytes;
    }
    // With a prediction: what the memory model keeps at the precision shown (the overview's activations
    // without checkpointing); without one, the graph's own dtypes.
    if (node.timed) activationBytes = node.savedBytes;
    const double totalMs = node.forwardMs + node.backwardMs;
    auto timed = [&](double value, int decimals) -> QVariant {
        if (sortValue) return node.timed ? value : -1.0;
        return node.timed ? locale.toString(value, 'f', decimals) : QString();
    };
    switch (Column(column)) {
        case Name:
            return name;
        case OutputShape:
            return shape;
        case Parameters:
            return sortValue ? QVariant(parameters) : QVariant(locale.toString(qlonglong(parameters)));
        case ForwardMs:
            return timed(node.forwardMs, 3);
        case BackwardMs:
            return timed(node.backwardMs, 3);
        case SharePercent:
            return timed(iterationMs_ > 0 ? 100 * totalMs / iterationMs_ : 0, 1);
        case ActivationMb:
            return sortValue ? QVariant(activationBytes) : QVariant(locale.toString(activationBytes / 1e6, 'f', 2));
        case Gflop:
            return sortValue ? QVariant(flops) : QVariant(locale.toString(flops / 1e9, 'f', 3));
        case Bound: {
            if (!node.timed || totalMs <= 0) return sortValue ? QVariant(-1) : QVariant(QString());
            const int b = int(std::max_element(std::begin(node.boundMs), std::end(node.boundMs)) - node.boundMs);
            return sortValue ? QVariant(b) : QVariant(boundName(PassBound(b)));
        }
        case TensorCores: {
            if (!node.timed) return sortValue ? QVariant(-1.0) : QVariant(QString());
            if (node.layer >= 0)
                return sortValue ? QVariant(double(node.tensorMs > 0))
                                 : QVariant(tensorCoreName(TensorCoreUse(node.tensorUse)));
            const double share = totalMs > 0 ? node.tensorMs / totalMs : 0;
            if (sortValue) return share;
            return share > 0 ? tr("%1% of time").arg(locale.toString(100 * share, 'f', 0)) : QString();
        }
        case ColumnCount:
            break;
    }
    return {};
}

QVariant ModuleTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return QAbstractItemModel::headerData(section, orientation, role);
    const bool tip = role == Qt::ToolTipRole;
    switch (Column(section)) {
        case Name:
            return tip ? tr("The model's modules, each with the operations it runs directly")
                       : tr("Module / operation");
        case OutputShape:
            return tip ? tr("Shape of the operation's first output at the current batch size") : tr("Output shape");
        case Parameters:
            return tip ? tr("Trainable parameters (a module counts its submodules')") : tr("Parameters");
        case ForwardMs:
            return tip ? tr("Predicted forward time per iteration on the target GPU") : tr("Forward (ms)");
        case BackwardMs:
            return tip ? tr("Predicted backward time per iteration on the target GPU") : tr("Backward (ms)");
        case SharePercent:
            return tip ? tr("Forward plus backward time as a share of the predicted iteration time") : tr("Share (%)");
        case ActivationMb:
            return tip ? tr("Activations saved for backward at the current batch size and precision, without "
                            "checkpointing (a tensor several operations keep counts at the first)")
                       : tr("Activations (MB)");
        case Gflop:
            return tip ? tr("Forward plus backward GFLOP per iteration at the current batch size") : tr("GFLOP");
        case Bound:
            return tip ? tr("What limits the layer on the target GPU, as the predictor times it (the CLI's predict "
                            "prints the same): compute (its FLOPs at the precision's rate take longest), memory (its "
                            "DRAM traffic does), wave (one wave of output tiles is longer than its FLOPs spread over "
                            "every SM: too little work to fill the GPU) or latency (its kernels' fixed time exceeds "
                            "their work). A layer shows its forward pass's; a module the bound of most of its time.")
                       : tr("Bound");
        case TensorCores:
            return tip ? tr("Whether the layer runs on tensor cores: measured from a loaded profile's kernels where "
                            "there are some, otherwise predicted (matrix multiplies and convolutions at a tensor-core "
                            "precision). A module shows the share of its time on tensor cores.")
                       : tr("Tensor cores");
        case ColumnCount:
            break;
    }
    return {};
}

}  // namespace ts::gui
