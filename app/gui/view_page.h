#pragma once
// One tab of the window: a view of an open model and its counterpart for an open trace, the one
// that fits what is open shown. A view with nothing to show for a trace (the batch-size plot,
// the roofline) has a one-line message saying why instead (traceMessagePage).
#include <QStackedWidget>

#include "main_window.h"

namespace ts::gui {

class ExplorerState;

class ViewPage : public QStackedWidget {
    Q_OBJECT
public:
    ViewPage(ExplorerState& state, QWidget* modelView, QWidget* traceView, QWidget* parent = nullptr);
    QWidget* modelView() const { return widget(0); }
    QWidget* traceView() const { return widget(1); }

private:
    void follow();
    ExplorerState& state_;
};

// A page that says why `view` (the batch-size plot, the roofline) shows nothing for a trace.
QWidget* traceMessagePage(View view, QWidget* parent = nullptr);

}  // namespace ts::gui
