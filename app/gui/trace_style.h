#pragma once
// How the trace views show kernel classes and measured times, the same in every view.
#include <QColor>
#include <QString>

class QAbstractItemModel;
class QStandardItem;
class QTreeView;
class QWidget;

#include "trainscope/core/kineto_trace.h"

namespace ts::gui {

// The GPU's host-bound stretches (it waited for the host), in every trace view.
inline const QColor kHostBoundColor{214, 96, 30};

// One colour per kernel class, readable on light and dark backgrounds; GEMMs blue, collectives red.
QColor kernelClassColor(KernelClass kind);
QString kernelClassLabel(KernelClass kind);  // "gemm", "nccl", ... as the CLI names them
// "12.3 ms", "456 µs": three significant digits, in the unit that fits.
QString formatDurationMs(double ms);
// "4×1×1"
QString formatDim3(const int32_t d[3]);

// The trace tables sort numbers by value: this role holds it (the text is formatted).
inline constexpr int kSortRole = Qt::UserRole + 1;
QStandardItem* textItem(const QString& text);
QStandardItem* numberItem(double value, int decimals);
// A sortable, read-only tree or table over `model` (through a proxy sorting by kSortRole), the
// first column stretched to its contents; sorted by `sortColumn`, largest first.
QTreeView* makeTraceTable(QAbstractItemModel* model, int sortColumn, QWidget* parent);
// Every column as wide as its contents, the first (long kernel and operator names) at most `maxFirst`.
void fitColumns(QTreeView* view, int maxFirst = 380);

}  // namespace ts::gui
