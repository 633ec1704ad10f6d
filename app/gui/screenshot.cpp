#include "screenshot.h"

#include <QApplication>

namespace ts::gui {

QImage renderWindow(MainWindow& window, View view) {
    if (!window.isVisible()) {
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.show();
    }
    window.showView(view);
    QApplication::processEvents();  // lay out the newly current tab before grabbing it
    return window.grab().toImage();
}

bool saveScreenshot(MainWindow& window, View view, const QString& file) {
    return renderWindow(window, view).save(file, "PNG");
}

}  // namespace ts::gui
