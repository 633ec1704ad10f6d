#include "gpu_table_model.h"

#include <QLocale>

#include "explorer_state.h"

namespace ts::gui {

using namespace ts::predictors;

GpuTableModel::GpuTableModel(ExplorerState& state, QObject* parent) : QAbstractTableModel(parent), state_(state) {
    rows_ = state_.hasModel() ? int(state_.allGpus().size()) : 0;
}

int GpuTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : rows_;
}

int GpuTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant GpuTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    if (role != Qt::DisplayRole && role != SortRole && role != Qt::TextAlignmentRole && role != Qt::ToolTipRole)
        return {};
    if (size_t(index.row()) >= state_.allGpus().size()) return {};  // between a change and refresh()
    const TrainingPrediction& p = state_.allGpus()[size_t(index.row())];
    const bool numeric = index.column() == IterationMs || index.column() == SamplesPerS || index.column() == MaxBatch;
    if (role == Qt::TextAlignmentRole)
        return QVariant::fromValue(numeric ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole)
        return p.supported ? QString::fromStdString(p.sourceDetail) : QString::fromStdString(p.reason);
    const bool sort = role == SortRole;
    QLocale locale;
    switch (Column(index.column())) {
        case Gpu:
            return QString::fromStdString(p.gpuName);
        case IterationMs:
            if (!p.supported) return sort ? QVariant(1e300) : QVariant(QStringLiteral("–"));
            return sort ? QVariant(p.iterationMs.value) : QVariant(locale.toString(p.iterationMs.value, 'f', 2));
        case SamplesPerS:
            if (!p.supported) return sort ? QVariant(0.0) : QVariant(QStringLiteral("–"));
            return sort ? QVariant(p.samplesPerS.value) : QVariant(locale.toString(p.samplesPerS.value, 'f', 1));
        case MaxBatch:
            if (!p.supported) return sort ? QVariant(0.0) : QVariant(QStringLiteral("–"));
            return sort ? QVariant(p.maxBatch.value) : QVariant(locale.toString(qlonglong(p.maxBatch.value)));
        case Fits:
            return p.supported && p.fits ? tr("yes") : tr("no");
        case Supported:
            return p.supported ? tr("yes") : tr("no");
        case ColumnCount:
            break;
    }
    return {};
}

QVariant GpuTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
        case Gpu:
            return tr("GPU");
        case IterationMs:
            return tr("Iteration (ms)");
        case SamplesPerS:
            return tr("Samples/s");
        case MaxBatch:
            return tr("Largest batch");
        case Fits:
            return tr("Fits");
        case Supported:
            return tr("Supported");
        case ColumnCount:
            break;
    }
    return {};
}

void GpuTableModel::refresh() {
    const int rows = state_.hasModel() ? int(state_.allGpus().size()) : 0;
    if (rows != rows_) {
        beginResetModel();
        rows_ = rows;
        endResetModel();
    } else if (rows_ > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rows_ - 1, ColumnCount - 1));
    }
}

}  // namespace ts::gui
