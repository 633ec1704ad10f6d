#include "trace_timeline_canvas.h"

#include <QLocale>
#include <algorithm>
#include <array>

#include "trace_style.h"

namespace ts::gui {

namespace {

const QColor kHostColor(110, 130, 160);

}  // namespace

TraceTimelineCanvas::TraceTimelineCanvas(QWidget* parent) : TimelineCanvas(parent) {
    setObjectName("traceTimelineCanvas");
}

int TraceTimelineCanvas::laneOf(int row) const {
    if (row < 0) return strip_ ? hostRows_ : -1;
    return row < hostRows_ ? row : row + (strip_ ? 1 : 0);  // GPU streams below the idle strip
}

void TraceTimelineCanvas::setTimeline(std::shared_ptr<const TraceDocument> doc, TraceTimeline timeline) {
    doc_ = std::move(doc);
    timeline_ = std::move(timeline);
    hostRows_ = int(
        std::count_if(timeline_.rows.begin(), timeline_.rows.end(), [](const TraceTimelineRow& r) { return !r.gpu; }));
    strip_ = hostRows_ < int(timeline_.rows.size());
    TimelinePicture picture;
    picture.spanMs = timeline_.spanMs;
    picture.markerMs = doc_ && !timeline_.rows.empty() ? timeline_.cpuMs : -1;
    for (int r = 0; r < int(timeline_.rows.size()); ++r) {
        if (r == hostRows_ && strip_) picture.lanes.push_back({tr("GPU idle"), true});
        picture.lanes.push_back({QString::fromStdString(timeline_.rows[size_t(r)].label), false});
    }
    if (doc_) {
        const KinetoTrace& t = doc_->trace;
        // Bars first, one block each and in order: block i is bar i.
        for (const TraceTimelineBar& bar : timeline_.bars) {
            const bool gpu = timeline_.rows[size_t(bar.row)].gpu;
            const std::string& name =
                gpu ? t.str(t.kernels[size_t(bar.index)].name) : t.str(t.operators[size_t(bar.index)].name);
            picture.blocks.push_back(
                {laneOf(bar.row), bar.startMs, bar.ms, barColor(bar), QString::fromStdString(name)});
        }
        if (strip_) {
            const int first = laneOf(-1), last = int(picture.lanes.size()) - 1;
            const QColor idle = palette().color(QPalette::Mid);
            for (const TraceTimelineStretch& s : timeline_.idle) {
                picture.bands.push_back({s.startMs, s.ms, idle, false, first, last});
                picture.blocks.push_back({first, s.startMs, s.ms, idle, {}});
            }
            for (const TraceTimelineStretch& s : timeline_.hostBound) {
                picture.bands.push_back({s.startMs, s.ms, kHostBoundColor, true, first, last});
                picture.blocks.push_back({first, s.startMs, s.ms, kHostBoundColor, {}});
            }
        }
        std::array<bool, size_t(KernelClass::Other) + 1> present{};
        for (const TraceTimelineBar& bar : timeline_.bars)
            if (timeline_.rows[size_t(bar.row)].gpu) present[size_t(t.kernels[size_t(bar.index)].kind)] = true;
        picture.legend = {{tr("host operator"), kHostColor},
                          {tr("GPU idle"), palette().color(QPalette::Mid)},
                          {tr("host-bound (GPU waited for the host)"), kHostBoundColor}};
        for (size_t k = 0; k < present.size(); ++k)
            if (present[k])
                picture.legend.push_back({kernelClassLabel(KernelClass(k)), kernelClassColor(KernelClass(k))});
    }
    setPicture(std::move(picture));
}

QRectF TraceTimelineCanvas::rowRect(int row) const {
    return laneRect(laneOf(row));
}

QRectF TraceTimelineCanvas::barRect(const TraceTimelineBar& bar) const {
    return blockRect({laneOf(bar.row), bar.startMs, bar.ms, {}, {}});
}

int TraceTimelineCanvas::barAt(const QPointF& pos) const {
    const int i = blockAt(pos);
    return i >= 0 && size_t(i) < timeline_.bars.size() ? i : -1;  // the strip's blocks are no bars
}

QColor TraceTimelineCanvas::barColor(const TraceTimelineBar& bar) const {
    if (!timeline_.rows[size_t(bar.row)].gpu) return kHostColor;
    return kernelClassColor(doc_->trace.kernels[size_t(bar.index)].kind);
}

QString TraceTimelineCanvas::barToolTip(const TraceTimelineBar& bar) const {
    const KinetoTrace& t = doc_->trace;
    QLocale locale;
    const QString when = tr("%1, from %2 ms").arg(formatDurationMs(bar.ms), locale.toString(bar.startMs, 'f', 3));
    if (!timeline_.rows[size_t(bar.row)].gpu) {
        const TraceOperator& op = t.operators[size_t(bar.index)];
        QString tip = QString::fromStdString(t.str(op.name)) + "\n" + tr("host operator: ") + when;
        if (op.scope >= 0) tip += "\n" + tr("scope: %1").arg(QString::fromStdString(t.str(op.scope)));
        if (op.inputShapes >= 0) tip += "\n" + tr("inputs: %1").arg(QString::fromStdString(t.str(op.inputShapes)));
        return tip;
    }
    const TraceKernel& k = t.kernels[size_t(bar.index)];
    QString tip = QString::fromStdString(t.str(k.name)) + "\n" +
                  tr("%1 on stream %2: %3").arg(kernelClassLabel(k.kind)).arg(k.stream).arg(when);
    if (k.grid[0] > 0)
        tip += "\n" + tr("grid %1, block %2, %3 registers/thread, %4 B shared memory")
                          .arg(formatDim3(k.grid), formatDim3(k.block))
                          .arg(k.registersPerThread)
                          .arg(k.sharedMemoryBytes);
    if (k.occupancyPercent >= 0)
        tip += "\n" + tr("est. achieved occupancy %1%").arg(double(k.occupancyPercent), 0, 'f', 0);
    if (k.bytes > 0 && k.collective < 0) tip += "\n" + tr("%1 bytes").arg(locale.toString(k.bytes, 'f', 0));
    if (k.collective >= 0) {
        const TraceCollective& c = t.collectives[size_t(k.collective)];
        tip += "\n" +
               tr("%1 of %2 elements, %3 ranks").arg(QString::fromStdString(c.name)).arg(c.inElements).arg(c.groupSize);
    }
    if (k.op >= 0) {
        const TraceOperator& op = t.operators[size_t(k.op)];
        tip += "\n" + tr("launched by %1").arg(QString::fromStdString(t.str(op.name)));
        if (op.scope >= 0) tip += tr(" in %1").arg(QString::fromStdString(t.str(op.scope)));
    } else {
        tip += "\n" + tr("launched outside every operator");
    }
    return tip;
}

QString TraceTimelineCanvas::toolTipAt(const QPointF& pos) const {
    if (!doc_) return {};
    if (const int i = barAt(pos); i >= 0) return barToolTip(timeline_.bars[size_t(i)]);
    if (!strip_) return {};
    const QRectF strip = rowRect(-1);
    const double gpuBottom = rowRect(int(timeline_.rows.size()) - 1).bottom();
    if (pos.y() >= strip.top() && pos.y() <= gpuBottom) {
        const double atMs = msAt(pos.x());
        for (const TraceTimelineStretch& s : timeline_.hostBound)
            if (atMs >= s.startMs && atMs <= s.startMs + s.ms)
                return tr("Host-bound: the GPU waited %1 for the host to launch its next work")
                    .arg(formatDurationMs(s.ms));
        for (const TraceTimelineStretch& s : timeline_.idle)
            if (atMs >= s.startMs && atMs <= s.startMs + s.ms)
                return tr("GPU idle for %1 (its next work had been launched: waiting on another stream, an event "
                          "or a copy)")
                    .arg(formatDurationMs(s.ms));
    }
    return {};
}

}  // namespace ts::gui
