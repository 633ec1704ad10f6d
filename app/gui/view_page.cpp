#include "view_page.h"

#include <QLabel>
#include <QVBoxLayout>

#include "explorer_state.h"

namespace ts::gui {

ViewPage::ViewPage(ExplorerState& state, QWidget* modelView, QWidget* traceView, QWidget* parent)
    : QStackedWidget(parent), state_(state) {
    addWidget(modelView);
    addWidget(traceView);
    // Before the views' own refreshers: the page that becomes current refreshes as it is shown.
    connect(&state_, &ExplorerState::changed, this, &ViewPage::follow);
    follow();
}

void ViewPage::follow() {
    setCurrentIndex(state_.hasTrace() ? 1 : 0);
}

QWidget* traceMessagePage(View view, QWidget* parent) {
    const QString why =
        view == View::BatchPlot
            ? ViewPage::tr(
                  "A trace records one batch size: there is no batch-size curve to draw. Where it recorded "
                  "its shapes, the batch-size control predicts it at another (the GPUs view); open the model "
                  "or a TrainScope profile of it for the curve.")
            : ViewPage::tr(
                  "A trace holds no model graph: the roofline needs each layer's FLOPs and bytes. The "
                  "Overview, Modules and Timeline show the trace's measured operators and kernels.");
    auto* page = new QWidget(parent);
    auto* layout = new QVBoxLayout(page);
    auto* label = new QLabel(why, page);
    label->setObjectName("traceMessage");
    label->setWordWrap(true);
    label->setAlignment(Qt::AlignCenter);
    layout->addWidget(label);
    return page;
}

}  // namespace ts::gui
