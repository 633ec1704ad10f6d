#include "batch_plot_view.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>

#include "explorer_state.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

// Graph indices, in the order the constructor adds them.
enum Graphs { ThroughputLow, ThroughputHigh, Throughput, MemoryLow, MemoryHigh, Memory, Capacity };

const QColor kThroughputColor(31, 119, 180);
const QColor kMemoryColor(214, 39, 40);

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

}  // namespace

BatchPlotView::BatchPlotView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    auto* layout = new QVBoxLayout(this);
    plot_ = new QCustomPlot(this);
    plot_->setObjectName("batchPlot");
    layout->addWidget(plot_);

    QCPAxis* x = plot_->xAxis;
    x->setLabel(tr("batch size per GPU"));
    x->setScaleType(QCPAxis::stLogarithmic);
    x->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot_->yAxis->setLabel(tr("throughput (samples/s)"));
    plot_->yAxis2->setLabel(tr("peak memory (GB)"));
    plot_->yAxis2->setVisible(true);
    for (QCPAxis* axis : {plot_->yAxis, plot_->yAxis2}) axis->setRangeLower(0);

    for (int i = 0; i < 3; ++i) plot_->addGraph(plot_->xAxis, plot_->yAxis);
    for (int i = 0; i < 4; ++i) plot_->addGraph(plot_->xAxis, plot_->yAxis2);
    styleBand(plot_->graph(ThroughputLow), plot_->graph(ThroughputHigh), kThroughputColor);
    styleBand(plot_->graph(MemoryLow), plot_->graph(MemoryHigh), kMemoryColor);
    plot_->graph(Throughput)->setPen(QPen(kThroughputColor, 2));
    plot_->graph(Throughput)->setName(tr("throughput"));
    plot_->graph(Memory)->setPen(QPen(kMemoryColor, 2));
    plot_->graph(Memory)->setName(tr("peak memory"));
    plot_->graph(Capacity)->setPen(QPen(Qt::black, 1, Qt::DashLine));
    plot_->graph(Capacity)->setName(tr("GPU memory"));
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    refresh();
}

void BatchPlotView::refresh() {
    // The current batch: a vertical line, recreated because clearItems() is simpler than tracking it.
    plot_->clearItems();
    const GpuSweep& sweep = state_.batchSweep();
    QVector<double> batch, tLow, tHigh, t, mLow, mHigh, m;
    if (state_.hasModel() && sweep.supported) {
        for (const SweepPoint& point : sweep.points) {
            batch << double(point.batch);
            tLow << point.samplesPerS.low;
            tHigh << point.samplesPerS.high;
            t << point.samplesPerS.value;
            mLow << point.peakMemoryBytes.low / 1e9;
            mHigh << point.peakMemoryBytes.high / 1e9;
            m << point.peakMemoryBytes.value / 1e9;
        }
    }
    const QVector<QVector<double>*> series{&tLow, &tHigh, &t, &mLow, &mHigh, &m};
    for (int i = 0; i < series.size(); ++i) plot_->graph(i)->setData(batch, *series[i], true);

    const double capacityGb = state_.hasModel() ? state_.current().capacityBytes / 1e9 : 0;
    const double first = batch.isEmpty() ? 1 : batch.front();
    const double last = batch.isEmpty() ? 64 : batch.back();
    plot_->graph(Capacity)->setData({first, last}, {capacityGb, capacityGb}, true);
    plot_->xAxis->setRange(first, std::max(last, first * 2));

    const double tMax = tHigh.isEmpty() ? 1 : *std::max_element(tHigh.begin(), tHigh.end());
    const double mMax = mHigh.isEmpty() ? 1 : *std::max_element(mHigh.begin(), mHigh.end());
    plot_->yAxis->setRange(0, tMax * 1.1);
    plot_->yAxis2->setRange(0, std::max(mMax, capacityGb) * 1.1);

    const double current = double(state_.settings().batch);
    auto* line = new QCPItemStraightLine(plot_);
    line->setPen(QPen(Qt::darkGray, 1.5));
    line->point1->setCoords(current, 0);
    line->point2->setCoords(current, 1);
    auto* label = new QCPItemText(plot_);
    label->position->setType(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(current, tMax * 1.05);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    label->setText(tr(" batch %1").arg(state_.settings().batch));

    plot_->replot();
}

}  // namespace ts::gui
