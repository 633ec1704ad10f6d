#pragma once
// One look for every QCustomPlot of the explorer, from the widget's palette: background, axes, tick
// labels, grid and legend follow a light or dark theme. Call it again on a palette change.
class QCustomPlot;

namespace ts::gui {

void stylePlot(QCustomPlot* plot);

}  // namespace ts::gui
