#include "breakdown_bar.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

namespace ts::gui {

QColor categoryColor(int index) {
    static const QColor colors[] = {QColor(78, 121, 167),  QColor(242, 142, 43),  QColor(225, 87, 89),
                                    QColor(118, 183, 178), QColor(89, 161, 79),   QColor(237, 201, 72),
                                    QColor(176, 122, 161), QColor(255, 157, 167), QColor(156, 117, 95),
                                    QColor(186, 176, 172)};
    return colors[std::abs(index) % 10];
}

namespace {

constexpr int kBarHeight = 22;
constexpr int kMargin = 4;

// Legend items flowed into lines of `width`: one rectangle per segment.
QVector<QRect> legendItems(const QVector<BreakdownBar::Segment>& segments, const QFontMetrics& fm, int width, int top) {
    QVector<QRect> rects;
    const int box = fm.height() - 4;
    int x = kMargin, y = top;
    for (const BreakdownBar::Segment& s : segments) {
        const int w = box + 4 + fm.horizontalAdvance(s.label) + 12;
        if (x > kMargin && x + w > width - kMargin) {
            x = kMargin;
            y += fm.height() + 2;
        }
        rects.push_back(QRect(x, y, w, fm.height()));
        x += w;
    }
    return rects;
}

}  // namespace

BreakdownBar::BreakdownBar(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void BreakdownBar::setSegments(const QVector<Segment>& segments, double scaleMax) {
    segments_ = segments;
    double sum = 0;
    for (const Segment& s : segments_) sum += std::max(s.value, 0.0);
    scaleMax_ = std::max({scaleMax, sum, 1e-30});
    updateGeometry();
    update();
}

void BreakdownBar::setMarkers(const QVector<Marker>& markers) {
    markers_ = markers;
    update();
}

void BreakdownBar::setHighlightedKey(int key) {
    if (key == highlighted_) return;
    highlighted_ = key;
    update();
}

void BreakdownBar::setDraggable(bool on) {
    draggable_ = on;
    setCursor(on ? Qt::SizeHorCursor : Qt::ArrowCursor);
}

QRectF BreakdownBar::barRect() const {
    const int top = fontMetrics().height() + 2;  // a row for the markers' labels
    return QRectF(kMargin, top, width() - 2 * kMargin, kBarHeight);
}

int BreakdownBar::legendLines(int width) const {
    const QVector<QRect> items = legendItems(segments_, fontMetrics(), width, 0);
    return items.isEmpty() ? 0 : items.back().top() / (fontMetrics().height() + 2) + 1;
}

int BreakdownBar::heightForWidth(int width) const {
    const int lines = std::max(legendLines(width), 1);
    return fontMetrics().height() + 2 + kBarHeight + 6 + lines * (fontMetrics().height() + 2);
}

QSize BreakdownBar::sizeHint() const {
    return QSize(400, heightForWidth(std::max(width(), 400)));
}

QSize BreakdownBar::minimumSizeHint() const {
    return QSize(100, sizeHint().height());
}

double BreakdownBar::xOfValue(double value) const {
    const QRectF bar = barRect();
    return bar.left() + bar.width() * std::clamp(value / scaleMax_, 0.0, 1.0);
}

double BreakdownBar::valueAt(double x) const {
    const QRectF bar = barRect();
    return std::clamp((x - bar.left()) / std::max(bar.width(), 1.0), 0.0, 1.0) * scaleMax_;
}

QRectF BreakdownBar::segmentRect(int index) const {
    const QRectF bar = barRect();
    double start = 0;
    for (int i = 0; i < index; ++i) start += std::max(segments_[i].value, 0.0);
    const double end = start + std::max(segments_[index].value, 0.0);
    return QRectF(QPointF(xOfValue(start), bar.top()), QPointF(xOfValue(end), bar.bottom()));
}

int BreakdownBar::segmentAt(const QPoint& pos) const {
    for (int i = 0; i < segments_.size(); ++i)
        if (segmentRect(i).adjusted(0, -2, 0, 2).contains(pos)) return i;
    const QVector<QRect> legend = legendItems(segments_, fontMetrics(), width(), int(barRect().bottom()) + 6);
    for (int i = 0; i < legend.size(); ++i)
        if (legend[i].contains(pos)) return i;
    return -1;
}

void BreakdownBar::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    const QRectF bar = barRect();
    painter.setPen(Qt::NoPen);
    painter.setBrush(pal.color(QPalette::Base));
    painter.drawRect(bar);
    for (int i = 0; i < segments_.size(); ++i) {
        const QRectF r = segmentRect(i);
        painter.setBrush(segments_[i].color);
        painter.setPen(QPen(pal.color(QPalette::Base), 1));
        painter.drawRect(r);
    }
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(pal.color(QPalette::Mid), 1));
    painter.drawRect(bar);
    for (int i = 0; i < segments_.size(); ++i)
        if (highlighted_ >= 0 && segments_[i].key == highlighted_) {
            painter.setPen(QPen(pal.color(QPalette::Highlight), 3));
            painter.drawRect(segmentRect(i).adjusted(-1, -2, 1, 2));
        }

    const QFontMetrics fm = fontMetrics();
    for (const Marker& m : markers_) {
        const double x = xOfValue(m.value);
        painter.setPen(QPen(pal.color(QPalette::WindowText), 2, Qt::DashLine));
        painter.drawLine(QPointF(x, bar.top() - 3), QPointF(x, bar.bottom() + 3));
        const int w = fm.horizontalAdvance(m.label);
        const double textX = std::clamp(x - w / 2.0, 0.0, double(width() - w));
        painter.setPen(pal.color(QPalette::WindowText));
        painter.drawText(QPointF(textX, fm.ascent()), m.label);
    }

    const QVector<QRect> legend = legendItems(segments_, fm, width(), int(bar.bottom()) + 6);
    const int box = fm.height() - 4;
    for (int i = 0; i < legend.size(); ++i) {
        const QRect& r = legend[i];
        painter.setPen(Qt::NoPen);
        painter.setBrush(segments_[i].color);
        painter.drawRect(QRect(r.left(), r.top() + 2, box, box));
        painter.setPen(pal.color(QPalette::WindowText));
        QFont font = painter.font();
        font.setBold(highlighted_ >= 0 && segments_[i].key == highlighted_);
        painter.setFont(font);
        painter.drawText(QPoint(r.left() + box + 4, r.top() + fm.ascent()), segments_[i].label);
    }
}

void BreakdownBar::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    if (draggable_) {
        dragging_ = true;
        Q_EMIT dragged(valueAt(event->position().x()));
        return;
    }
    const int i = segmentAt(event->position().toPoint());
    if (i >= 0) Q_EMIT segmentClicked(segments_[i].key);
}

void BreakdownBar::mouseMoveEvent(QMouseEvent* event) {
    if (dragging_)
        Q_EMIT dragged(valueAt(event->position().x()));
    else if (!draggable_)
        setCursor(segmentAt(event->position().toPoint()) >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
}

void BreakdownBar::mouseReleaseEvent(QMouseEvent* event) {
    if (dragging_ && event->button() == Qt::LeftButton) {
        Q_EMIT dragged(valueAt(event->position().x()));
        dragging_ = false;
    }
}

void BreakdownBar::mouseDoubleClickEvent(QMouseEvent* event) {
    const int i = segmentAt(event->position().toPoint());
    if (!draggable_ && i >= 0) Q_EMIT segmentActivated(segments_[i].key);
}

bool BreakdownBar::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int i = segmentAt(help->pos());
        if (i >= 0 && !segments_[i].toolTip.isEmpty())
            QToolTip::showText(help->globalPos(), segments_[i].toolTip, this);
        else if (!toolTip().isEmpty())
            QToolTip::showText(help->globalPos(), toolTip(), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

}  // namespace ts::gui
