#pragma once
// The GPUs view for an open trace: the trace's median step predicted on every GPU of the database
// (predictors::predictTrace, computed off the GUI thread while the trace opens; rows appear as
// they are ready) with its speed-up over the measured step, and for the target GPU (the GPU
// control, or a click on a row) the GPU time per kernel class, measured and predicted.
#include <QWidget>

class QLabel;
class QStandardItemModel;
class QTreeView;

namespace ts::gui {

class ExplorerState;
class ViewRefresher;

class TraceGpuView : public QWidget {
    Q_OBJECT
public:
    explicit TraceGpuView(ExplorerState& state, QWidget* parent = nullptr);
    QStandardItemModel* gpuModel() const { return gpus_; }
    QStandardItemModel* classModel() const { return classes_; }
    QString caption() const;

    enum GpuColumn { Gpu, PredictedMs, SpeedUp, Note };
    enum ClassColumn { Class, Activities, MeasuredMs, ClassPredictedMs, Ratio };
    static constexpr int kGpuIdRole = Qt::UserRole + 2;

private:
    void refresh();
    void fillClasses();

    ExplorerState& state_;
    ViewRefresher* refresher_ = nullptr;
    QLabel* caption_ = nullptr;
    QLabel* classCaption_ = nullptr;
    QStandardItemModel* gpus_ = nullptr;
    QStandardItemModel* classes_ = nullptr;
    QTreeView* gpuTable_ = nullptr;
    QTreeView* classTable_ = nullptr;
};

}  // namespace ts::gui
