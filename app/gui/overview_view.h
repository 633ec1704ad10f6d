#pragma once
// The Overview: the headline predictions for the target GPU at the current settings, each with
// its interval and where it came from; bars of the iteration time by top-level module (click: select
// the module in every view; double-click: open it in the module tree) and of memory by category
// against the GPU's capacity. Dragging along the throughput or the memory bar sets the batch size.
// A language model's throughput is headlined in tokens per second, its samples beside them.
#include <QWidget>
#include <memory>
#include <vector>

class QFormLayout;
class QLabel;

namespace ts {
class Graph;
}

namespace ts::gui {

class BreakdownBar;
class ExplorerState;
class ViewRefresher;
struct PredictionSnapshot;

class OverviewView : public QWidget {
    Q_OBJECT
public:
    explicit OverviewView(ExplorerState& state, QWidget* parent = nullptr);
    void refresh();
    BreakdownBar* timeBar() const { return timeBar_; }
    BreakdownBar* memoryBar() const { return memoryBar_; }
    BreakdownBar* throughputBar() const { return throughputBar_; }

Q_SIGNALS:
    // A module's bar was double-clicked: its first graph operation.
    void moduleActivated(int op);

private:
    void updateModuleMap();
    void refreshBars();
    void showSelection(int op);
    void batchForThroughput(double rate);  // in the bar's unit: samples/s, or tokens/s
    void batchForMemory(double bytes);

    ExplorerState& state_;
    std::shared_ptr<const PredictionSnapshot> snapshot_;  // what the view shows
    ViewRefresher* refresher_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* throughput_ = nullptr;
    QLabel* iteration_ = nullptr;
    QLabel* memory_ = nullptr;
    QLabel* maxBatch_ = nullptr;
    QLabel* source_ = nullptr;
    QLabel* notes_ = nullptr;  // the prediction's notes; its row hidden when it has none
    QFormLayout* figures_ = nullptr;
    BreakdownBar* throughputBar_ = nullptr;
    BreakdownBar* timeBar_ = nullptr;
    BreakdownBar* memoryBar_ = nullptr;
    // Per graph operation: the first operation of its top-level module (the time bar's keys).
    std::vector<int> moduleKeyOfOp_;
    std::vector<QString> moduleNameOfKey_;  // by key
    std::shared_ptr<const Graph> mappedGraph_;  // the graph moduleKeyOfOp_ numbers the operations of
};

}  // namespace ts::gui
