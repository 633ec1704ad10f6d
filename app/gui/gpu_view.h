#pragma once
// The GPUs view: every GPU of the database side by side at the current settings (a table sortable
// by any column), the training goal the cost columns are for (epochs × dataset samples, or tokens
// for a language model), and a
// scatter of the cost to train against the time to train. GPUs without a price, or on which the
// batch does not fit, are listed under the scatter as not shown. Clicking a point makes its GPU the
// target.
#include <QPointF>
#include <QVector>
#include <QWidget>

class QCPItemText;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QMouseEvent;
class QSortFilterProxyModel;
class QTableView;

namespace ts::gui {

class ExplorerState;
class GpuTableModel;
class ViewRefresher;

class GpuView : public QWidget {
    Q_OBJECT
public:
    explicit GpuView(ExplorerState& state, QWidget* parent = nullptr);
    GpuTableModel* model() const { return model_; }
    QSortFilterProxyModel* proxy() const { return proxy_; }
    QTableView* table() const { return table_; }
    QDoubleSpinBox* epochs() const { return epochs_; }
    QDoubleSpinBox* datasetSamples() const { return samples_; }
    QDoubleSpinBox* goalTokens() const { return tokens_; }  // billions; shown for a goal in tokens
    QCustomPlot* scatter() const { return scatter_; }
    QLabel* notShown() const { return notShown_; }
    int scatterPoints() const { return int(pointRows_.size()); }
    // The points' labels, most important first; those that would overlap others are hidden.
    const QVector<QCPItemText*>& scatterLabels() const { return labels_; }

private:
    void refresh();
    void refreshScatter();
    void goalEdited();
    void scatterClicked(QMouseEvent* event);
    void scatterHovered(QMouseEvent* event);
    int pointAt(const QPointF& pixel) const;  // index of the scatter point under `pixel`, or -1
    QString scatterHelp() const;

    ExplorerState& state_;
    ViewRefresher* refresher_ = nullptr;
    GpuTableModel* model_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    QTableView* table_ = nullptr;
    QDoubleSpinBox* epochs_ = nullptr;
    QDoubleSpinBox* samples_ = nullptr;
    QDoubleSpinBox* tokens_ = nullptr;
    QWidget* samplesGoal_ = nullptr;  // epochs of samples
    QWidget* tokensGoal_ = nullptr;   // billions of tokens
    QCustomPlot* scatter_ = nullptr;
    QLabel* notShown_ = nullptr;
    QVector<int> pointRows_;        // model row of each scatter point
    QVector<QCPItemText*> labels_;  // the points' labels, most important first
    QVector<double> pointHours_, pointUsd_;
};

}  // namespace ts::gui
