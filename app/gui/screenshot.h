#pragma once
// Renders the explorer without a display (QT_QPA_PLATFORM=offscreen works): packaging, tests and
// documentation use it.
#include <QImage>
#include <QString>

#include "main_window.h"

namespace ts::gui {

// The whole window with `view` as the current tab.
QImage renderWindow(MainWindow& window, View view);
// Writes it as a PNG; false when the file cannot be written.
bool saveScreenshot(MainWindow& window, View view, const QString& file);

}  // namespace ts::gui
