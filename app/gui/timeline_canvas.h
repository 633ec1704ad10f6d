#pragma once
// A trace viewer's canvas, shared by the Timeline of a model's iteration and of a PyTorch trace:
// named lanes (host threads, GPU streams, a thin strip of the GPU's idle stretches) of coloured,
// labelled blocks on one time axis, bands that shade stretches across lanes (idle, host-bound), a
// dashed marker and a legend. The wheel zooms about the mouse, dragging pans, a click on a block
// emits blockClicked, and hovering asks toolTipAt (a subclass says what a block is). Blocks carry
// a key (a graph operation, -1 none): setHighlightedKey outlines every block of that key.
#include <QColor>
#include <QString>
#include <QWidget>
#include <vector>

namespace ts::gui {

struct TimelineLane {
    QString label;
    bool strip = false;      // a thin lane (the GPU's idle stretches) without labels on its blocks
    bool elideLeft = false;  // long block labels keep their end ("…layer3.1"): a path's last part
};

struct TimelineBlock {
    int lane = 0;
    double startMs = 0, ms = 0;
    QColor color;
    QString label;  // drawn on the block where it fits
    int key = -1;
};

// Shading over lanes firstLane..lastLane (a stretch the GPU was idle, or waited for the host).
struct TimelineBand {
    double startMs = 0, ms = 0;
    QColor color;
    bool hatched = false;
    int firstLane = 0, lastLane = 0;
};

struct TimelinePicture {
    std::vector<TimelineLane> lanes;
    std::vector<TimelineBlock> blocks;  // drawn in order: a later one is on top
    std::vector<TimelineBand> bands;
    std::vector<std::pair<QString, QColor>> legend;
    double spanMs = 0;     // the time the whole width shows unzoomed
    double markerMs = -1;  // a dashed line across the lanes (the end of a step on the host); < 0 none
};

class TimelineCanvas : public QWidget {
    Q_OBJECT
public:
    explicit TimelineCanvas(QWidget* parent = nullptr);
    // A new picture starts unzoomed unless `keepView` (the same time axis redrawn: zoom and pan stay).
    void setPicture(TimelinePicture picture, bool keepView = false);
    const TimelinePicture& picture() const { return picture_; }
    // A line or two drawn above the time axis, wrapped to the width: a caption that changes with
    // every setting redraws the canvas only (a label beside it would relayout the window).
    void setCaption(const QString& caption);
    const QString& caption() const { return caption_; }
    void setHighlightedKey(int key);

    // Geometry, for hit tests and tests.
    QRectF laneRect(int lane) const;  // empty for a lane that does not exist
    QRectF blockRect(const TimelineBlock& block) const;
    int blockAt(const QPointF& pos) const;  // index into picture().blocks, -1 none; the topmost wins
    double msAt(double x) const;            // the time under a horizontal position
    double viewMs() const { return picture_.spanMs / zoom_; }
    double viewStartMs() const { return viewStartMs_; }
    // What hovering `pos` tells (empty: no tooltip). The base class names the block under it.
    virtual QString toolTipAt(const QPointF& pos) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

Q_SIGNALS:
    void blockClicked(int index);

protected:
    void paintEvent(QPaintEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF plotArea() const;  // where times are drawn (right of the lane labels)
    void measureCaption();
    double xOf(double ms) const;
    void drawAxis(QPainter& painter) const;
    void drawBands(QPainter& painter) const;
    void drawBlocks(QPainter& painter) const;
    void drawLegend(QPainter& painter) const;

    TimelinePicture picture_;
    QString caption_;
    double captionHeight_ = 0;
    int highlightedKey_ = -1;
    double zoom_ = 1;
    double viewStartMs_ = 0;
    double pressX_ = -1, pressStartMs_ = 0;
    bool dragged_ = false;
};

}  // namespace ts::gui
