#pragma once
// What the explorer's offscreen view tests share (test_views.cpp, test_view_controls.cpp,
// test_trace_views.cpp): the main window drawn without a display.
#include <qcustomplot.h>

#include <QApplication>

#include "main_window.h"

namespace guitest {

// `window` drawn offscreen with `view` current and laid out, its plots replotted.
inline void showOffscreen(ts::gui::MainWindow& window, ts::gui::View view) {
    if (!window.isVisible()) {
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.show();
    }
    window.showView(view);
    QApplication::processEvents();
    for (QCustomPlot* plot : window.viewWidget(view)->findChildren<QCustomPlot*>()) plot->replot();
}

}  // namespace guitest
