#pragma once
// The Overview for an open trace: what was traced (GPU, steps, what the trace records), the
// median step's GPU time split into compute, exposed communication, host-bound and other idle
// time, GPU time by kernel class, and two tables: every step's busy / idle / communication /
// exposed / host-bound figures, and the operators by the GPU time they launched.
#include <QWidget>
#include <memory>

class QLabel;
class QStandardItemModel;
class QTreeView;

namespace ts::gui {

class BreakdownBar;
class ExplorerState;
class ViewRefresher;
struct TraceDocument;

class TraceOverviewView : public QWidget {
    Q_OBJECT
public:
    explicit TraceOverviewView(ExplorerState& state, QWidget* parent = nullptr);
    QString title() const;
    BreakdownBar* stepBar() const { return stepBar_; }
    BreakdownBar* classBar() const { return classBar_; }
    QStandardItemModel* stepModel() const { return steps_; }
    QStandardItemModel* operatorModel() const { return operators_; }

    enum StepColumn {
        StepNumber,
        HostMs,
        WindowMs,
        BusyMs,
        IdleMs,
        CommunicationMs,
        ExposedMs,
        HostBoundMs,
        Activities
    };
    enum OperatorColumn { OperatorName, Calls, GpuMs, CpuMs, Kernels };

private:
    void refresh();
    void fillBars(const TraceDocument& doc);
    void fillTables(const TraceDocument& doc);

    ExplorerState& state_;
    ViewRefresher* refresher_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* notes_ = nullptr;
    BreakdownBar* stepBar_ = nullptr;
    BreakdownBar* classBar_ = nullptr;
    QStandardItemModel* steps_ = nullptr;
    QStandardItemModel* operators_ = nullptr;
    QTreeView* stepTable_ = nullptr;
    QTreeView* operatorTable_ = nullptr;
    std::shared_ptr<const TraceDocument> shown_;
};

}  // namespace ts::gui
