#pragma once
// A horizontal bar of coloured segments (a figure split into parts) on a linear scale, with marker
// lines (a capacity, a peak) and a legend of the parts under it. Segments carry a key (a graph
// operation, -1 none): clicking one emits segmentClicked(key), double-clicking segmentActivated(key).
// A draggable bar emits dragged(value) as the mouse presses or moves along it. Colours follow the
// palette (text, frame, highlight) so that a dark theme reads as well as a light one.
#include <QColor>
#include <QString>
#include <QVector>
#include <QWidget>

namespace ts::gui {

class BreakdownBar : public QWidget {
    Q_OBJECT
public:
    struct Segment {
        QString label;
        double value = 0;
        QColor color;
        QString toolTip;
        int key = -1;
    };
    struct Marker {
        double value = 0;
        QString label;
    };

    explicit BreakdownBar(QWidget* parent = nullptr);
    // scaleMax: the value at the bar's right end (at least the segments' sum).
    void setSegments(const QVector<Segment>& segments, double scaleMax);
    void setMarkers(const QVector<Marker>& markers);
    void setHighlightedKey(int key);
    void setDraggable(bool on);
    const QVector<Segment>& segments() const { return segments_; }
    const QVector<Marker>& markers() const { return markers_; }
    // The segment under a point of the widget (-1 none) and where a segment lies (for tests).
    int segmentAt(const QPoint& pos) const;
    QRectF segmentRect(int index) const;
    double valueAt(double x) const;
    double xOfValue(double value) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

Q_SIGNALS:
    void segmentClicked(int key);
    void segmentActivated(int key);
    void dragged(double value);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF barRect() const;
    int legendLines(int width) const;

    QVector<Segment> segments_;
    QVector<Marker> markers_;
    double scaleMax_ = 1;
    int highlighted_ = -1;
    bool draggable_ = false;
    bool dragging_ = false;
};

// Qualitative colours that read on light and dark backgrounds alike (Tableau 10).
QColor categoryColor(int index);

}  // namespace ts::gui
