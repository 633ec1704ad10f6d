#include "batch_plot_view.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "explorer_state.h"
#include "plot_style.h"
#include "prediction_snapshot.h"
#include "view_refresher.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

// Graph indices, in the order the constructor adds them.
enum Graphs {
    ThroughputLow,
    ThroughputHigh,
    Throughput,
    ThroughputMeasured,
    MemoryLow,
    MemoryHigh,
    Memory,
    MemoryMeasured,
    Capacity
};

const QColor kThroughputColor(31, 119, 180);
const QColor kMemoryColor(214, 39, 40);
constexpr double kGrabPixels = 6;  // how near the batch line a press starts dragging it

void styleBand(QCPGraph* low, QCPGraph* high, const QColor& color) {
    QColor fill = color;
    fill.setAlpha(50);
    low->setPen(Qt::NoPen);
    high->setPen(Qt::NoPen);
    high->setBrush(fill);
    high->setChannelFillGraph(low);
    low->removeFromLegend();
    high->removeFromLegend();
}

void styleMeasured(QCPGraph* graph, const QColor& color, const QString& name) {
    graph->setLineStyle(QCPGraph::lsNone);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, color, 9));
    graph->setPen(QPen(color, 1.5));
    graph->setName(name);
}

// A profile the predictions start from, measured on the target GPU at the precision shown, on one
// GPU: its runs are points of this plot; anything else measured something else.
const Profile* matchingProfile(const PredictionSnapshot& s) {
    if (!s.model || !s.model->usesProfile() || s.settings.gpus != 1 || !s.targetGpu()) return nullptr;
    const Profile* profile = s.model->profile.get();
    if (parseTrainingPrecision(profile->scenario.precision) != s.settings.precision) return nullptr;
    if (s.database->matchDevice(profile->environment.deviceName) != s.targetGpu()) return nullptr;
    return profile;
}

}  // namespace

BatchPlotView::BatchPlotView(ExplorerState& state, QWidget* parent)
    : QWidget(parent), state_(state), snapshot_(state.snapshot()) {
    auto* layout = new QVBoxLayout(this);
    plot_ = new QCustomPlot(this);
    plot_->setObjectName("batchPlot");
    plot_->setToolTip(
        tr("Predicted throughput (blue) and peak memory (red) against the batch size per GPU, "
           "with their intervals as bands; diamonds are measured; the dashed line is the GPU's "
           "memory. Drag the vertical line to set the batch size."));
    layout->addWidget(plot_);

    QCPAxis* x = plot_->xAxis;
    x->setLabel(tr("batch size per GPU"));
    x->setScaleType(QCPAxis::stLogarithmic);
    x->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot_->yAxis->setLabel(tr("throughput (samples/s)"));
    plot_->yAxis2->setLabel(tr("peak memory (GiB)"));
    plot_->yAxis2->setVisible(true);
    stylePlot(plot_);

    for (int i = 0; i < 4; ++i) plot_->addGraph(plot_->xAxis, plot_->yAxis);
    for (int i = 0; i < 5; ++i) plot_->addGraph(plot_->xAxis, plot_->yAxis2);
    styleBand(plot_->graph(ThroughputLow), plot_->graph(ThroughputHigh), kThroughputColor);
    styleBand(plot_->graph(MemoryLow), plot_->graph(MemoryHigh), kMemoryColor);
    plot_->graph(Throughput)->setPen(QPen(kThroughputColor, 2));
    plot_->graph(Throughput)->setName(tr("throughput"));
    plot_->graph(Memory)->setPen(QPen(kMemoryColor, 2));
    plot_->graph(Memory)->setName(tr("peak memory"));
    styleMeasured(plot_->graph(ThroughputMeasured), kThroughputColor, tr("throughput, measured"));
    styleMeasured(plot_->graph(MemoryMeasured), kMemoryColor, tr("peak memory, measured"));
    plot_->graph(Capacity)->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashLine));
    plot_->graph(Capacity)->setName(tr("GPU memory"));
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);

    // The current batch: a vertical line the user drags, and its label.
    batchLine_ = new QCPItemStraightLine(plot_);
    batchLine_->setPen(QPen(palette().color(QPalette::Highlight), 2));
    batchLabel_ = new QCPItemText(plot_);
    batchLabel_->position->setType(QCPItemPosition::ptPlotCoords);
    batchLabel_->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    batchLabel_->setColor(palette().color(QPalette::Text));

    // The recommended batch: dashed, with its label at the foot of the plot.
    recommendedLine_ = new QCPItemStraightLine(plot_);
    recommendedLabel_ = new QCPItemText(plot_);
    recommendedLabel_->position->setType(QCPItemPosition::ptPlotCoords);
    recommendedLabel_->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);

    // Batches that do not fit the GPU: shaded from the largest that fits to the right end, so their
    // throughput is never read as if it ran.
    notFitting_ = new QCPItemRect(plot_);
    notFitting_->setLayer("background");
    notFitting_->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    notFitting_->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    notFitting_->bottomRight->setTypeX(QCPItemPosition::ptAxisRectRatio);
    notFittingLabel_ = new QCPItemText(plot_);
    notFittingLabel_->position->setTypeX(QCPItemPosition::ptPlotCoords);
    notFittingLabel_->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    notFittingLabel_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    notFittingLabel_->setText(tr(" does not fit"));

    connect(plot_, &QCustomPlot::mousePress, this, &BatchPlotView::mousePress);
    connect(plot_, &QCustomPlot::mouseMove, this, &BatchPlotView::mouseMove);
    connect(plot_, &QCustomPlot::mouseRelease, this, &BatchPlotView::mouseRelease);

    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    refresh();
}

void BatchPlotView::refresh() {
    stylePlot(plot_);  // the palette may have changed (theme)
    plot_->graph(Capacity)->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashLine));
    batchLine_->setPen(QPen(palette().color(QPalette::Highlight), 2));
    batchLabel_->setColor(palette().color(QPalette::Text));
    snapshot_ = state_.snapshot();
    const PredictionSnapshot& snap = *snapshot_;
    const GpuSweep& sweep = snap.sweep;
    // A language model's users count tokens: its throughput axis is in tokens per second.
    const double scale = snap.countsTokens() ? double(snap.model->seq) : 1;
    plot_->yAxis->setLabel(scale > 1 ? tr("throughput (tokens/s)") : tr("throughput (samples/s)"));
    QVector<double> batch, tLow, tHigh, t, mLow, mHigh, m;
    if (snap.hasModel() && sweep.supported) {
        for (const SweepPoint& point : sweep.points) {
            batch << double(point.batch);
            tLow << point.samplesPerS.low * scale;
            tHigh << point.samplesPerS.high * scale;
            t << point.samplesPerS.value * scale;
            mLow << point.peakMemoryBytes.low / kGiB;
            mHigh << point.peakMemoryBytes.high / kGiB;
            m << point.peakMemoryBytes.value / kGiB;
        }
    }
    const QVector<QVector<double>*> series{&tLow, &tHigh, &t};
    for (int i = 0; i < series.size(); ++i) plot_->graph(i)->setData(batch, *series[i], true);
    plot_->graph(MemoryLow)->setData(batch, mLow, true);
    plot_->graph(MemoryHigh)->setData(batch, mHigh, true);
    plot_->graph(Memory)->setData(batch, m, true);

    QVector<double> measuredBatch, measuredT, measuredM;
    if (const Profile* profile = matchingProfile(snap))
        for (const ProfileRun& run : profile->runs) {
            if (!run.fits || !run.iteration.measured()) continue;
            measuredBatch << double(run.batch);
            measuredT << run.samplesPerSecond() * scale;
            measuredM << (run.memory.peakReserved + run.memory.cudaContext) / kGiB;
        }
    plot_->graph(ThroughputMeasured)->setData(measuredBatch, measuredT, true);
    plot_->graph(MemoryMeasured)->setData(measuredBatch, measuredM, true);
    plot_->graph(ThroughputMeasured)->setVisible(!measuredBatch.isEmpty());
    plot_->graph(MemoryMeasured)->setVisible(!measuredBatch.isEmpty());
    if (measuredBatch.isEmpty()) {
        plot_->graph(ThroughputMeasured)->removeFromLegend();
        plot_->graph(MemoryMeasured)->removeFromLegend();
    } else {
        plot_->graph(ThroughputMeasured)->addToLegend();
        plot_->graph(MemoryMeasured)->addToLegend();
    }

    const double capacityGb = snap.hasModel() ? snap.current.capacityBytes / kGiB : 0;
    const double first = batch.isEmpty() ? 1 : batch.front();
    const double last = batch.isEmpty() ? 64 : batch.back();
    plot_->graph(Capacity)->setData({first, last}, {capacityGb, capacityGb}, true);
    // While the user drags the batch line the axis stays put, so the line stays under the mouse.
    if (!dragging_) plot_->xAxis->setRange(first, std::max(last, first * 2));

    double tMax = tHigh.isEmpty() ? 1 : *std::max_element(tHigh.begin(), tHigh.end());
    for (double v : measuredT) tMax = std::max(tMax, v);
    double mMax = mHigh.isEmpty() ? 1 : *std::max_element(mHigh.begin(), mHigh.end());
    for (double v : measuredM) mMax = std::max(mMax, v);
    plot_->yAxis->setRange(0, tMax * 1.1);
    plot_->yAxis2->setRange(0, std::max(mMax, capacityGb) * 1.1);

    const double current = double(snap.settings.batch);
    batchLine_->point1->setCoords(current, 0);
    batchLine_->point2->setCoords(current, 1);
    batchLabel_->position->setCoords(current, tMax * 1.05);
    batchLabel_->setText(tr(" batch %1").arg(snap.settings.batch));
    const int64_t recommended = snap.hasModel() ? snap.recommendedBatch : 0;
    const QColor good = palette().color(QPalette::Link);
    recommendedLine_->setPen(QPen(good, 1.5, Qt::DashLine));
    recommendedLabel_->setColor(good);
    recommendedLine_->setVisible(recommended > 0);
    recommendedLabel_->setVisible(recommended > 0);
    if (recommended > 0) {
        recommendedLine_->point1->setCoords(double(recommended), 0);
        recommendedLine_->point2->setCoords(double(recommended), 1);
        recommendedLabel_->position->setCoords(double(recommended), tMax * 0.02);
        // The smallest batch within 3% of the best throughput that fits.
        recommendedLabel_->setText(tr(" recommended %1").arg(recommended));
    }
    // The largest batch that fits (the prediction's value); shaded beyond it.
    const double fitsUpTo = snap.hasModel() ? snap.current.maxBatch.value : 0;
    const bool shade = snap.hasModel() && fitsUpTo + 1 <= last;
    notFitting_->setVisible(shade);
    notFittingLabel_->setVisible(shade);
    if (shade) {
        const double from = std::max(first, fitsUpTo + 1);
        QColor fill = palette().color(QPalette::Text);
        fill.setAlpha(28);
        notFitting_->setBrush(fill);
        notFitting_->setPen(Qt::NoPen);
        notFitting_->topLeft->setCoords(from, 0);
        notFitting_->bottomRight->setCoords(1, 1);
        notFittingLabel_->position->setCoords(from, 0.12);
        notFittingLabel_->setColor(palette().color(QPalette::Text));
    }
    plot_->replot(dragging_ ? QCustomPlot::rpQueuedReplot : QCustomPlot::rpRefreshHint);
}

double BatchPlotView::notFittingFrom() const {
    return notFitting_->visible() ? notFitting_->topLeft->coords().x() : 0;
}

double BatchPlotView::batchLinePixel() const {
    return plot_->xAxis->coordToPixel(double(snapshot_->settings.batch));
}

double BatchPlotView::recommendedShown() const {
    return recommendedLine_->visible() ? recommendedLine_->point1->coords().x() : 0;
}

int BatchPlotView::measuredPoints() const {
    return plot_->graph(ThroughputMeasured)->dataCount();
}

bool BatchPlotView::nearBatchLine(double x) const {
    return snapshot_->hasModel() && std::abs(x - batchLinePixel()) <= kGrabPixels;
}

void BatchPlotView::mousePress(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !nearBatchLine(event->position().x())) return;
    dragging_ = true;
}

void BatchPlotView::mouseMove(QMouseEvent* event) {
    const double x = event->position().x();
    if (!dragging_) {
        plot_->setCursor(nearBatchLine(x) ? Qt::SizeHorCursor : Qt::ArrowCursor);
        return;
    }
    const double batch = plot_->xAxis->pixelToCoord(x);
    if (std::isfinite(batch)) state_.setBatch(std::llround(std::clamp(batch, 1.0, double(ExplorerState::kMaxBatch))));
}

void BatchPlotView::mouseRelease(QMouseEvent* event) {
    if (!dragging_ || event->button() != Qt::LeftButton) return;
    mouseMove(event);
    dragging_ = false;
    refresh();  // the axis may now follow the new batch range
}

}  // namespace ts::gui
