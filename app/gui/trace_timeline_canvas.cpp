#include "trace_timeline_canvas.h"

#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>

#include "trace_style.h"

namespace ts::gui {

namespace {

constexpr int kMargin = 8;
constexpr int kLabelWidth = 130;
constexpr int kRowHeight = 24;
constexpr int kStripHeight = 12;
constexpr int kGap = 4;
const QColor kHostColor(110, 130, 160);

int hostRows(const TraceTimeline& t) {
    return int(std::count_if(t.rows.begin(), t.rows.end(), [](const TraceTimelineRow& r) { return !r.gpu; }));
}

}  // namespace

TraceTimelineCanvas::TraceTimelineCanvas(QWidget* parent) : QWidget(parent) {
    setObjectName("traceTimelineCanvas");
    setMouseTracking(true);
}

void TraceTimelineCanvas::setTimeline(std::shared_ptr<const TraceDocument> doc, TraceTimeline timeline) {
    doc_ = std::move(doc);
    timeline_ = std::move(timeline);
    zoom_ = 1;
    viewStartMs_ = 0;
    updateGeometry();
    update();
}

QSize TraceTimelineCanvas::sizeHint() const {
    const int rows = int(timeline_.rows.size());
    const int legend = 3 * fontMetrics().height();
    return {800, int(rowRect(rows - 1).bottom()) + kGap + legend + kMargin};
}

QRectF TraceTimelineCanvas::plotArea() const {
    return QRectF(kMargin + kLabelWidth, 0, std::max(10, width() - 2 * kMargin - kLabelWidth), height());
}

QRectF TraceTimelineCanvas::rowRect(int row) const {
    const double top = fontMetrics().height() + 10;  // the time axis
    const int hosts = hostRows(timeline_);
    const QRectF area = plotArea();
    if (row < 0) return QRectF(area.left(), top + hosts * (kRowHeight + kGap), area.width(), kStripHeight);
    double y = top + row * (kRowHeight + kGap);
    if (row >= hosts) y += kStripHeight + kGap;  // GPU streams below the idle strip
    return QRectF(area.left(), y, area.width(), kRowHeight);
}

double TraceTimelineCanvas::xOf(double ms) const {
    const QRectF area = plotArea();
    return area.left() + (viewMs() > 0 ? (ms - viewStartMs_) / viewMs() * area.width() : 0);
}

QRectF TraceTimelineCanvas::barRect(const TraceTimelineBar& bar) const {
    const QRectF row = rowRect(bar.row);
    const double left = xOf(bar.startMs);
    return QRectF(left, row.top(), std::max(xOf(bar.startMs + bar.ms) - left, 1.0), row.height());
}

int TraceTimelineCanvas::barAt(const QPointF& pos) const {
    // The last drawn is on top: search from the end.
    for (int i = int(timeline_.bars.size()) - 1; i >= 0; --i)
        if (barRect(timeline_.bars[size_t(i)]).adjusted(-1, 0, 1, 0).contains(pos)) return i;
    return -1;
}

QColor TraceTimelineCanvas::barColor(const TraceTimelineBar& bar) const {
    if (!timeline_.rows[size_t(bar.row)].gpu) return kHostColor;
    return kernelClassColor(doc_->trace.kernels[size_t(bar.index)].kind);
}

void TraceTimelineCanvas::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QPalette& pal = palette();
    painter.fillRect(rect(), pal.color(QPalette::Base));
    if (!doc_ || timeline_.rows.empty()) return;
    const QRectF area = plotArea();
    drawAxis(painter, area);
    // Row labels.
    painter.setPen(pal.color(QPalette::Text));
    const QFontMetrics fm = fontMetrics();
    for (size_t r = 0; r < timeline_.rows.size(); ++r)
        painter.drawText(
            QRectF(kMargin, rowRect(int(r)).top(), kLabelWidth - 6, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft,
            fm.elidedText(QString::fromStdString(timeline_.rows[r].label), Qt::ElideMiddle, kLabelWidth - 6));
    painter.drawText(QRectF(kMargin, rowRect(-1).top() - 2, kLabelWidth - 6, kStripHeight + 4),
                     Qt::AlignVCenter | Qt::AlignLeft, tr("GPU idle"));
    painter.save();
    painter.setClipRect(QRectF(area.left(), 0, area.width(), height()));
    drawStretches(painter, area);
    drawBars(painter);
    painter.restore();
    drawLegend(painter);
}

void TraceTimelineCanvas::drawAxis(QPainter& painter, const QRectF& area) const {
    const QPalette& pal = palette();
    const QFontMetrics fm = fontMetrics();
    const double axisY = fm.height() + 6;
    painter.setPen(QPen(pal.color(QPalette::Mid), 1));
    painter.drawLine(QPointF(area.left(), axisY), QPointF(area.right(), axisY));
    if (viewMs() <= 0) return;
    // About one tick per 100 pixels at a round step.
    const double raw = viewMs() / std::max(area.width() / 100.0, 1.0);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
    painter.setPen(pal.color(QPalette::Text));
    QLocale locale;
    for (double t = std::ceil(viewStartMs_ / step) * step; t <= viewStartMs_ + viewMs() + 1e-9; t += step) {
        const double x = xOf(t);
        painter.drawLine(QPointF(x, axisY - 3), QPointF(x, axisY));
        painter.drawText(QPointF(std::min(x + 2, area.right() - fm.horizontalAdvance("0000.0 ms")), axisY - 4),
                         locale.toString(t, 'g', 4) + " ms");
    }
    // The end of the step on the host: work to its right was launched in the step and ran after it.
    painter.setPen(QPen(pal.color(QPalette::Text), 1, Qt::DashLine));
    const double cpuEnd = xOf(timeline_.cpuMs);
    painter.drawLine(QPointF(cpuEnd, axisY), QPointF(cpuEnd, rowRect(int(timeline_.rows.size()) - 1).bottom()));
}

void TraceTimelineCanvas::drawStretches(QPainter& painter, const QRectF&) const {
    const bool anyGpu = hostRows(timeline_) < int(timeline_.rows.size());
    if (!anyGpu) return;
    const QRectF strip = rowRect(-1);
    const double gpuTop = strip.top(), gpuBottom = rowRect(int(timeline_.rows.size()) - 1).bottom();
    QColor idle = palette().color(QPalette::Mid);
    QColor idleShade = idle;
    idleShade.setAlpha(50);
    QColor boundShade = kHostBoundColor;
    boundShade.setAlpha(45);
    for (const TraceTimelineStretch& s : timeline_.idle) {
        const double x = xOf(s.startMs), w = std::max(xOf(s.startMs + s.ms) - x, 1.0);
        painter.fillRect(QRectF(x, gpuTop, w, gpuBottom - gpuTop), idleShade);
        painter.fillRect(QRectF(x, strip.top(), w, strip.height()), idle);
    }
    for (const TraceTimelineStretch& s : timeline_.hostBound) {
        const double x = xOf(s.startMs), w = std::max(xOf(s.startMs + s.ms) - x, 1.0);
        painter.fillRect(QRectF(x, gpuTop, w, gpuBottom - gpuTop), boundShade);
        painter.fillRect(QRectF(x, gpuTop, w, gpuBottom - gpuTop), QBrush(kHostBoundColor, Qt::BDiagPattern));
        painter.fillRect(QRectF(x, strip.top(), w, strip.height()), kHostBoundColor);
    }
}

void TraceTimelineCanvas::drawBars(QPainter& painter) const {
    const QFontMetrics fm = fontMetrics();
    const QRectF area = plotArea();
    const KinetoTrace& t = doc_->trace;
    for (const TraceTimelineBar& bar : timeline_.bars) {
        const QRectF r = barRect(bar);
        if (r.right() < area.left() || r.left() > area.right()) continue;
        painter.fillRect(r.adjusted(0, 1, 0, -1), barColor(bar));
        if (r.width() < 40) continue;
        const bool gpu = timeline_.rows[size_t(bar.row)].gpu;
        const std::string& name =
            gpu ? t.str(t.kernels[size_t(bar.index)].name) : t.str(t.operators[size_t(bar.index)].name);
        painter.setPen(Qt::black);
        const QRectF visible = r.intersected(area);
        painter.drawText(visible.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                         fm.elidedText(QString::fromStdString(name), Qt::ElideRight, int(visible.width()) - 5));
    }
}

void TraceTimelineCanvas::drawLegend(QPainter& painter) const {
    const QFontMetrics fm = fontMetrics();
    std::array<bool, size_t(KernelClass::Other) + 1> present{};
    for (const TraceTimelineBar& bar : timeline_.bars)
        if (timeline_.rows[size_t(bar.row)].gpu) present[size_t(doc_->trace.kernels[size_t(bar.index)].kind)] = true;
    QVector<QPair<QString, QColor>> items{{tr("host operator"), kHostColor},
                                          {tr("GPU idle"), palette().color(QPalette::Mid)},
                                          {tr("host-bound (GPU waited for the host)"), kHostBoundColor}};
    for (size_t k = 0; k < present.size(); ++k)
        if (present[k]) items.push_back({kernelClassLabel(KernelClass(k)), kernelClassColor(KernelClass(k))});
    double x = kMargin, y = rowRect(int(timeline_.rows.size()) - 1).bottom() + kGap + fm.height();
    painter.setPen(palette().color(QPalette::Text));
    for (const auto& [label, color] : items) {
        const double w = fm.ascent() + 2 + fm.horizontalAdvance(label) + 14;
        if (x + w > width() - kMargin && x > kMargin) {
            x = kMargin;
            y += fm.height() + 2;
        }
        painter.fillRect(QRectF(x, y - fm.ascent() + 2, fm.ascent() - 2, fm.ascent() - 2), color);
        painter.drawText(QPointF(x + fm.ascent() + 2, y), label);
        x += w;
    }
}

void TraceTimelineCanvas::wheelEvent(QWheelEvent* event) {
    const QRectF area = plotArea();
    if (timeline_.spanMs <= 0 || area.width() <= 0) return;
    const double fraction = std::clamp((event->position().x() - area.left()) / area.width(), 0.0, 1.0);
    const double atMouse = viewStartMs_ + fraction * viewMs();
    zoom_ = std::clamp(zoom_ * std::pow(1.0015, event->angleDelta().y()), 1.0, 100000.0);
    viewStartMs_ = std::clamp(atMouse - fraction * viewMs(), 0.0, timeline_.spanMs - viewMs());
    update();
    event->accept();
}

void TraceTimelineCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    dragFromX_ = event->position().x();
    dragFromStartMs_ = viewStartMs_;
}

void TraceTimelineCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton) || dragFromX_ < 0) return;
    const double perPixel = viewMs() / std::max(plotArea().width(), 1.0);
    viewStartMs_ = std::clamp(dragFromStartMs_ - (event->position().x() - dragFromX_) * perPixel, 0.0,
                              timeline_.spanMs - viewMs());
    update();
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
    const QRectF strip = rowRect(-1);
    const double gpuBottom = rowRect(int(timeline_.rows.size()) - 1).bottom();
    if (pos.y() >= strip.top() && pos.y() <= gpuBottom) {
        const double atMs = viewStartMs_ + (pos.x() - plotArea().left()) / plotArea().width() * viewMs();
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

bool TraceTimelineCanvas::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString tip = toolTipAt(help->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(event);
}

}  // namespace ts::gui
