#pragma once
// Throughput and peak memory against the per-GPU batch size on the target GPU, each with its
// interval as a band, measured points where a loaded profile ran on that GPU at that precision, the
// GPU's capacity, the current batch size as a vertical line the user drags to set the batch, and the
// recommended batch (the smallest within 3% of the best throughput that fits) as a dashed one. A
// language model's throughput axis is in tokens per second.
#include <QWidget>
#include <memory>

class QCustomPlot;
class QCPItemRect;
class QCPItemStraightLine;
class QCPItemText;
class QMouseEvent;

namespace ts::gui {

class ExplorerState;
class ViewRefresher;
struct PredictionSnapshot;

class BatchPlotView : public QWidget {
    Q_OBJECT
public:
    explicit BatchPlotView(ExplorerState& state, QWidget* parent = nullptr);
    void refresh();
    QCustomPlot* plot() const { return plot_; }
    // Where the current-batch line is drawn, in plot widget pixels (tests drag it).
    double batchLinePixel() const;
    int measuredPoints() const;  // measured points shown (throughput)
    // The batch the dashed recommended line marks; 0 when it is hidden (nothing fits).
    double recommendedShown() const;
    // The first batch the shaded "does not fit" region starts at; 0 when every batch shown fits.
    double notFittingFrom() const;

private:
    void mousePress(QMouseEvent* event);
    void mouseMove(QMouseEvent* event);
    void mouseRelease(QMouseEvent* event);
    bool nearBatchLine(double x) const;

    ExplorerState& state_;
    std::shared_ptr<const PredictionSnapshot> snapshot_;  // what the plot shows
    ViewRefresher* refresher_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QCPItemStraightLine* batchLine_ = nullptr;
    QCPItemText* batchLabel_ = nullptr;
    QCPItemStraightLine* recommendedLine_ = nullptr;
    QCPItemText* recommendedLabel_ = nullptr;
    QCPItemRect* notFitting_ = nullptr;  // batches beyond the largest that fits
    QCPItemText* notFittingLabel_ = nullptr;
    bool dragging_ = false;
};

}  // namespace ts::gui
