#pragma once
// The explorer's window: File menu (open a model file, the zoo), the controls every view follows
// (controls_bar.h) and the views as tabs.
#include <QMainWindow>
#include <QString>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "controls_bar.h"
#include "report_writer.h"
#include "trainscope/core/profile.h"

class QAction;
class QLabel;
class QMenu;
class QComboBox;
class QSlider;
class QCheckBox;
class QSpinBox;
class QDoubleSpinBox;
class QTabWidget;

namespace ts::gui {

class AppSettings;
class BackgroundJob;
class BatchPlotView;
class JobProgressWidget;
class ExplorerState;
class GpuTableModel;
class GpuView;
class ModuleTreeModel;
class ModuleTreeView;
class OverviewView;
class RooflineView;
class TimelineView;
class ViewPage;

enum class View { Overview, BatchPlot, Gpus, Modules, Roofline, Timeline };
// "overview", "batch", "gpus", "modules", "roofline", "timeline"; nullopt for anything else.
std::optional<View> parseView(const QString& name);

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(ExplorerState& state, QWidget* parent = nullptr);

    ExplorerState& state() const { return state_; }
    void showView(View view);
    // What the view's tab shows now: the model's view, or for an open trace its counterpart.
    QWidget* viewWidget(View view) const;
    ControlsBar* controls() const { return controls_; }
    QSlider* batchSlider() const { return controls_->batchSlider(); }
    QSpinBox* batchSpin() const { return controls_->batchSpin(); }
    QComboBox* checkpointingBox() const { return controls_->checkpointingBox(); }
    QComboBox* shardingBox() const { return controls_->shardingBox(); }
    QSpinBox* accumulationSpin() const { return controls_->accumulationSpin(); }
    QSpinBox* loraSpin() const { return controls_->loraSpin(); }
    QDoubleSpinBox* loraDropoutSpin() const { return controls_->loraDropoutSpin(); }
    QCheckBox* channelsLastBox() const { return controls_->channelsLastBox(); }
    QCheckBox* masterWeightsBox() const { return controls_->masterWeightsBox(); }
    QComboBox* optimizerImplementationBox() const { return controls_->optimizerImplementationBox(); }
    GpuTableModel* gpuTableModel() const { return gpuModel_; }
    ModuleTreeModel* moduleTreeModel() const { return moduleModel_; }

    // Remember settings, recent files, theme and geometry in `settings` (main() passes the
    // application's; tests a temporary file). Restores what it holds now.
    void useSettings(AppSettings& settings);

    // Opens a model, a profile, a PyTorch profiler trace or zoo:NAME on a worker thread; the current
    // model stays until the new one is ready, and a failure is shown as a sentence in the window.
    void openModel(const QString& spec);
    // Profiles the open model on `device` ("cuda:0"; tests: "cpu") on a worker thread; measured
    // figures replace the estimates after each batch size.
    void startProfiling(const std::string& device, bool quick = false);
    BackgroundJob* currentJob() const { return job_; }
    JobProgressWidget* jobProgress() const { return jobProgress_; }
    QString errorText() const;  // the error sentence shown in the window, "" when none
    QAction* profileAction() const { return profileAction_; }
    // Writes the hardware-choice report at the current settings to `path`, the choice computed on a
    // worker thread (File > Export Report asks for the path, then calls this).
    void exportReportTo(const QString& path, report::ReportFormat format);
    QMenu* recentMenu() const { return recentMenu_; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void openFile();
    void openTrace(const QString& path);
    void opened(const QString& spec);  // a model or trace is shown: the recent files, the status bar
    void saveProfileAs();
    void exportReport();
    void profileOnThisGpu();
    void measuredFinal(const Profile& profile, bool cancelled);
    void startJob(BackgroundJob* job);  // takes ownership; one job at a time
    void showError(const QString& sentence);
    void rebuildRecentMenu();
    void updateActions();
    void refresh();  // the state changed: the title and actions follow

    ExplorerState& state_;
    ControlsBar* controls_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    OverviewView* overview_ = nullptr;
    BatchPlotView* batchPlot_ = nullptr;
    GpuView* gpuView_ = nullptr;
    ModuleTreeView* moduleView_ = nullptr;
    RooflineView* roofline_ = nullptr;
    TimelineView* timeline_ = nullptr;
    std::array<ViewPage*, 6> pages_{};  // by View
    GpuTableModel* gpuModel_ = nullptr;
    ModuleTreeModel* moduleModel_ = nullptr;

    AppSettings* settings_ = nullptr;
    BackgroundJob* job_ = nullptr;
    JobProgressWidget* jobProgress_ = nullptr;
    QWidget* errorBanner_ = nullptr;
    QLabel* errorLabel_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QAction* openAction_ = nullptr;
    QAction* saveProfileAction_ = nullptr;
    QAction* exportAction_ = nullptr;
    QAction* profileAction_ = nullptr;
    QString profilingUnavailable_;  // why Profile on this GPU is disabled ("" when it is enabled)
    std::string profilingDevice_;
};

}  // namespace ts::gui
