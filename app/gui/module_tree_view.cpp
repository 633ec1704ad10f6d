#include "module_tree_view.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QVBoxLayout>

#include "explorer_state.h"
#include "module_tree_model.h"
#include "view_refresher.h"

namespace ts::gui {

ModuleTreeView::ModuleTreeView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    filter_ = new QLineEdit(this);
    filter_->setObjectName("moduleFilter");
    filter_->setPlaceholderText(tr("Filter modules and operations (name or type)…"));
    filter_->setClearButtonEnabled(true);
    filter_->setToolTip(tr("Shows the rows whose name contains this text, with the modules above them"));
    layout->addWidget(filter_);

    model_ = new ModuleTreeModel(state_, this);
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(ModuleTreeModel::SortRole);
    proxy_->setFilterKeyColumn(ModuleTreeModel::Name);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy_->setRecursiveFilteringEnabled(true);  // a module stays when a row under it matches
    // Names never change with the settings, so the filter needs no re-check when figures change;
    // refresh() re-sorts once when a figure column is the sort key, instead of once per parent.
    proxy_->setDynamicSortFilter(false);

    tree_ = new QTreeView(this);
    tree_->setObjectName("moduleTree");
    tree_->setModel(proxy_);
    tree_->setUniformRowHeights(true);
    tree_->setSortingEnabled(true);
    tree_->sortByColumn(-1, Qt::AscendingOrder);  // graph order until the user picks a column
    tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Columns are sized once per model, not on every change: ResizeToContents would measure every
    // row whenever a figure changes, which a dragged batch slider cannot afford on a large model.
    tree_->header()->setStretchLastSection(false);
    tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
    tree_->header()->setSectionResizeMode(ModuleTreeModel::Name, QHeaderView::Stretch);
    layout->addWidget(tree_, 1);

    connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
        proxy_->setFilterFixedString(text);
        if (!text.isEmpty()) tree_->expandAll();  // the matches are what the user is looking for
    });
    connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) { currentRowChanged(current); });

    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, this, [this] {
        // A new model is rebuilt at once: the stale tree must not outlive the costs it points into.
        if (state_.modelGeneration() != generation_)
            refresh();
        else
            refresher_->request();
    });
    connect(&state_, &ExplorerState::selectionChanged, this, &ModuleTreeView::showSelection);
    refresh();
}

void ModuleTreeView::refresh() {
    const bool rebuilt = state_.modelGeneration() != generation_;
    generation_ = state_.modelGeneration();
    // One signal for the whole tree: a dataChanged per parent costs more than the repaint on a large model.
    model_->refresh(ModuleTreeModel::ChangeSignals::TopLevelOnly);
    tree_->viewport()->update();
    if (!rebuilt && proxy_->sortColumn() > ModuleTreeModel::Name)
        proxy_->sort(proxy_->sortColumn(), proxy_->sortOrder());
    if (rebuilt) {
        tree_->expandToDepth(0);
        for (int column = ModuleTreeModel::Name + 1; column < ModuleTreeModel::ColumnCount; ++column)
            tree_->resizeColumnToContents(column);
        showSelection(state_.selectedOp());
    }
}

void ModuleTreeView::currentRowChanged(const QModelIndex& current) {
    if (!current.isValid() || following_) return;
    state_.setSelectedOp(current.data(ModuleTreeModel::OpRole).toInt());
}

void ModuleTreeView::showSelection(int op) {
    const QModelIndex source = model_->indexOfOp(op);
    const QModelIndex row = proxy_->mapFromSource(source);
    // A selected module row that starts at `op` stays (clicking a module selects its first operation).
    const QModelIndex current = tree_->currentIndex();
    if (current.isValid() && current.data(ModuleTreeModel::OpRole).toInt() == op &&
        tree_->selectionModel()->isSelected(current))
        return;
    following_ = true;  // showing the state's selection, not making one
    if (!row.isValid()) {
        tree_->selectionModel()->clear();
    } else {
        for (QModelIndex p = row.parent(); p.isValid(); p = p.parent()) tree_->expand(p);
        tree_->selectionModel()->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        tree_->scrollTo(row);
    }
    following_ = false;
}

}  // namespace ts::gui
