#include "view_refresher.h"

#include <QEvent>
#include <QWidget>

namespace ts::gui {

ViewRefresher::ViewRefresher(QWidget* view, std::function<void()> refresh)
    : QObject(view), view_(view), refresh_(std::move(refresh)) {
    view_->installEventFilter(this);
}

void ViewRefresher::request() {
    // Visible to its window, not isVisible(): the current tab of a window not yet shown (tests,
    // screenshots) must be up to date when it is grabbed; a view in a background tab, or the
    // page of a tab that shows the other kind of document (view_page.h), waits.
    if (!view_->isVisibleTo(view_->window())) {
        stale_ = true;
        return;
    }
    stale_ = false;
    refresh_();
}

bool ViewRefresher::eventFilter(QObject* watched, QEvent* event) {
    // ShowToParent comes when a tab becomes current even while the window itself is not shown.
    if (watched != view_) return QObject::eventFilter(watched, event);
    if (stale_ && (event->type() == QEvent::ShowToParent || event->type() == QEvent::Show)) {
        stale_ = false;
        refresh_();
    } else if (event->type() == QEvent::PaletteChange) {
        request();  // a theme change: the colours taken from the palette are taken again
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace ts::gui
