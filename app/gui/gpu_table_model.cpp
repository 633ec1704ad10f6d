#include "gpu_table_model.h"

#include <QLocale>

#include "explorer_state.h"
#include "prediction_snapshot.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

constexpr double kSortsLast = 1e300;

bool numericColumn(int column) {
    return column != GpuTableModel::Gpu && column != GpuTableModel::Fits && column != GpuTableModel::Supported;
}

}  // namespace

GpuTableModel::GpuTableModel(ExplorerState& state, QObject* parent)
    : QAbstractTableModel(parent), state_(state), snapshot_(state.snapshot()) {
    rows_ = snapshot_->hasModel() ? int(snapshot_->allGpus.size()) : 0;
}

int GpuTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : rows_;
}

int GpuTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

TrainingCost GpuTableModel::costOf(int row) const {
    const auto& gpus = snapshot_->database->gpus();
    if (row < 0 || size_t(row) >= snapshot_->allGpus.size() || size_t(row) >= gpus.size()) return {};
    return trainingCost(snapshot_->allGpus[size_t(row)], gpus[size_t(row)], snapshot_->goal);
}

bool GpuTableModel::costApplies(int row) const {
    if (row < 0 || size_t(row) >= snapshot_->allGpus.size()) return false;
    const TrainingPrediction& p = snapshot_->allGpus[size_t(row)];
    return p.supported && p.fits && p.samplesPerS.value > 0;
}

QVariant GpuTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    if (size_t(index.row()) >= snapshot_->allGpus.size()) return {};
    const TrainingPrediction& p = snapshot_->allGpus[size_t(index.row())];
    const bool tokens = snapshot_->countsTokens();
    const int column = index.column();
    if (role == Qt::TextAlignmentRole)
        return QVariant::fromValue(numericColumn(column) ? Qt::AlignRight | Qt::AlignVCenter
                                                         : Qt::AlignLeft | Qt::AlignVCenter);
    if (role == GpuIdRole) return QString::fromStdString(p.gpuId);
    const bool sort = role == SortRole;
    if (role == Qt::ToolTipRole) {
        if (!p.supported) return QString::fromStdString(p.reason);
        if (column >= UsdPerGpuHour && column <= UsdToTrain) {
            const TrainingCost c = costOf(index.row());
            if (!c.priced) return tr("No price for this GPU in the database");
            if (!costApplies(index.row())) return tr("The batch does not fit on this GPU");
            return tr("%1 per GPU-hour (%2) × %3 GPU(s)\nIntervals follow the throughput's: %4 – %5 dollars to train")
                .arg(QLocale().toString(c.usdPerGpuHour, 'f', 2), QString::fromStdString(c.priceSource))
                .arg(snapshot_->settings.gpus)
                .arg(QLocale().toString(c.usdToTrain.low, 'f', c.usdToTrain.high < 100 ? 2 : 0),
                     QLocale().toString(c.usdToTrain.high, 'f', c.usdToTrain.high < 100 ? 2 : 0));
        }
        if (column == Gpu && !p.interconnectNotice.empty()) return QString::fromStdString(p.interconnectNotice);
        return QString::fromStdString(p.sourceDetail);
    }
    if (role != Qt::DisplayRole && !sort) return {};
    QLocale locale;
    const QVariant dash = sort ? QVariant(kSortsLast) : QVariant(QStringLiteral("–"));
    auto number = [&](double v, int decimals) {
        return sort ? QVariant(v) : QVariant(locale.toString(v, 'f', decimals));
    };
    switch (Column(column)) {
        case Gpu:
            return QString::fromStdString(p.gpuName);
        case IterationMs:
            return p.supported ? number(p.iterationMs.value, 2) : dash;
        case SamplesPerS:
            if (!p.supported) return sort ? QVariant(0.0) : dash;
            return tokens ? number(p.tokensPerS.value, 0) : number(p.samplesPerS.value, 1);
        case MaxBatch:
            if (!p.supported) return sort ? QVariant(0.0) : dash;
            return sort ? QVariant(p.maxBatch.value) : QVariant(locale.toString(qlonglong(p.maxBatch.value)));
        case Fits:
            return p.supported && p.fits ? tr("yes") : tr("no");
        case UsdPerGpuHour: {
            const TrainingCost c = costOf(index.row());
            return c.priced ? number(c.usdPerGpuHour, 2) : (sort ? QVariant(kSortsLast) : QVariant(tr("no price")));
        }
        case UsdPerMillionSamples:
        case HoursToTrain:
        case UsdToTrain: {
            if (!costApplies(index.row())) return dash;
            const TrainingCost c = costOf(index.row());
            if (column == HoursToTrain) return number(c.hoursToTrain.value, c.hoursToTrain.value < 10 ? 2 : 1);
            if (!c.priced) return sort ? QVariant(kSortsLast) : QVariant(tr("no price"));
            // Whole dollars from $100; cents below, where a rounded "0" or "1" would hide the choice.
            if (column == UsdToTrain) return number(c.usdToTrain.value, c.usdToTrain.value < 100 ? 2 : 0);
            // Per billion tokens: a million costs fractions of a cent.
            return tokens ? number(c.usdPerMillionTokens.value * 1e3, 2) : number(c.usdPerMillionSamples.value, 2);
        }
        case Supported:
            return p.supported ? tr("yes") : tr("no");
        case ColumnCount:
            break;
    }
    return {};
}

QVariant GpuTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return QAbstractTableModel::headerData(section, orientation, role);
    const bool tip = role == Qt::ToolTipRole;
    switch (Column(section)) {
        case Gpu:
            return tr("GPU");
        case IterationMs:
            return tip ? tr("Predicted time of one training iteration on each GPU") : tr("Iteration (ms)");
        case SamplesPerS:
            if (snapshot_->countsTokens())
                return tip ? tr("Predicted training tokens per second over all GPUs (samples/s × the sequence "
                                "length)")
                           : tr("Tokens/s");
            return tip ? tr("Predicted training samples per second over all GPUs") : tr("Samples/s");
        case MaxBatch:
            return tip ? tr("Largest batch per GPU whose predicted peak memory fits") : tr("Largest batch");
        case Fits:
            return tip ? tr("Whether the current batch fits in the GPU's memory") : tr("Fits");
        case UsdPerGpuHour:
            return tip ? tr("Price of one GPU-hour: the cheapest on-demand listing, else the amortised purchase "
                            "price (Tools > Prices)")
                       : tr("$/GPU-hour");
        case UsdPerMillionSamples:
            if (snapshot_->countsTokens())
                return tip ? tr("Dollars per billion training tokens at the predicted throughput, all GPUs paid")
                           : tr("$/B tokens");
            return tip ? tr("Dollars per million training samples at the predicted throughput, all GPUs paid")
                       : tr("$/M samples");
        case HoursToTrain:
            return tip ? tr("Wall-clock hours to train the goal (tokens, or epochs × dataset samples)")
                       : tr("Hours to train");
        case UsdToTrain:
            return tip ? tr("Dollars to train the goal on all the GPUs") : tr("$ to train");
        case Supported:
            return tip ? tr("Whether the GPU runs the chosen precision") : tr("Supported");
        case ColumnCount:
            break;
    }
    return {};
}

void GpuTableModel::refresh() {
    std::shared_ptr<const PredictionSnapshot> next = state_.snapshot();
    const int rows = next->hasModel() ? int(next->allGpus.size()) : 0;
    const bool headers = next->countsTokens() != snapshot_->countsTokens();
    if (rows != rows_) {
        beginResetModel();
        snapshot_ = std::move(next);
        rows_ = rows;
        endResetModel();
    } else {
        snapshot_ = std::move(next);
        if (rows_ > 0) Q_EMIT dataChanged(index(0, 0), index(rows_ - 1, ColumnCount - 1));
    }
    if (headers) Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
}

}  // namespace ts::gui
