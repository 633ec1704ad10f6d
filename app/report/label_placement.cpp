#include "label_placement.h"

#include <qcustomplot.h>

#include <QRectF>
#include <cmath>

namespace ts::report {

int placeLabels(const QVector<QCPItemText*>& byPriority, double pointRadiusPixels) {
    // Every point is an obstacle for the labels of the others.
    QVector<QRectF> points;
    for (QCPItemText* label : byPriority) {
        const QPointF p = label->position->pixelPosition();
        points << QRectF(p.x() - pointRadiusPixels, p.y() - pointRadiusPixels, 2 * pointRadiusPixels,
                         2 * pointRadiusPixels);
    }
    // The corners first (a label there leaves its point clear), then the sides.
    constexpr Qt::Alignment kPlaces[] = {Qt::AlignLeft | Qt::AlignBottom,    Qt::AlignLeft | Qt::AlignTop,
                                         Qt::AlignRight | Qt::AlignBottom,   Qt::AlignRight | Qt::AlignTop,
                                         Qt::AlignHCenter | Qt::AlignBottom, Qt::AlignHCenter | Qt::AlignTop,
                                         Qt::AlignLeft | Qt::AlignVCenter,   Qt::AlignRight | Qt::AlignVCenter};
    // The padding each label came with (placement adds to it): the same on every run.
    static const char* kPaddingProperty = "trainscopeBasePadding";
    QVector<QMargins> basePadding;
    for (QCPItemText* label : byPriority) {
        if (!label->property(kPaddingProperty).isValid())
            label->setProperty(kPaddingProperty, QVariant::fromValue(label->padding()));
        basePadding << label->property(kPaddingProperty).value<QMargins>();
    }
    QVector<QRectF> placed;
    for (int i = 0; i < byPriority.size(); ++i) {
        QCPItemText* label = byPriority[i];
        // Clear of labels and points; else clear of labels only (points sit close where GPUs cost
        // the same); the first label shows in any case.
        bool shown = false;
        for (bool avoidPoints : {true, false}) {
            for (Qt::Alignment place : kPlaces) {
                label->setPositionAlignment(place);
                // The anchors give the rectangle QCustomPlot will draw (text, padding, alignment).
                // A label beside its point (not at a corner) keeps clear of the point's disc.
                QMargins padding = basePadding[i];
                const int clear = int(std::ceil(pointRadiusPixels));
                if (place & Qt::AlignHCenter)
                    padding += place & Qt::AlignBottom ? QMargins(0, 0, 0, clear) : QMargins(0, clear, 0, 0);
                if (place & Qt::AlignVCenter)
                    padding += place & Qt::AlignLeft ? QMargins(clear, 0, 0, 0) : QMargins(0, 0, clear, 0);
                label->setPadding(padding);
                const QRectF r =
                    QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
                // Inside the axis rect the label is clipped to, or part of it is not drawn.
                bool free = !label->clipToAxisRect() || !label->clipAxisRect() ||
                            QRectF(label->clipAxisRect()->rect()).contains(r);
                for (const QRectF& other : placed) free = free && !r.intersects(other);
                for (int j = 0; avoidPoints && j < points.size() && free; ++j)
                    free = j == i || !r.intersects(points[j]);
                if (free) {
                    placed << r;
                    shown = true;
                    break;
                }
            }
            if (shown) break;
        }
        if (!shown) {
            label->setPositionAlignment(kPlaces[0]);
            label->setPadding(basePadding[i]);
        }
        if (!shown && i == 0) {
            placed << QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
            shown = true;
        }
        label->setVisible(shown);
    }
    return int(placed.size());
}

int placeLabelsWithLeaders(QCustomPlot& plot, const QVector<QCPItemText*>& byPriority, double pointRadiusPixels) {
    int shown = placeLabels(byPriority, pointRadiusPixels);
    QVector<QRectF> taken;  // shown labels and every point
    QVector<QPointF> points;
    for (QCPItemText* label : byPriority) {
        const QPointF p = label->position->pixelPosition();
        points << p;
        taken << QRectF(p.x() - pointRadiusPixels, p.y() - pointRadiusPixels, 2 * pointRadiusPixels,
                        2 * pointRadiusPixels);
        if (label->visible())
            taken << QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
    }
    const QRectF area = plot.axisRect()->rect();
    const QPen leaderPen(QColor(150, 150, 150), 1);
    for (int i = 0; i < byPriority.size(); ++i) {
        QCPItemText* label = byPriority[i];
        if (label->visible()) continue;
        const QPointF point = points[i];
        bool placed = false;
        // Rings further and further out, sixteen directions each, the nearest free place first.
        for (int ring = 1; ring <= 12 && !placed; ++ring) {
            const double distance = ring * 3.5 * pointRadiusPixels + pointRadiusPixels;
            for (int d = 0; d < 16 && !placed; ++d) {
                const double angle = M_PI / 8 * d + M_PI / 16;  // off the axes' directions
                const QPointF at = point + distance * QPointF(std::cos(angle), -std::sin(angle));
                // The label grows away from its point.
                label->setPositionAlignment((std::cos(angle) >= 0 ? Qt::AlignLeft : Qt::AlignRight) |
                                            (std::sin(angle) >= 0 ? Qt::AlignBottom : Qt::AlignTop));
                label->position->setPixelPosition(at);
                const QRectF r =
                    QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
                bool free = area.contains(r);
                for (const QRectF& other : taken) free = free && !r.intersects(other);
                if (!free) continue;
                placed = true;
                taken << r;
                label->setVisible(true);
                auto* leader = new QCPItemLine(&plot);
                leader->setPen(leaderPen);
                leader->start->setPixelPosition(point);
                leader->end->setPixelPosition(at);
                leader->setClipToAxisRect(true);
                ++shown;
            }
        }
        if (!placed) label->position->setPixelPosition(point);
    }
    return shown;
}

}  // namespace ts::report
