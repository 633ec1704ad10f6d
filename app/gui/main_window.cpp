#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <memory>

#include "app_settings.h"
#include "background_job.h"
#include "batch_plot_view.h"
#include "explorer_state.h"
#include "gpu_profiling.h"
#include "gpu_view.h"
#include "help_menu.h"
#include "job_progress_widget.h"
#include "module_tree_view.h"
#include "overview_view.h"
#include "prices_dialog.h"
#include "report_export.h"
#include "roofline_view.h"
#include "theme.h"
#include "timeline_view.h"
#include "trace_gpu_view.h"
#include "trace_modules_view.h"
#include "trace_opening.h"
#include "trace_overview_view.h"
#include "trace_repredictor.h"
#include "trace_timeline_view.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profile_file.h"
#include "trainscope/predictors/profile/measured_device.h"
#include "view_page.h"

namespace ts::gui {

using namespace ts::predictors;

std::optional<View> parseView(const QString& name) {
    if (name == "overview") return View::Overview;
    if (name == "batch") return View::BatchPlot;
    if (name == "gpus") return View::Gpus;
    if (name == "modules") return View::Modules;
    if (name == "roofline") return View::Roofline;
    if (name == "timeline") return View::Timeline;
    return std::nullopt;
}

MainWindow::MainWindow(ExplorerState& state, QWidget* parent) : QMainWindow(parent), state_(state) {
    setWindowTitle("TrainScope");
    setAcceptDrops(true);
    const ProfilingAvailability profiling = gpuProfilingAvailability();
    profilingDevice_ = profiling.device;
    if (!profiling.available) profilingUnavailable_ = profiling.reason;
    buildMenus();
    profileAction_->setToolTip(profiling.reason);
    new TraceRepredictor(state_, this);  // an open trace at the batch size and precision the controls set

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    controls_ = new ControlsBar(state_, central);
    layout->addWidget(controls_);

    // Errors are a sentence in the window (opening a file, profiling), dismissed by the user.
    errorBanner_ = new QWidget(central);
    errorBanner_->setObjectName("errorBanner");
    auto* bannerLayout = new QHBoxLayout(errorBanner_);
    bannerLayout->setContentsMargins(6, 2, 6, 2);
    auto* icon = new QLabel(errorBanner_);
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(20, 20));
    errorLabel_ = new QLabel(errorBanner_);
    errorLabel_->setObjectName("errorLabel");
    errorLabel_->setWordWrap(true);
    errorLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* dismiss = new QToolButton(errorBanner_);
    dismiss->setAutoRaise(true);
    dismiss->setIcon(style()->standardIcon(QStyle::SP_DialogCloseButton));
    dismiss->setToolTip(tr("Dismiss"));
    connect(dismiss, &QToolButton::clicked, errorBanner_, &QWidget::hide);
    bannerLayout->addWidget(icon);
    bannerLayout->addWidget(errorLabel_, 1);
    bannerLayout->addWidget(dismiss);
    errorBanner_->hide();
    layout->addWidget(errorBanner_);

    tabs_ = new QTabWidget(central);
    // Each view follows the state itself (and repaints only while it is shown).
    overview_ = new OverviewView(state_, tabs_);
    batchPlot_ = new BatchPlotView(state_, tabs_);
    gpuView_ = new GpuView(state_, tabs_);
    gpuModel_ = gpuView_->model();
    moduleView_ = new ModuleTreeView(state_, tabs_);
    moduleModel_ = moduleView_->model();
    roofline_ = new RooflineView(state_, tabs_);
    timeline_ = new TimelineView(state_, tabs_);
    connect(overview_, &OverviewView::moduleActivated, this, [this] { showView(View::Modules); });

    // Each tab shows the model's view, or for an open trace its counterpart (or why there is none).
    auto page = [this](QWidget* modelView, QWidget* traceView, const QString& name) {
        auto* p = new ViewPage(state_, modelView, traceView, tabs_);
        tabs_->addTab(p, name);
        return p;
    };
    pages_ = {page(overview_, new TraceOverviewView(state_), tr("Overview")),
              page(batchPlot_, traceMessagePage(View::BatchPlot), tr("Batch size")),
              page(gpuView_, new TraceGpuView(state_), tr("GPUs")),
              page(moduleView_, new TraceModulesView(state_), tr("Modules")),
              page(roofline_, traceMessagePage(View::Roofline), tr("Roofline")),
              page(timeline_, new TraceTimelineView(state_), tr("Timeline"))};
    layout->addWidget(tabs_, 1);
    setCentralWidget(central);

    jobProgress_ = new JobProgressWidget(this);
    statusBar()->addPermanentWidget(jobProgress_);

    connect(&state_, &ExplorerState::changed, this, &MainWindow::refresh);
    connect(&state_, &ExplorerState::profileRejected, this,
            [this](const QString& reason) { showError(tr("The measurements could not be used: %1").arg(reason)); });
    resize(1100, 720);
    refresh();
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    openAction_ = file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openFile);
    openAction_->setToolTip(
        tr("Open an ONNX, TorchScript or JSON model, a profile recorded by TrainScope, or a PyTorch profiler trace"));
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    QMenu* zoo = file->addMenu(tr("&Zoo"));
    for (const ZooEntry& entry : zooModels()) {
        const QString spec = "zoo:" + QString::fromStdString(entry.name);
        QAction* action = zoo->addAction(QString::fromStdString(entry.name), this, [this, spec] { openModel(spec); });
        action->setToolTip(QString::fromStdString(entry.description));
    }
    zoo->setToolTipsVisible(true);
    saveProfileAction_ =
        file->addAction(tr("&Save Profile As…"), QKeySequence::SaveAs, this, &MainWindow::saveProfileAs);
    saveProfileAction_->setToolTip(tr("Save the measured profile, to predict from it later or on another machine"));
    exportAction_ = file->addAction(tr("&Export Report…"), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportReport);
    exportAction_->setToolTip(
        tr("Which GPU, at what batch size and precision, for what time and cost: HTML, PDF, "
           "CSV or JSON"));
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    file->setToolTipsVisible(true);
    rebuildRecentMenu();

    QMenu* view = menuBar()->addMenu(tr("&View"));
    const std::pair<View, QString> views[] = {{View::Overview, tr("&Overview")}, {View::BatchPlot, tr("&Batch size")},
                                              {View::Gpus, tr("&GPUs")},         {View::Modules, tr("&Modules")},
                                              {View::Roofline, tr("&Roofline")}, {View::Timeline, tr("&Timeline")}};
    int key = 1;
    for (const auto& [v, name] : views) {
        const View shown = v;
        view->addAction(name, QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_0 + key++)), this,
                        [this, shown] { showView(shown); });
    }
    view->addSeparator();
    QMenu* theme = view->addMenu(tr("&Theme"));
    auto* themes = new QActionGroup(this);
    const std::pair<Theme, QString> choices[] = {
        {Theme::System, tr("&System")}, {Theme::Light, tr("&Light")}, {Theme::Dark, tr("&Dark")}};
    for (const auto& [t, name] : choices) {
        QAction* action = theme->addAction(name);
        action->setCheckable(true);
        action->setData(int(t));
        action->setChecked(t == Theme::System);
        themes->addAction(action);
        const Theme chosen = t;
        connect(action, &QAction::triggered, this, [this, chosen] {
            if (auto* app = qobject_cast<QApplication*>(QCoreApplication::instance())) applyTheme(*app, chosen);
            if (settings_) settings_->setTheme(chosen);
            refresh();  // plots take their colours from the palette
        });
    }

    QMenu* profile = menuBar()->addMenu(tr("&Profile"));
    profileAction_ = profile->addAction(tr("Profile on this &GPU"), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                                        &MainWindow::profileOnThisGpu);
    profile->setToolTipsVisible(true);

    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    tools->addAction(tr("&Prices…"), this, [this] {
        if (!job_) showPricesDialog(state_, this);  // a running report holds pointers into the database
    });

    addHelpMenu(menuBar(), this, QString::fromStdString(state_.database().priceSnapshot().date));
}

void MainWindow::openFile() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a model, a profile or a trace"), QString(),
        tr("Models, profiles and traces (*.onnx *.pt *.pth *.ptl *.json *.json.gz);;ONNX (*.onnx);;"
           "TorchScript (*.pt *.pth *.ptl);;JSON model or TrainScope profile (*.json);;"
           "PyTorch profiler trace (*.json *.json.gz);;All files (*)"));
    if (!path.isEmpty()) openModel(path);
}

void MainWindow::openModel(const QString& spec) {
    if (job_) {
        showError(tr("Wait for “%1” to finish, or cancel it, before opening %2.").arg(job_->title(), spec));
        return;
    }
    const std::string path = spec.toStdString();
    if (isKinetoTraceFile(path)) return openTrace(spec);
    auto loaded = std::make_shared<LoadedModel>();
    const GpuDatabase& db = state_.database();  // read-only while the job runs
    auto* job = new BackgroundJob(tr("Opening %1").arg(QString::fromStdString(displayName(path))),
                                  [loaded, path, &db](JobContext& context) {
                                      context.progress(QObject::tr("reading and analysing"), -1);
                                      *loaded = loadForExplorer(path, db);
                                  });
    connect(job, &BackgroundJob::finished, this, [this, loaded, spec](bool cancelled, const QString& error) {
        if (cancelled) return;  // the user changed their mind; the current model stays
        if (!error.isEmpty()) {
            showError(tr("Could not open %1: %2").arg(spec, error));
            return;
        }
        state_.install(std::move(*loaded));
        opened(spec);
    });
    startJob(job);
}

void MainWindow::openTrace(const QString& path) {
    TraceJobCallbacks callbacks;
    // The trace shows as soon as it is read; the GPUs view fills in as each GPU is predicted.
    callbacks.opened = [this, path](std::shared_ptr<const TraceDocument> doc) {
        state_.installTrace(std::move(doc));
        opened(path);
    };
    callbacks.predicted = [this](std::shared_ptr<const TracePredictions> predictions) {
        state_.setTracePredictions(state_.trace(), std::move(predictions));
    };
    auto* job = new BackgroundJob(tr("Opening %1").arg(QString::fromStdString(displayName(path.toStdString()))),
                                  traceOpeningWork(path.toStdString(), state_.database(), std::move(callbacks)));
    connect(job, &BackgroundJob::finished, this, [this, path](bool, const QString& error) {
        if (!error.isEmpty()) showError(tr("Could not open %1: %2").arg(path, error));
    });
    startJob(job);
}

void MainWindow::opened(const QString& spec) {
    errorBanner_->hide();
    if (settings_) {
        settings_->addRecentFile(spec);
        rebuildRecentMenu();
    }
    statusBar()->showMessage(tr("Opened %1").arg(spec), 5000);
}

void MainWindow::exportReport() {
    if (job_ || !state_.hasModel()) return;
    QString path;
    report::ReportFormat format = report::ReportFormat::Html;
    if (!report::askReportPath(this, state_.modelSpec(), path, format)) return;
    exportReportTo(path, format);
}

void MainWindow::exportReportTo(const QString& path, report::ReportFormat format) {
    if (job_ || !state_.hasModel()) return;
    // The choice (every GPU x precision x batch size) runs on a worker; the plots and the file are
    // made on this thread, as QCustomPlot draws with widgets. The job holds the snapshot, whose
    // model and database the request points into.
    const std::shared_ptr<const PredictionSnapshot> snapshot = state_.snapshot();
    const report::ReportRequest request = report::requestFor(
        snapshot->predictor(), *snapshot->database, snapshot->current.scenario, snapshot->goal, snapshot->model->spec);
    auto choice = std::make_shared<HardwareChoice>();
    auto* job = new BackgroundJob(tr("Exporting the report"), [request, choice, snapshot](JobContext& context) {
        context.progress(QObject::tr("choosing the batch size and precision on every GPU"), -1);
        *choice = chooseHardware(*request.predictor, request.gpus, request.base, request.goal, request.options);
    });
    connect(job, &BackgroundJob::finished, this, [this, choice, path, format](bool cancelled, const QString& error) {
        if (cancelled) return;
        if (!error.isEmpty()) {
            showError(tr("The report could not be made: %1").arg(error));
            return;
        }
        const QString written = report::writeReport(*choice, format, path);
        if (!written.isEmpty())
            showError(written);
        else
            statusBar()->showMessage(tr("Wrote the report to %1").arg(path), 10000);
    });
    startJob(job);
}

void MainWindow::saveProfileAs() {
    if (!state_.profile()) return;
    const QString suggested =
        QString::fromStdString(displayName(state_.modelSpec())).section('.', 0, 0) + "-profile.json";
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save the profile"), suggested, tr("TrainScope profile (*.json)"));
    if (path.isEmpty()) return;
    try {
        writeProfile(*state_.profile(), path.toStdString());  // atomic: a failure leaves any old file intact
        statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
        if (settings_) {
            settings_->addRecentFile(path);
            rebuildRecentMenu();
        }
    } catch (const std::exception& e) {
        showError(tr("Could not save the profile: %1").arg(QString::fromUtf8(e.what())));
    }
}

void MainWindow::profileOnThisGpu() {
    if (!profilingUnavailable_.isEmpty()) {
        showError(profilingUnavailable_);
        return;
    }
    startProfiling(profilingDevice_);
}

void MainWindow::startProfiling(const std::string& device, bool quick) {
    if (job_ || !state_.hasModel()) return;
    const ExplorerSettings& s = state_.settings();
    ProfileRequest request;
    request.modelSpec = state_.modelSpec();
    request.graph = *state_.graph();
    request.device = device;
    if (device == profilingDevice_) {
        const ProfilingAvailability a = gpuProfilingAvailability();
        request.properties = a.properties;
    }
    request.batches = batchesAround(s.batch, ExplorerState::kMaxBatch);
    request.precision = s.precision;
    request.optimizer = s.optimizer;
    request.quick = quick;
    const int generation = state_.modelGeneration();
    auto result = std::make_shared<Profile>();
    // Each batch size's figures replace the estimates as soon as they are measured, unless the
    // user has opened another model meanwhile.
    auto measured = [this, generation](const Profile& sofar) {
        if (state_.modelGeneration() != generation) return;
        // A batch size that ran out of memory has nothing to predict from; wait for one that fitted.
        if (std::none_of(sofar.runs.begin(), sofar.runs.end(), predictors::isFittedRun)) return;
        try {
            state_.useProfile(sofar);
        } catch (const std::exception& e) {
            showError(tr("The measurements could not be used: %1").arg(QString::fromUtf8(e.what())));
        }
    };
    auto* job = new BackgroundJob(tr("Profiling on %1").arg(QString::fromStdString(device)),
                                  profilingWork(std::move(request), measured, result));
    connect(job, &BackgroundJob::finished, this, [this, result, generation](bool cancelled, const QString& error) {
        if (!error.isEmpty()) showError(tr("Profiling stopped: %1").arg(error));
        if (state_.modelGeneration() != generation || result->runs.empty()) return;
        measuredFinal(*result, cancelled);
    });
    startJob(job);
}

void MainWindow::measuredFinal(const Profile& profile, bool cancelled) {
    if (std::none_of(profile.runs.begin(), profile.runs.end(), predictors::isFittedRun)) {
        const ProfileRun& first = profile.runs.front();
        showError(tr("Profiling measured nothing usable: batch %1: %2")
                      .arg(first.batch)
                      .arg(QString::fromStdString(first.error.empty() ? profile.incompleteReason : first.error)));
        return;
    }
    try {
        state_.useProfile(profile);
    } catch (const std::exception& e) {
        showError(tr("The measurements could not be used: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    int measured = 0;
    for (const ProfileRun& run : profile.runs) measured += run.fits && run.complete;
    QString message = cancelled ? tr("Profiling cancelled: %n batch size(s) measured are kept", "", measured)
                                : tr("Profiled %n batch size(s)", "", measured);
    if (!profile.complete && !profile.incompleteReason.empty())
        message += " (" + QString::fromStdString(profile.incompleteReason) + ")";
    statusBar()->showMessage(message + tr("; File > Save Profile As… keeps them"), 10000);
}

void MainWindow::startJob(BackgroundJob* job) {
    job->setParent(this);
    job_ = job;
    jobProgress_->follow(job);
    connect(job, &BackgroundJob::finished, this, [this, job] {
        if (job_ == job) job_ = nullptr;
        job->deleteLater();
        updateActions();
    });
    updateActions();
    job->start();
}

void MainWindow::showError(const QString& sentence) {
    errorLabel_->setText(sentence);
    errorBanner_->show();
}

QString MainWindow::errorText() const {
    return errorBanner_->isHidden() ? QString() : errorLabel_->text();
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList files = settings_ ? settings_->recentFiles() : QStringList();
    for (const QString& spec : files) {
        QAction* action = recentMenu_->addAction(QString::fromStdString(displayName(spec.toStdString())), this,
                                                 [this, spec] { openModel(spec); });
        action->setToolTip(spec);
    }
    recentMenu_->setToolTipsVisible(true);
    recentMenu_->setEnabled(!files.isEmpty());
    if (!files.isEmpty()) {
        recentMenu_->addSeparator();
        recentMenu_->addAction(tr("Clear the list"), this, [this] {
            for (const QString& spec : settings_->recentFiles()) settings_->removeRecentFile(spec);
            rebuildRecentMenu();
        });
    }
}

void MainWindow::updateActions() {
    const bool busy = job_ != nullptr;
    openAction_->setEnabled(!busy);
    exportAction_->setEnabled(!busy && state_.hasModel());
    recentMenu_->setEnabled(!busy && settings_ && !settings_->recentFiles().isEmpty());
    saveProfileAction_->setEnabled(state_.profile() != nullptr);
    profileAction_->setEnabled(!busy && state_.hasModel() && profilingUnavailable_.isEmpty());
}

void MainWindow::useSettings(AppSettings& settings) {
    settings_ = &settings;
    if (auto* app = qobject_cast<QApplication*>(QCoreApplication::instance())) applyTheme(*app, settings.theme());
    for (QAction* action : findChildren<QAction*>())
        if (action->actionGroup() && action->data().isValid() && action->isCheckable())
            action->setChecked(Theme(action->data().toInt()) == settings.theme());
    if (!settings.windowGeometry().isEmpty()) restoreGeometry(settings.windowGeometry());
    if (!settings.windowState().isEmpty()) restoreState(settings.windowState());
    state_.setModelChoices(settings.modelChoices());
    state_.applySettings(settings.explorer(state_.settings()));
    rebuildRecentMenu();
    updateActions();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (job_) job_->cancel();  // its destructor waits for the worker to stop
    if (settings_) {
        settings_->setExplorer(state_.settings());
        settings_->setModelChoices(state_.modelChoices());
        settings_->setWindowGeometry(saveGeometry());
        settings_->setWindowState(saveState());
        if (!settings_->sync()) qWarning("trainscope: the settings could not be saved");
    }
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QMimeData* mime = event->mimeData();
    if (mime->hasUrls() && !mime->urls().isEmpty() && mime->urls().first().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile()) return;
    event->acceptProposedAction();
    openModel(urls.first().toLocalFile());
}

void MainWindow::refresh() {
    setWindowTitle(state_.hasModel() || state_.hasTrace()
                       ? QString("TrainScope – %1").arg(QString::fromStdString(state_.modelSpec()))
                       : QString("TrainScope"));
    updateActions();
}

void MainWindow::showView(View view) {
    tabs_->setCurrentWidget(pages_[size_t(view)]);
}

QWidget* MainWindow::viewWidget(View view) const {
    return pages_[size_t(view)]->currentWidget();
}

}  // namespace ts::gui
