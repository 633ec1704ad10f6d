#pragma once
// The Modules view for an open trace: the module scopes the trace recorded ("forward/Linear_0",
// from record_function labels and nn.Module names) as a tree, each top-level operator under its
// scope, with its calls, host time, the GPU time it launched and its kernels per step; a filter
// keeps the rows whose name matches (and their scopes). Without recorded scopes the operators
// stand at the top level.
#include <QWidget>
#include <memory>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTreeView;

namespace ts::gui {

class ExplorerState;
class ViewRefresher;
struct TraceDocument;

class TraceModulesView : public QWidget {
    Q_OBJECT
public:
    explicit TraceModulesView(ExplorerState& state, QWidget* parent = nullptr);
    QStandardItemModel* model() const { return model_; }
    QTreeView* tree() const { return tree_; }
    QLineEdit* filter() const { return filter_; }

    enum Column { Name, Calls, CpuMs, GpuMs, Kernels, GpuShare };

private:
    void refresh();

    ExplorerState& state_;
    ViewRefresher* refresher_ = nullptr;
    QLabel* caption_ = nullptr;
    QLineEdit* filter_ = nullptr;
    QStandardItemModel* model_ = nullptr;
    QTreeView* tree_ = nullptr;
    std::shared_ptr<const TraceDocument> shown_;
};

}  // namespace ts::gui
