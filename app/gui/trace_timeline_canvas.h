#pragma once
// Draws one step of a trace (TraceTimeline) on the timeline canvas (timeline_canvas.h): a lane per
// host thread with its top-level operators, a strip of the GPU's idle (grey) and host-bound
// (orange) stretches, and a lane per GPU stream with its kernels, copies and collectives coloured
// by kernel class, at their measured times. Hovering a bar tells what it is.
#include <QString>
#include <memory>

#include "timeline_canvas.h"
#include "trace_document.h"
#include "trace_timeline.h"

namespace ts::gui {

class TraceTimelineCanvas : public TimelineCanvas {
    Q_OBJECT
public:
    explicit TraceTimelineCanvas(QWidget* parent = nullptr);
    void setTimeline(std::shared_ptr<const TraceDocument> doc, TraceTimeline timeline);
    const TraceTimeline& timeline() const { return timeline_; }

    // Geometry, for hit tests and tests: row -1 is the idle strip.
    QRectF rowRect(int row) const;
    QRectF barRect(const TraceTimelineBar& bar) const;
    int barAt(const QPointF& pos) const;  // index into timeline().bars, -1 none
    QString toolTipAt(const QPointF& pos) const override;

private:
    int laneOf(int row) const;  // the canvas lane of a timeline row (-1: the idle strip)
    QString barToolTip(const TraceTimelineBar& bar) const;
    QColor barColor(const TraceTimelineBar& bar) const;

    std::shared_ptr<const TraceDocument> doc_;
    TraceTimeline timeline_;
    int hostRows_ = 0;
    bool strip_ = false;  // a GPU row exists, so the idle strip is drawn
};

}  // namespace ts::gui
