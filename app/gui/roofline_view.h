#pragma once
// The Roofline: every layer's forward or backward pass (a selector above the plot) on the target
// GPU's roofline, log-log: arithmetic intensity (FLOP per DRAM byte) against the FLOP/s it achieves
// in its predicted time, under the roof of the datasheet's peak for the current precision and its
// memory bandwidth (and the FP32 CUDA-core roof that layers autocast keeps in FP32 reach). Points
// are sized by the pass's share of the iteration and coloured by what bounds it; the selected layer
// is ringed; clicking a point selects its layer in every view.
#include <QVector>
#include <QWidget>
#include <memory>

class QComboBox;
class QCustomPlot;
class QLabel;
class QMouseEvent;

namespace ts::gui {

class ExplorerState;
class ViewRefresher;
struct PredictionSnapshot;

class RooflineView : public QWidget {
    Q_OBJECT
public:
    explicit RooflineView(ExplorerState& state, QWidget* parent = nullptr);
    QCustomPlot* plot() const { return plot_; }
    QComboBox* passSelector() const { return pass_; }  // 0 forward, 1 backward
    int pointCount() const { return int(points_.size()); }
    // Where layer `op`'s point is drawn, in plot pixels; (-1, -1) when it has none.
    QPointF pointPixel(int op) const;
    // The layer whose point is nearest `pos` within a few pixels; -1 none.
    int opAt(const QPointF& pos) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Point {
        int op;
        double intensity, flopsPerS, share;
        int bound;
    };
    void refresh();
    void showSelection();
    void clicked(QMouseEvent* event);

    ExplorerState& state_;
    std::shared_ptr<const PredictionSnapshot> snapshot_;  // what the points show
    ViewRefresher* refresher_ = nullptr;
    QComboBox* pass_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QLabel* note_ = nullptr;
    QVector<Point> points_;
    int pointGraphs_ = 0;  // graphs before the selection ring's
};

}  // namespace ts::gui
