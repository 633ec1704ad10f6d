#pragma once
// The explorer's window: File menu (open a model file, the zoo), the controls every view follows
// (batch size, precision, optimizer, target GPU, number of GPUs) and the views as tabs.
#include <QMainWindow>
#include <QString>
#include <cstdint>
#include <optional>

class QCheckBox;
class QComboBox;
class QSlider;
class QSpinBox;
class QTabWidget;

namespace ts::gui {

class BatchPlotView;
class ExplorerState;
class GpuTableModel;
class GpuView;
class ModuleTreeModel;
class ModuleTreeView;
class OverviewView;
class RooflineView;
class TimelineView;

// The batch slider's log scale: position 0..kSliderSteps <-> batch 1..ExplorerState::kMaxBatch.
inline constexpr int kSliderSteps = 1000;
int64_t batchAtSlider(int position);
int sliderAtBatch(int64_t batch);

enum class View { Overview, BatchPlot, Gpus, Modules, Roofline, Timeline };
// "overview", "batch", "gpus", "modules", "roofline", "timeline"; nullopt for anything else.
std::optional<View> parseView(const QString& name);

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(ExplorerState& state, QWidget* parent = nullptr);

    void showView(View view);
    QWidget* viewWidget(View view) const;
    QSlider* batchSlider() const { return batchSlider_; }
    QSpinBox* batchSpin() const { return batchSpin_; }
    QCheckBox* checkpointingBox() const { return checkpointing_; }
    GpuTableModel* gpuTableModel() const { return gpuModel_; }
    ModuleTreeModel* moduleTreeModel() const { return moduleModel_; }

private:
    void buildMenus();
    QWidget* buildControls();
    void openFile();
    void openModel(const QString& spec);
    void refresh();  // the state changed: controls and views follow

    ExplorerState& state_;
    QSlider* batchSlider_ = nullptr;
    QSpinBox* batchSpin_ = nullptr;
    QComboBox* precision_ = nullptr;
    QComboBox* optimizer_ = nullptr;
    QComboBox* gpu_ = nullptr;
    QSpinBox* gpuCount_ = nullptr;
    QComboBox* interconnect_ = nullptr;
    QCheckBox* checkpointing_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    OverviewView* overview_ = nullptr;
    BatchPlotView* batchPlot_ = nullptr;
    GpuView* gpuView_ = nullptr;
    ModuleTreeView* moduleView_ = nullptr;
    RooflineView* roofline_ = nullptr;
    TimelineView* timeline_ = nullptr;
    GpuTableModel* gpuModel_ = nullptr;
    ModuleTreeModel* moduleModel_ = nullptr;
};

}  // namespace ts::gui
