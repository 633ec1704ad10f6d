#pragma once
// Throughput and peak memory against the per-GPU batch size on the target GPU, each with its
// interval as a band, the GPU's capacity and the current batch size.
#include <QWidget>

class QCustomPlot;

namespace ts::gui {

class ExplorerState;

class BatchPlotView : public QWidget {
    Q_OBJECT
public:
    explicit BatchPlotView(ExplorerState& state, QWidget* parent = nullptr);
    void refresh();
    QCustomPlot* plot() const { return plot_; }

private:
    ExplorerState& state_;
    QCustomPlot* plot_ = nullptr;
};

}  // namespace ts::gui
