#pragma once
// Every GPU of the database at the current settings: one row each, with the predicted iteration
// time, throughput, largest batch, whether the batch fits and whether the precision is supported.
// DisplayRole is text; Qt::UserRole gives the number behind it, which the sorting proxy uses.
#include <QAbstractTableModel>

namespace ts::gui {

class ExplorerState;

class GpuTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Gpu, IterationMs, SamplesPerS, MaxBatch, Fits, Supported, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;

    explicit GpuTableModel(ExplorerState& state, QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void refresh();  // the predictions changed: rows stay (one per GPU), values change

private:
    ExplorerState& state_;
    int rows_ = 0;
};

}  // namespace ts::gui
