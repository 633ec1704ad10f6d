#pragma once
// The Modules view: the module tree with a filter line (a module stays when any operation under it
// matches), sortable by any column; selecting a row selects its layer in every view, and a layer
// selected elsewhere is shown here, its module expanded.
#include <QWidget>

class QLineEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace ts::gui {

class ExplorerState;
class ModuleTreeModel;
class ViewRefresher;

class ModuleTreeView : public QWidget {
    Q_OBJECT
public:
    explicit ModuleTreeView(ExplorerState& state, QWidget* parent = nullptr);
    ModuleTreeModel* model() const { return model_; }
    QSortFilterProxyModel* proxy() const { return proxy_; }
    QTreeView* tree() const { return tree_; }
    QLineEdit* filter() const { return filter_; }

private:
    void refresh();
    void showSelection(int op);
    void currentRowChanged(const QModelIndex& current);

    ExplorerState& state_;
    ModuleTreeModel* model_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    QTreeView* tree_ = nullptr;
    QLineEdit* filter_ = nullptr;
    ViewRefresher* refresher_ = nullptr;
    int generation_ = -1;
    bool following_ = false;
};

}  // namespace ts::gui
