#include "gpu_view.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "explorer_state.h"
#include "gpu_table_model.h"
#include "label_placement.h"
#include "plot_style.h"
#include "prediction_snapshot.h"
#include "view_refresher.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

constexpr double kClickPixels = 8;
constexpr double kPointRadius = 4;  // pixels: the drawn disc and what labels keep clear of

}  // namespace

GpuView::GpuView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    auto* goal = new QHBoxLayout;
    samplesGoal_ = new QWidget(this);
    auto* samplesRow = new QHBoxLayout(samplesGoal_);
    samplesRow->setContentsMargins(0, 0, 0, 0);
    epochs_ = new QDoubleSpinBox(this);
    epochs_->setObjectName("goalEpochs");
    epochs_->setRange(0.01, 1e6);
    epochs_->setDecimals(2);
    epochs_->setToolTip(tr("How many passes over the dataset the cost figures are for"));
    samples_ = new QDoubleSpinBox(this);
    samples_->setObjectName("goalSamples");
    samples_->setRange(1, 1e13);
    samples_->setDecimals(0);
    samples_->setGroupSeparatorShown(true);
    samples_->setToolTip(tr("Training samples in the dataset (ImageNet-1k has 1,281,167)"));
    tokens_ = new QDoubleSpinBox(this);
    tokens_->setObjectName("goalTokens");
    tokens_->setRange(1e-6, 1e9);
    tokens_->setDecimals(3);
    tokens_->setToolTip(
        tr("Training tokens the cost figures are for, in billions; a language model opens with 20 per parameter, "
           "the compute-optimal ratio of Hoffmann et al. 2022 (Chinchilla)"));
    goal->addWidget(new QLabel(tr("Train for"), this));
    samplesRow->addWidget(epochs_);
    samplesRow->addWidget(new QLabel(tr("epochs of"), this));
    samplesRow->addWidget(samples_);
    samplesRow->addWidget(new QLabel(tr("samples"), this));
    tokensGoal_ = new QWidget(this);
    auto* tokensRow = new QHBoxLayout(tokensGoal_);
    tokensRow->setContentsMargins(0, 0, 0, 0);
    tokensRow->addWidget(tokens_);
    tokensRow->addWidget(new QLabel(tr("billion tokens"), this));
    goal->addWidget(samplesGoal_);
    goal->addWidget(tokensGoal_);
    goal->addStretch(1);
    layout->addLayout(goal);

    model_ = new GpuTableModel(state_, this);
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(GpuTableModel::SortRole);
    table_ = new QTableView(this);
    table_->setObjectName("gpuTable");
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(GpuTableModel::SamplesPerS, Qt::DescendingOrder);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(GpuTableModel::Gpu, QHeaderView::Stretch);
    table_->verticalHeader()->hide();
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);

    auto* plotBox = new QWidget(this);
    auto* plotLayout = new QVBoxLayout(plotBox);
    plotLayout->setContentsMargins(0, 0, 0, 0);
    scatter_ = new QCustomPlot(plotBox);
    scatter_->setObjectName("costScatter");
    scatter_->setToolTip(scatterHelp());
    scatter_->setMinimumHeight(220);
    for (QCPAxis* axis : {scatter_->xAxis, scatter_->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    }
    scatter_->xAxis->setLabel(tr("hours to train"));
    scatter_->yAxis->setLabel(tr("dollars to train"));
    stylePlot(scatter_);
    scatter_->addGraph();  // every GPU
    scatter_->addGraph();  // the target
    for (int i = 0; i < 2; ++i) scatter_->graph(i)->setLineStyle(QCPGraph::lsNone);
    scatter_->graph(0)->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(78, 121, 167), 2 * kPointRadius));
    scatter_->graph(1)->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette().color(QPalette::Highlight), 3), Qt::NoBrush, 14));
    notShown_ = new QLabel(plotBox);
    notShown_->setObjectName("scatterNotShown");
    notShown_->setWordWrap(true);
    plotLayout->addWidget(scatter_, 1);
    plotLayout->addWidget(notShown_);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(table_);
    splitter->addWidget(plotBox);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    layout->addWidget(splitter, 1);

    connect(epochs_, &QDoubleSpinBox::valueChanged, this, &GpuView::goalEdited);
    connect(samples_, &QDoubleSpinBox::valueChanged, this, &GpuView::goalEdited);
    connect(tokens_, &QDoubleSpinBox::valueChanged, this, &GpuView::goalEdited);
    connect(scatter_, &QCustomPlot::mousePress, this, &GpuView::scatterClicked);
    scatter_->setMouseTracking(true);  // hover tooltips
    connect(scatter_, &QCustomPlot::mouseMove, this, &GpuView::scatterHovered);
    // Pixel positions change with the plot's size: labels are placed again before every replot.
    connect(scatter_, &QCustomPlot::beforeReplot, this, [this] { report::placeLabels(labels_, kPointRadius); });
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    refresh();
}

void GpuView::goalEdited() {
    TrainingGoal goal = state_.goal();
    if (goal.inTokens()) {
        goal.tokens = tokens_->value() * 1e9;
    } else {
        goal.epochs = epochs_->value();
        goal.datasetSamples = samples_->value();
    }
    state_.setGoal(goal);
}

void GpuView::refresh() {
    model_->refresh();
    const TrainingGoal& goal = model_->snapshot()->goal;
    {
        const QSignalBlocker b1(epochs_), b2(samples_), b3(tokens_);
        epochs_->setValue(goal.epochs);
        samples_->setValue(goal.datasetSamples);
        tokens_->setValue(goal.tokens / 1e9);
    }
    samplesGoal_->setVisible(!goal.inTokens());
    tokensGoal_->setVisible(goal.inTokens());
    refreshScatter();
}

void GpuView::refreshScatter() {
    stylePlot(scatter_);  // the palette may have changed (theme)
    scatter_->graph(1)->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette().color(QPalette::Highlight), 3), Qt::NoBrush, 14));
    scatter_->clearItems();
    labels_.clear();
    pointRows_.clear();
    pointHours_.clear();
    pointUsd_.clear();
    QVector<double> targetX, targetY;
    QStringList unpriced, unfit, overPcie;
    const QColor text = palette().color(QPalette::Text);
    // The table's snapshot: the points, their labels and later clicks are of the rows shown.
    const PredictionSnapshot& snapshot = *model_->snapshot();
    for (int row = 0; row < model_->rowCount() && size_t(row) < snapshot.allGpus.size(); ++row) {
        const TrainingPrediction& p = snapshot.allGpus[size_t(row)];
        const QString name = QString::fromStdString(p.gpuName);
        const TrainingCost c = model_->costOf(row);
        if (!p.interconnectNotice.empty()) overPcie << name;
        if (!model_->costApplies(row)) {
            unfit << name;
            continue;
        }
        if (!c.priced) {
            unpriced << name;
            continue;
        }
        pointRows_ << row;
        pointHours_ << c.hoursToTrain.value;
        pointUsd_ << c.usdToTrain.value;
        if (p.gpuId == snapshot.settings.gpuId) {
            targetX << c.hoursToTrain.value;
            targetY << c.usdToTrain.value;
        }
        auto* label = new QCPItemText(scatter_);
        labels_ << label;
        label->position->setCoords(c.hoursToTrain.value, c.usdToTrain.value);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        QString shortName = name;  // the vendor is the same for every GPU here
        shortName.remove(QRegularExpression("^NVIDIA (Tesla |GeForce )?"));
        label->setText(" " + shortName);
        label->setColor(text);
        label->setClipToAxisRect(false);
    }
    // Which labels win where they would overlap: the target, then the GPUs no other beats on both
    // time and cost, then the others; cheapest first within each.
    QVector<int> order(labels_.size());
    std::iota(order.begin(), order.end(), 0);
    auto rank = [&](int i) {
        if (snapshot.allGpus[size_t(pointRows_[i])].gpuId == snapshot.settings.gpuId) return 0;
        for (int j = 0; j < pointRows_.size(); ++j)
            if (pointHours_[j] < pointHours_[i] && pointUsd_[j] < pointUsd_[i]) return 2;
        return 1;
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const int ra = rank(a), rb = rank(b);
        return ra != rb ? ra < rb : pointUsd_[a] < pointUsd_[b];
    });
    QVector<QCPItemText*> byPriority;
    for (int i : order) byPriority << labels_[i];
    labels_ = byPriority;
    scatter_->graph(0)->setData(pointHours_, pointUsd_);
    scatter_->graph(1)->setData(targetX, targetY);
    if (!pointHours_.isEmpty()) {
        const auto [xMin, xMax] = std::minmax_element(pointHours_.begin(), pointHours_.end());
        const auto [yMin, yMax] = std::minmax_element(pointUsd_.begin(), pointUsd_.end());
        // Log axes: a factor of margin each side, so that the extreme points and their labels show.
        scatter_->xAxis->setRange(*xMin / 1.5, *xMax * 3);
        scatter_->yAxis->setRange(*yMin / 1.5, *yMax * 1.8);
    }
    QStringList lines;
    if (!overPcie.isEmpty())
        lines << tr("Over PCIe, not NVLink (no NVLink, or it does not join %1 GPUs): %2")
                     .arg(snapshot.settings.gpus)
                     .arg(overPcie.join(", "));
    if (!unpriced.isEmpty()) lines << tr("Not shown, no price in the database: %1").arg(unpriced.join(", "));
    if (!unfit.isEmpty())
        lines << tr("Not shown, the batch does not fit or the precision is not supported: %1").arg(unfit.join(", "));
    notShown_->setText(lines.join("\n"));
    scatter_->replot(QCustomPlot::rpQueuedReplot);
}

QString GpuView::scatterHelp() const {
    return tr(
        "Dollars against hours to train the goal, one point per GPU at the current settings "
        "(lower left is cheaper and faster); the target GPU is highlighted. Click a point to "
        "make its GPU the target.");
}

int GpuView::pointAt(const QPointF& pixel) const {
    int best = -1;
    double bestDistance = kClickPixels;
    for (int i = 0; i < pointRows_.size(); ++i) {
        const double dx = scatter_->xAxis->coordToPixel(pointHours_[i]) - pixel.x();
        const double dy = scatter_->yAxis->coordToPixel(pointUsd_[i]) - pixel.y();
        const double distance = std::hypot(dx, dy);
        if (distance <= bestDistance) {
            best = i;
            bestDistance = distance;
        }
    }
    return best;
}

void GpuView::scatterClicked(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    if (const int i = pointAt(event->position()); i >= 0)
        state_.setTargetGpu(model_->snapshot()->allGpus[size_t(pointRows_[i])].gpuId);
}

// Over a point, the tooltip names its GPU and figures (its label may be hidden where points crowd).
void GpuView::scatterHovered(QMouseEvent* event) {
    const int i = pointAt(event->position());
    if (i < 0) {
        scatter_->setToolTip(scatterHelp());
        return;
    }
    const QString name = QString::fromStdString(model_->snapshot()->allGpus[size_t(pointRows_[i])].gpuName);
    scatter_->setToolTip(tr("%1: %2 hours, %3 dollars to train the goal")
                             .arg(name)
                             .arg(pointHours_[i], 0, 'g', 3)
                             .arg(pointUsd_[i], 0, 'f', 2));
}

}  // namespace ts::gui
