#include "main_window.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "batch_plot_view.h"
#include "explorer_state.h"
#include "gpu_view.h"
#include "module_tree_view.h"
#include "overview_view.h"
#include "roofline_view.h"
#include "timeline_view.h"
#include "trainscope/core/model_loader.h"

namespace ts::gui {

using namespace ts::predictors;

int64_t batchAtSlider(int position) {
    const double fraction = double(std::clamp(position, 0, kSliderSteps)) / kSliderSteps;
    return std::clamp<int64_t>(std::llround(std::pow(double(ExplorerState::kMaxBatch), fraction)), 1,
                               ExplorerState::kMaxBatch);
}

int sliderAtBatch(int64_t batch) {
    batch = std::clamp<int64_t>(batch, 1, ExplorerState::kMaxBatch);
    return int(std::lround(kSliderSteps * std::log(double(batch)) / std::log(double(ExplorerState::kMaxBatch))));
}

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
    buildMenus();

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->addWidget(buildControls());

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

    tabs_->addTab(overview_, tr("Overview"));
    tabs_->addTab(batchPlot_, tr("Batch size"));
    tabs_->addTab(gpuView_, tr("GPUs"));
    tabs_->addTab(moduleView_, tr("Modules"));
    tabs_->addTab(roofline_, tr("Roofline"));
    tabs_->addTab(timeline_, tr("Timeline"));
    layout->addWidget(tabs_, 1);
    setCentralWidget(central);

    connect(&state_, &ExplorerState::changed, this, &MainWindow::refresh);
    resize(1100, 720);
    refresh();
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openFile);
    QMenu* zoo = file->addMenu(tr("&Zoo"));
    for (const ZooEntry& entry : zooModels()) {
        const QString spec = "zoo:" + QString::fromStdString(entry.name);
        QAction* action = zoo->addAction(QString::fromStdString(entry.name), this, [this, spec] { openModel(spec); });
        action->setToolTip(QString::fromStdString(entry.description));
    }
    zoo->setToolTipsVisible(true);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

QWidget* MainWindow::buildControls() {
    auto* box = new QWidget(this);
    // Two rows: the batch slider gets the whole width, the other settings share the second.
    auto* rows = new QVBoxLayout(box);
    rows->setContentsMargins(0, 0, 0, 0);
    auto* batchRow = new QHBoxLayout;
    auto* row = new QHBoxLayout;
    rows->addLayout(batchRow);
    rows->addLayout(row);

    // The spin box holds the batch size; the slider moves over it on a log scale (1 to kMaxBatch),
    // so that small batches get as much of its travel as large ones. Each follows the other.
    batchSlider_ = new QSlider(Qt::Horizontal, box);
    batchSlider_->setObjectName("batchSlider");
    batchSlider_->setRange(0, kSliderSteps);
    batchSpin_ = new QSpinBox(box);
    batchSpin_->setObjectName("batchSpin");
    batchSpin_->setRange(1, int(ExplorerState::kMaxBatch));
    connect(batchSlider_, &QSlider::valueChanged, this, [this](int position) {
        const QSignalBlocker blocker(batchSpin_);
        batchSpin_->setValue(int(batchAtSlider(position)));
        state_.setBatch(batchSpin_->value());
    });
    connect(batchSpin_, &QSpinBox::valueChanged, this, [this](int batch) {
        const QSignalBlocker blocker(batchSlider_);
        batchSlider_->setValue(sliderAtBatch(batch));
        state_.setBatch(batch);
    });

    precision_ = new QComboBox(box);
    for (TrainingPrecision p : kAllTrainingPrecisions) precision_->addItem(trainingPrecisionName(p), int(p));
    connect(precision_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setPrecision(TrainingPrecision(precision_->currentData().toInt())); });

    optimizer_ = new QComboBox(box);
    for (Optimizer o : {Optimizer::Sgd, Optimizer::SgdMomentum, Optimizer::Adam, Optimizer::AdamW})
        optimizer_->addItem(optimizerName(o), int(o));
    connect(optimizer_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setOptimizer(Optimizer(optimizer_->currentData().toInt())); });

    gpu_ = new QComboBox(box);
    for (const GpuSpec& gpu : state_.database().gpus()) gpu_->addItem(gpuLabel(gpu), QString::fromStdString(gpu.id));
    connect(gpu_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setTargetGpu(gpu_->currentData().toString().toStdString()); });

    gpuCount_ = new QSpinBox(box);
    gpuCount_->setRange(1, 1024);
    connect(gpuCount_, &QSpinBox::valueChanged, this, [this](int v) { state_.setGpuCount(v); });

    interconnect_ = new QComboBox(box);
    interconnect_->setToolTip(tr("How the data-parallel GPUs exchange gradients"));
    for (InterconnectKind kind : {InterconnectKind::NvLink, InterconnectKind::Pcie, InterconnectKind::InfiniBand})
        interconnect_->addItem(interconnectName(kind), int(kind));
    connect(interconnect_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setInterconnect(InterconnectKind(interconnect_->currentData().toInt())); });

    checkpointing_ = new QCheckBox(tr("Checkpointing"), box);
    checkpointing_->setToolTip(tr("Activation checkpointing in sqrt(L) segments: less memory, a second forward"));
    connect(checkpointing_, &QCheckBox::toggled, this, [this](bool on) { state_.setCheckpointing(on); });

    batchRow->addWidget(new QLabel(tr("Batch size per GPU:"), box));
    batchRow->addWidget(batchSlider_, 1);
    batchRow->addWidget(batchSpin_);
    row->addWidget(new QLabel(tr("Precision:"), box));
    row->addWidget(precision_);
    row->addWidget(new QLabel(tr("Optimizer:"), box));
    row->addWidget(optimizer_);
    row->addWidget(new QLabel(tr("GPU:"), box));
    row->addWidget(gpu_);
    row->addWidget(new QLabel(tr("GPUs:"), box));
    row->addWidget(gpuCount_);
    row->addWidget(interconnect_);
    row->addWidget(checkpointing_);
    row->addStretch(1);
    return box;
}

void MainWindow::openFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a model"), QString(),
                                                      tr("Models (*.onnx *.pt *.pth *.json);;All files (*)"));
    if (!path.isEmpty()) openModel(path);
}

void MainWindow::openModel(const QString& spec) {
    if (!state_.openModel(spec.toStdString())) statusBar()->showMessage(state_.error());
}

void MainWindow::refresh() {
    const ExplorerSettings& s = state_.settings();
    {
        // The controls show the state without writing it back.
        const QSignalBlocker b1(batchSlider_), b2(batchSpin_), b3(precision_), b4(optimizer_), b5(gpu_), b6(gpuCount_),
            b7(interconnect_), b8(checkpointing_);
        batchSlider_->setValue(sliderAtBatch(s.batch));
        batchSpin_->setValue(int(s.batch));
        precision_->setCurrentIndex(precision_->findData(int(s.precision)));
        optimizer_->setCurrentIndex(optimizer_->findData(int(s.optimizer)));
        gpu_->setCurrentIndex(gpu_->findData(QString::fromStdString(s.gpuId)));
        gpuCount_->setValue(s.gpus);
        interconnect_->setCurrentIndex(interconnect_->findData(int(s.interconnect)));
        checkpointing_->setChecked(s.checkpointing);
    }
    setWindowTitle(state_.hasModel() ? QString("TrainScope – %1").arg(QString::fromStdString(state_.modelSpec()))
                                     : QString("TrainScope"));
}

void MainWindow::showView(View view) {
    tabs_->setCurrentWidget(viewWidget(view));
}

QWidget* MainWindow::viewWidget(View view) const {
    switch (view) {
        case View::Overview:
            return overview_;
        case View::BatchPlot:
            return batchPlot_;
        case View::Gpus:
            return gpuView_;
        case View::Modules:
            return moduleView_;
        case View::Roofline:
            return roofline_;
        case View::Timeline:
            return timeline_;
    }
    return overview_;
}

}  // namespace ts::gui
