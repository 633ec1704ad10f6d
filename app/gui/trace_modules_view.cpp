#include "trace_modules_view.h"

#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>
#include <functional>
#include <map>

#include "explorer_state.h"
#include "trace_style.h"
#include "trace_totals.h"
#include "view_refresher.h"

namespace ts::gui {

namespace {

struct Sums {
    double calls = 0, cpuMs = 0, gpuMs = 0, kernels = 0;
};

// The figures of a row; a scope's calls are its operators' calls.
QList<QStandardItem*> rowItems(QStandardItem* name, const Sums& s, double gpuTotalMs) {
    return {name,
            numberItem(s.calls, 1),
            numberItem(s.cpuMs, 3),
            numberItem(s.gpuMs, 3),
            numberItem(s.kernels, 1),
            numberItem(gpuTotalMs > 0 ? 100 * s.gpuMs / gpuTotalMs : 0, 1)};
}

}  // namespace

TraceModulesView::TraceModulesView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    setObjectName("traceModules");
    auto* layout = new QVBoxLayout(this);
    caption_ = new QLabel(this);
    caption_->setWordWrap(true);
    layout->addWidget(caption_);
    filter_ = new QLineEdit(this);
    filter_->setPlaceholderText(tr("Filter scopes and operators"));
    filter_->setClearButtonEnabled(true);
    layout->addWidget(filter_);
    model_ = new QStandardItemModel(this);
    tree_ = makeTraceTable(model_, GpuMs, this);
    layout->addWidget(tree_, 1);
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(tree_->model());
    connect(filter_, &QLineEdit::textChanged, this, [this, proxy](const QString& text) {
        proxy->setFilterFixedString(text);
        if (!text.isEmpty()) tree_->expandAll();
    });
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    refresh();
}

void TraceModulesView::refresh() {
    std::shared_ptr<const TraceDocument> doc = state_.traceDocument();
    if (doc == shown_) return;
    shown_ = doc;
    model_->clear();
    model_->setHorizontalHeaderLabels({tr("Scope / operator"), tr("Calls/step"), tr("CPU ms/step"), tr("GPU ms/step"),
                                       tr("Kernels/step"), tr("% of GPU time")});
    if (!doc) return caption_->clear();

    const std::vector<TraceScopeTotal> totals = traceScopeTotals(*doc);
    double gpuTotal = 0;
    for (const TraceScopeTotal& t : totals) gpuTotal += t.gpuMs;
    // Scopes first (their sums need every operator under them), then one row per operator.
    std::map<std::string, Sums> scopeSums;
    for (const TraceScopeTotal& t : totals) {
        const QStringList parts = QString::fromStdString(t.scope).split('/', Qt::SkipEmptyParts);
        QString path;
        for (const QString& part : parts) {
            path += (path.isEmpty() ? "" : "/") + part;
            Sums& s = scopeSums[path.toStdString()];
            s.calls += t.calls;
            s.cpuMs += t.cpuMs;
            s.gpuMs += t.gpuMs;
            s.kernels += t.kernels;
        }
    }
    std::map<std::string, QStandardItem*> scopeItems;
    // The item of a scope path, created with its parents on first use.
    std::function<QStandardItem*(const QString&)> scopeItem = [&](const QString& path) -> QStandardItem* {
        if (path.isEmpty()) return model_->invisibleRootItem();
        const std::string key = path.toStdString();
        if (auto it = scopeItems.find(key); it != scopeItems.end()) return it->second;
        QStandardItem* parent = scopeItem(path.section('/', 0, -2));
        QStandardItem* name = textItem(path.section('/', -1));
        name->setToolTip(path);
        parent->appendRow(rowItems(name, scopeSums[key], gpuTotal));
        return scopeItems[key] = name;
    };
    for (const TraceScopeTotal& t : totals) {
        QStandardItem* parent = scopeItem(QString::fromStdString(t.scope).split('/', Qt::SkipEmptyParts).join('/'));
        QStandardItem* name = textItem(QString::fromStdString(t.operatorName));
        name->setToolTip(t.scope.empty() ? tr("outside every recorded scope")
                                         : tr("in %1").arg(QString::fromStdString(t.scope)));
        parent->appendRow(rowItems(name, {t.calls, t.cpuMs, t.gpuMs, t.kernels}, gpuTotal));
    }
    const size_t steps = doc->summary.steps.size();
    caption_->setText(
        (scopeItems.empty()
             ? tr("The trace records no module scopes (profile with with_stack=True or record_function labels to "
                  "see them): its top-level operators, ")
             : tr("Module scopes and their top-level operators, ")) +
        (doc->bySteps() ? tr("averaged over %n step(s): ", "", int(steps)) : tr("over the whole trace: ")) +
        tr("host time inclusive, GPU time of every activity they launched on %1.")
            .arg(doc->summary.gpuName.empty() ? tr("the GPU") : QString::fromStdString(doc->summary.gpuName)));
    tree_->expandToDepth(1);
    fitColumns(tree_);
}

}  // namespace ts::gui
