#pragma once
// Draws one step of a trace (TraceTimeline): a row per host thread with its top-level operators,
// a strip of the GPU's idle (grey) and host-bound (orange) stretches, and a row per GPU stream
// with its kernels, copies and collectives coloured by kernel class, at their measured times.
// The wheel zooms about the mouse, dragging pans; hovering a bar tells what it is.
#include <QString>
#include <QWidget>
#include <memory>

#include "trace_document.h"
#include "trace_timeline.h"

namespace ts::gui {

class TraceTimelineCanvas : public QWidget {
    Q_OBJECT
public:
    explicit TraceTimelineCanvas(QWidget* parent = nullptr);
    void setTimeline(std::shared_ptr<const TraceDocument> doc, TraceTimeline timeline);
    const TraceTimeline& timeline() const { return timeline_; }

    // Geometry, for hit tests and tests: row -1 is the idle strip.
    QRectF rowRect(int row) const;
    QRectF barRect(const TraceTimelineBar& bar) const;
    int barAt(const QPointF& pos) const;  // index into timeline().bars, -1 none
    QString toolTipAt(const QPointF& pos) const;
    double viewMs() const { return timeline_.spanMs / zoom_; }
    double viewStartMs() const { return viewStartMs_; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF plotArea() const;  // where times are drawn (right of the row labels)
    double xOf(double ms) const;
    void drawAxis(QPainter& painter, const QRectF& area) const;
    void drawStretches(QPainter& painter, const QRectF& area) const;
    void drawBars(QPainter& painter) const;
    void drawLegend(QPainter& painter) const;
    QString barToolTip(const TraceTimelineBar& bar) const;
    QColor barColor(const TraceTimelineBar& bar) const;

    std::shared_ptr<const TraceDocument> doc_;
    TraceTimeline timeline_;
    double zoom_ = 1;
    double viewStartMs_ = 0;
    double dragFromX_ = -1, dragFromStartMs_ = 0;
};

}  // namespace ts::gui
