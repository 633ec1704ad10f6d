#include "label_placement.h"

#include <qcustomplot.h>

#include <QRectF>

namespace ts::gui {

int placeLabels(const QVector<QCPItemText*>& byPriority, double pointRadiusPixels) {
    // Every point is an obstacle for the labels of the others.
    QVector<QRectF> points;
    for (QCPItemText* label : byPriority) {
        const QPointF p = label->position->pixelPosition();
        points << QRectF(p.x() - pointRadiusPixels, p.y() - pointRadiusPixels, 2 * pointRadiusPixels,
                         2 * pointRadiusPixels);
    }
    constexpr Qt::Alignment kPlaces[] = {Qt::AlignLeft | Qt::AlignBottom, Qt::AlignLeft | Qt::AlignTop,
                                         Qt::AlignRight | Qt::AlignBottom, Qt::AlignRight | Qt::AlignTop};
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
                const QRectF r =
                    QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
                bool free = true;
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
        if (!shown) label->setPositionAlignment(kPlaces[0]);
        if (!shown && i == 0) {
            placed << QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
            shown = true;
        }
        label->setVisible(shown);
    }
    return int(placed.size());
}

}  // namespace ts::gui
