#include "plot_style.h"

#include <qcustomplot.h>

namespace ts::gui {

void stylePlot(QCustomPlot* plot) {
    const QPalette& pal = plot->palette();
    const QColor text = pal.color(QPalette::Text);
    QColor grid = pal.color(QPalette::Mid);
    grid.setAlpha(110);
    plot->setBackground(pal.brush(QPalette::Base));
    for (QCPAxis* axis : plot->axisRect()->axes()) {
        axis->setBasePen(QPen(text, 1));
        axis->setTickPen(QPen(text, 1));
        axis->setSubTickPen(QPen(text, 1));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        axis->grid()->setSubGridPen(Qt::NoPen);
    }
    plot->legend->setBrush(pal.brush(QPalette::Base));
    plot->legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
    plot->legend->setTextColor(text);
}

}  // namespace ts::gui
