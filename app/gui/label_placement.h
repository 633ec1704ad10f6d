#pragma once
// Labels beside scatter points without overlap. QCustomPlot draws text items where they are put
// and has no placement of its own, so this is written here: each label, in priority order, takes
// the first of four positions around its point (above right, below right, above left, below left)
// where it overlaps no label already placed and no other point (failing that, no label), and is
// hidden when none is free; the first label always shows.
// Run it before every replot (QCustomPlot::beforeReplot): pixel positions change with the size.
#include <QVector>

class QCPItemText;

namespace ts::gui {

// `byPriority`: most important first (it is placed first and is never pushed out by the others).
// Returns how many labels are shown.
int placeLabels(const QVector<QCPItemText*>& byPriority, double pointRadiusPixels);

}  // namespace ts::gui
