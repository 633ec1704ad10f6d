#include "timeline_canvas.h"

#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace ts::gui {

namespace {

constexpr int kMargin = 8;
constexpr int kLabelWidth = 150;
constexpr int kLaneHeight = 24;
constexpr int kStripHeight = 12;
constexpr int kGap = 4;
constexpr double kMaxZoom = 100000;
constexpr int kDragPixels = 3;  // a press that moves less is a click

// Black or white, whichever reads on `background`.
QColor textOn(const QColor& background) {
    return background.lightnessF() > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

}  // namespace

TimelineCanvas::TimelineCanvas(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
}

void TimelineCanvas::setPicture(TimelinePicture picture, bool keepView) {
    // The height follows the lanes and the legend: only a change of those relayouts the window.
    const bool sameHeight =
        picture.lanes.size() == picture_.lanes.size() && picture.legend.size() == picture_.legend.size();
    picture_ = std::move(picture);
    if (!keepView) zoom_ = 1;
    viewStartMs_ = keepView ? std::clamp(viewStartMs_, 0.0, std::max(0.0, picture_.spanMs - viewMs())) : 0;
    if (!sameHeight) updateGeometry();
    update();
}

void TimelineCanvas::setCaption(const QString& caption) {
    if (caption == caption_) return;
    caption_ = caption;
    measureCaption();
    update();
}

void TimelineCanvas::measureCaption() {
    // Measured once per text and width: every lane's geometry is below it.
    const QRect text = fontMetrics().boundingRect(QRect(0, 0, std::max(100, width() - 2 * kMargin), 10000),
                                                  Qt::TextWordWrap, caption_);
    captionHeight_ = caption_.isEmpty() ? 0 : text.height() + 8;
}

void TimelineCanvas::resizeEvent(QResizeEvent* event) {
    measureCaption();
    QWidget::resizeEvent(event);
}

void TimelineCanvas::setHighlightedKey(int key) {
    if (key == highlightedKey_) return;
    highlightedKey_ = key;
    update();
}

QSize TimelineCanvas::sizeHint() const {
    const int lanes = int(picture_.lanes.size());
    const int legend = 3 * fontMetrics().height();
    const double bottom = lanes > 0 ? laneRect(lanes - 1).bottom() : captionHeight_ + fontMetrics().height() + 10;
    return {800, int(bottom) + kGap + legend + kMargin};
}

QRectF TimelineCanvas::plotArea() const {
    return QRectF(kMargin + kLabelWidth, 0, std::max(10, width() - 2 * kMargin - kLabelWidth), height());
}

QRectF TimelineCanvas::laneRect(int lane) const {
    if (lane < 0 || size_t(lane) >= picture_.lanes.size()) return {};
    double y = captionHeight_ + fontMetrics().height() + 10;  // under the caption and the time axis
    for (int i = 0; i < lane; ++i) y += (picture_.lanes[size_t(i)].strip ? kStripHeight : kLaneHeight) + kGap;
    const QRectF area = plotArea();
    return QRectF(area.left(), y, area.width(), picture_.lanes[size_t(lane)].strip ? kStripHeight : kLaneHeight);
}

double TimelineCanvas::xOf(double ms) const {
    const QRectF area = plotArea();
    return area.left() + (viewMs() > 0 ? (ms - viewStartMs_) / viewMs() * area.width() : 0);
}

double TimelineCanvas::msAt(double x) const {
    const QRectF area = plotArea();
    return viewStartMs_ + (x - area.left()) / area.width() * viewMs();
}

QRectF TimelineCanvas::blockRect(const TimelineBlock& block) const {
    const QRectF lane = laneRect(block.lane);
    const double left = xOf(block.startMs);
    return QRectF(left, lane.top(), std::max(xOf(block.startMs + block.ms) - left, 1.0), lane.height());
}

int TimelineCanvas::blockAt(const QPointF& pos) const {
    for (int i = int(picture_.blocks.size()) - 1; i >= 0; --i)
        if (blockRect(picture_.blocks[size_t(i)]).adjusted(-1, 0, 1, 0).contains(pos)) return i;
    return -1;
}

void TimelineCanvas::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QPalette& pal = palette();
    painter.fillRect(rect(), pal.color(QPalette::Base));
    if (!caption_.isEmpty()) {
        painter.setPen(pal.color(QPalette::Text));
        painter.drawText(QRectF(kMargin, 2, width() - 2 * kMargin, captionHeight_), Qt::TextWordWrap, caption_);
    }
    if (picture_.lanes.empty()) return;
    const QFontMetrics fm = fontMetrics();
    drawAxis(painter);
    painter.setPen(pal.color(QPalette::Text));
    for (size_t l = 0; l < picture_.lanes.size(); ++l) {
        const QRectF lane = laneRect(int(l));
        painter.drawText(QRectF(kMargin, lane.top() - 2, kLabelWidth - 6, lane.height() + 4),
                         Qt::AlignVCenter | Qt::AlignLeft,
                         fm.elidedText(picture_.lanes[l].label, Qt::ElideMiddle, kLabelWidth - 6));
    }
    const QRectF area = plotArea();
    painter.save();
    painter.setClipRect(QRectF(area.left(), 0, area.width(), height()));
    drawBands(painter);
    drawBlocks(painter);
    painter.restore();
    // The marker may fall on the plot's right edge (a step that ends with its host work).
    if (picture_.markerMs >= 0 && picture_.markerMs >= viewStartMs_ && picture_.markerMs <= viewStartMs_ + viewMs()) {
        painter.setPen(QPen(pal.color(QPalette::Text), 1, Qt::DashLine));
        const double x = std::min(xOf(picture_.markerMs), area.right() - 1);
        painter.drawLine(QPointF(x, captionHeight_ + fm.height() + 6),
                         QPointF(x, laneRect(int(picture_.lanes.size()) - 1).bottom()));
    }
    drawLegend(painter);
}

void TimelineCanvas::drawAxis(QPainter& painter) const {
    const QPalette& pal = palette();
    const QFontMetrics fm = fontMetrics();
    const QRectF area = plotArea();
    const double axisY = captionHeight_ + fm.height() + 6;
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
}

void TimelineCanvas::drawBands(QPainter& painter) const {
    for (const TimelineBand& band : picture_.bands) {
        const QRectF first = laneRect(band.firstLane), last = laneRect(band.lastLane);
        if (first.isNull() || last.isNull()) continue;
        const double x = xOf(band.startMs), w = std::max(xOf(band.startMs + band.ms) - x, 1.0);
        const QRectF r(x, first.top(), w, last.bottom() - first.top());
        QColor shade = band.color;
        shade.setAlpha(45);
        painter.fillRect(r, shade);
        if (band.hatched) painter.fillRect(r, QBrush(band.color, Qt::BDiagPattern));
    }
}

void TimelineCanvas::drawBlocks(QPainter& painter) const {
    const QFontMetrics fm = fontMetrics();
    const QRectF area = plotArea();
    const QPalette& pal = palette();
    for (const TimelineBlock& block : picture_.blocks) {
        const QRectF r = blockRect(block);
        if (r.right() < area.left() || r.left() > area.right()) continue;
        const TimelineLane& lane = picture_.lanes[size_t(block.lane)];
        const bool strip = lane.strip;
        painter.fillRect(strip ? r : r.adjusted(0, 1, 0, -1), block.color);
        // Neighbours of one colour stay apart: a hairline at each block's start.
        if (!strip && r.width() > 4) {
            painter.setPen(QPen(block.color.darker(140), 1));
            painter.drawLine(r.topLeft() + QPointF(0, 1), r.bottomLeft() - QPointF(0, 1));
        }
        if (strip || r.width() < 24 || block.label.isEmpty()) continue;
        const QRectF visible = r.intersected(area).adjusted(3, 0, -2, 0);
        const QString text =
            fm.elidedText(block.label, lane.elideLeft ? Qt::ElideLeft : Qt::ElideRight, int(visible.width()));
        // A name cut to a letter or two says nothing: then none.
        if (text != block.label && text.size() < 4) continue;
        painter.setPen(textOn(block.color));
        painter.drawText(visible, Qt::AlignVCenter | Qt::AlignLeft, text);
    }
    // The highlighted key's blocks on top, outlined, so that a thin one still shows.
    if (highlightedKey_ < 0) return;
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(pal.color(QPalette::Highlight), 3));
    for (const TimelineBlock& block : picture_.blocks)
        if (block.key == highlightedKey_) painter.drawRect(blockRect(block).adjusted(-1, -1, 1, 1));
}

void TimelineCanvas::drawLegend(QPainter& painter) const {
    const QFontMetrics fm = fontMetrics();
    double x = kMargin, y = laneRect(int(picture_.lanes.size()) - 1).bottom() + kGap + fm.height();
    painter.setPen(palette().color(QPalette::Text));
    for (const auto& [label, color] : picture_.legend) {
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

void TimelineCanvas::wheelEvent(QWheelEvent* event) {
    const QRectF area = plotArea();
    if (picture_.spanMs <= 0 || area.width() <= 0) return;
    const double fraction = std::clamp((event->position().x() - area.left()) / area.width(), 0.0, 1.0);
    const double atMouse = viewStartMs_ + fraction * viewMs();
    zoom_ = std::clamp(zoom_ * std::pow(1.0015, event->angleDelta().y()), 1.0, kMaxZoom);
    viewStartMs_ = std::clamp(atMouse - fraction * viewMs(), 0.0, picture_.spanMs - viewMs());
    update();
    event->accept();
}

void TimelineCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    pressX_ = event->position().x();
    pressStartMs_ = viewStartMs_;
    dragged_ = false;
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton) || pressX_ < 0) return;
    const double dx = event->position().x() - pressX_;
    if (!dragged_ && std::abs(dx) < kDragPixels) return;
    dragged_ = true;
    setCursor(Qt::ClosedHandCursor);
    const double perPixel = viewMs() / std::max(plotArea().width(), 1.0);
    viewStartMs_ = std::clamp(pressStartMs_ - dx * perPixel, 0.0, std::max(0.0, picture_.spanMs - viewMs()));
    update();
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(event);
    unsetCursor();
    const bool click = pressX_ >= 0 && !dragged_;
    pressX_ = -1;
    if (!click) return;
    if (const int i = blockAt(event->position()); i >= 0) Q_EMIT blockClicked(i);
}

QString TimelineCanvas::toolTipAt(const QPointF& pos) const {
    const int i = blockAt(pos);
    return i >= 0 ? picture_.blocks[size_t(i)].label : QString();
}

bool TimelineCanvas::event(QEvent* event) {
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
