#pragma once
// The Timeline: one training iteration on the target GPU as predicted, left to right: the forward
// pass layer by layer in graph order, checkpointing's recompute, the backward pass in reverse,
// the exposed all-reduce and the optimizer step; bar lengths are predicted times. When a loaded
// profile recorded kernels, each layer's kernels are drawn under it (their measured shares of the
// layer, scaled to the predicted bar). The selected layer is highlighted; clicking a bar selects it.
#include <QVector>
#include <QWidget>

namespace ts::gui {

class ExplorerState;
class ViewRefresher;

class TimelineView : public QWidget {
    Q_OBJECT
public:
    enum class Kind { Forward, Recompute, Backward, Communication, Optimizer, Other, Kernel };
    struct Span {
        double startMs = 0, ms = 0;
        int op = -1;  // graph operation, -1 for the parts that are not a layer
        Kind kind = Kind::Forward;
        QString label;
    };

    explicit TimelineView(ExplorerState& state, QWidget* parent = nullptr);
    const QVector<Span>& spans() const { return spans_; }
    const QVector<Span>& kernels() const { return kernels_; }
    double totalMs() const { return totalMs_; }
    // Where a span is drawn, and which span is under a point (index into spans(), -1 none).
    QRectF spanRect(const Span& span, int row) const;
    int spanAt(const QPointF& pos) const;

    QSize sizeHint() const override { return {800, 260}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

private:
    void refresh();
    void addKernels(const Span& layer, bool backward);
    QRectF rowRect(int row) const;
    double viewMs() const;  // the time the width shows

    double zoom_ = 1;         // 1: the whole iteration
    double viewStartMs_ = 0;  // time at the left edge

    ExplorerState& state_;
    ViewRefresher* refresher_ = nullptr;
    QVector<Span> spans_;    // row 0: the iteration
    QVector<Span> kernels_;  // row 1: measured kernels under their layer
    double totalMs_ = 0;
    QString kernelSource_;
    QString message_;  // shown instead of the bars (no model, unsupported)
};

}  // namespace ts::gui
