#pragma once
// Repaints a view when the state changes only while the user can see it: a view in a background tab
// is marked stale and refreshed when it is shown again, so that a dragged batch slider pays for the
// visible view alone. A palette change (light or dark theme) refreshes it too.
#include <QObject>
#include <functional>

class QWidget;

namespace ts::gui {

class ViewRefresher : public QObject {
    Q_OBJECT
public:
    // `refresh` repaints `view` from the state; the refresher is a child of `view`.
    ViewRefresher(QWidget* view, std::function<void()> refresh);
    // Refreshes now when the view is not explicitly hidden (a background tab is), else on its next show.
    void request();
    bool stale() const { return stale_; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* view_;
    std::function<void()> refresh_;
    bool stale_ = false;
};

}  // namespace ts::gui
