#include "trace_style.h"

#include <QHeaderView>
#include <QLocale>
#include <QSortFilterProxyModel>
#include <QStandardItem>
#include <QTreeView>
#include <algorithm>
#include <cmath>

#include "breakdown_bar.h"

namespace ts::gui {

QColor kernelClassColor(KernelClass kind) {
    switch (kind) {
        case KernelClass::Gemm:
            return categoryColor(0);
        case KernelClass::Conv:
            return categoryColor(4);
        case KernelClass::Attention:
            return categoryColor(6);
        case KernelClass::Elementwise:
            return categoryColor(3);
        case KernelClass::Reduction:
            return categoryColor(5);
        case KernelClass::Normalization:
            return categoryColor(8);
        case KernelClass::Embedding:
            return categoryColor(7);
        case KernelClass::Optimizer:
            return QColor(188, 189, 34);  // olive: orange is the host-bound stretches' colour
        case KernelClass::Communication:
            return categoryColor(2);
        case KernelClass::Memcpy:
            return QColor(23, 190, 207);  // cyan: grey is the idle GPU's colour
        case KernelClass::Memset:
            return QColor(23, 190, 207).darker(140);
        case KernelClass::Other:
            return QColor(140, 140, 150);
    }
    return QColor(140, 140, 150);
}

QString kernelClassLabel(KernelClass kind) {
    return QString::fromUtf8(kernelClassName(kind));
}

QString formatDurationMs(double ms) {
    QLocale locale;
    const double magnitude = std::abs(ms);
    if (magnitude >= 1 || magnitude == 0)
        return locale.toString(ms, 'f', magnitude >= 100 ? 1 : magnitude >= 10 ? 2 : 3) + " ms";
    return locale.toString(ms * 1000, 'f', magnitude * 1000 >= 100 ? 0 : magnitude * 1000 >= 10 ? 1 : 2) + " µs";
}

QString formatDim3(const int32_t d[3]) {
    return QString("%1×%2×%3").arg(d[0]).arg(d[1]).arg(d[2]);
}

QStandardItem* textItem(const QString& text) {
    auto* item = new QStandardItem(text);
    item->setData(text, kSortRole);
    item->setEditable(false);
    return item;
}

QStandardItem* numberItem(double value, int decimals) {
    auto* item = new QStandardItem(QLocale().toString(value, 'f', decimals));
    item->setData(value, kSortRole);
    item->setData(int(Qt::AlignRight | Qt::AlignVCenter), Qt::TextAlignmentRole);
    item->setEditable(false);
    return item;
}

QTreeView* makeTraceTable(QAbstractItemModel* model, int sortColumn, QWidget* parent) {
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(kSortRole);
    proxy->setRecursiveFilteringEnabled(true);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    auto* view = new QTreeView(parent);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(sortColumn, Qt::DescendingOrder);
    view->setAlternatingRowColors(true);
    view->setUniformRowHeights(true);
    view->header()->setSectionResizeMode(QHeaderView::Interactive);
    view->header()->setStretchLastSection(false);
    return view;
}

void fitColumns(QTreeView* view, int maxFirst) {
    for (int c = 0; c < view->model()->columnCount(); ++c) view->resizeColumnToContents(c);
    view->setColumnWidth(0, std::min(view->columnWidth(0), maxFirst));
}

}  // namespace ts::gui
