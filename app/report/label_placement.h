#pragma once
// Labels beside scatter points without overlap. QCustomPlot draws text items where they are put
// and has no placement of its own, so this is written here: each label, in priority order, takes
// the first of eight positions around its point (the four corners, then above, below, right and
// left) where it overlaps no label already placed and no other point (failing that, no label), and
// is hidden when none is free; the first label always shows. Used by the GPUs view and the report.
// Run it before every replot (QCustomPlot::beforeReplot): pixel positions change with the size.
#include <QVector>

class QCPItemText;
class QCustomPlot;

namespace ts::report {

// `byPriority`: most important first (it is placed first and is never pushed out by the others).
// Returns how many labels are shown.
int placeLabels(const QVector<QCPItemText*>& byPriority, double pointRadiusPixels);
// For a plot drawn once at its size (the report's): placeLabels, then each label left out is put
// further from its point, at the nearest free place, with a thin line to it. Run after the plot is
// laid out (replot) at the size it is drawn at.
int placeLabelsWithLeaders(QCustomPlot& plot, const QVector<QCPItemText*>& byPriority, double pointRadiusPixels);

}  // namespace ts::report
