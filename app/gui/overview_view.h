#pragma once
// The Overview: the headline predictions for the target GPU at the current settings, each with
// its interval and where it came from.
#include <QWidget>

class QLabel;

namespace ts::gui {

class ExplorerState;

class OverviewView : public QWidget {
    Q_OBJECT
public:
    explicit OverviewView(ExplorerState& state, QWidget* parent = nullptr);
    void refresh();

private:
    ExplorerState& state_;
    QLabel* title_ = nullptr;
    QLabel* throughput_ = nullptr;
    QLabel* iteration_ = nullptr;
    QLabel* memory_ = nullptr;
    QLabel* maxBatch_ = nullptr;
    QLabel* source_ = nullptr;
};

}  // namespace ts::gui
