#include "roofline_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLocale>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "breakdown_bar.h"
#include "explorer_state.h"
#include "layer_figures.h"
#include "plot_style.h"
#include "prediction_snapshot.h"
#include "view_refresher.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

enum Graphs { Roof, Fp32Roof, FirstPoints };
constexpr int kBounds = kPassBoundCount;
constexpr int kSizes = 5;
constexpr double kSizePixels[kSizes] = {5, 8, 11, 15, 20};
constexpr double kPickPixels = 10;

QColor boundColor(int bound) {
    // compute blue, memory orange, wave red, latency purple, link green (PassBound's order)
    static const int index[kBounds] = {0, 1, 2, 6, 3};
    return categoryColor(index[bound]);
}

QString flopsText(double flopsPerS) {
    return QLocale().toString(flopsPerS / 1e12, 'g', 3) + " TFLOP/s";
}

}  // namespace

RooflineView::RooflineView(ExplorerState& state, QWidget* parent)
    : QWidget(parent), state_(state), snapshot_(state.snapshot()) {
    auto* layout = new QVBoxLayout(this);
    auto* passRow = new QHBoxLayout;
    passRow->addWidget(new QLabel(tr("Pass:"), this));
    pass_ = new QComboBox(this);
    pass_->setObjectName("rooflinePass");
    pass_->addItems({tr("forward"), tr("backward")});
    pass_->setToolTip(
        tr("Which pass of every layer the points show: the backward pass (data and weight "
           "gradients) usually does twice the forward's FLOPs and moves more bytes"));
    passRow->addWidget(pass_);
    passRow->addStretch(1);
    layout->addLayout(passRow);
    plot_ = new QCustomPlot(this);
    plot_->setObjectName("rooflinePlot");
    plot_->installEventFilter(this);
    plot_->setToolTip(
        tr("Each layer's pass: how many FLOPs it does per byte it moves (x) against the FLOP/s its "
           "predicted time gives (y). Under the sloped roof a layer is limited by memory bandwidth, "
           "under the flat one by the peak rate; far below both, by fixed costs. Hover a point for "
           "its layer; click to select it."));
    layout->addWidget(plot_, 1);
    note_ = new QLabel(this);
    note_->setObjectName("rooflineNote");
    note_->setWordWrap(true);
    layout->addWidget(note_);

    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    }

    plot_->yAxis->setLabel(tr("achieved FLOP/s (predicted)"));
    stylePlot(plot_);

    plot_->addGraph();  // roof
    plot_->addGraph();  // FP32 roof
    plot_->graph(Roof)->setPen(QPen(palette().color(QPalette::Text), 2));
    plot_->graph(Roof)->setName(tr("roof: peak and bandwidth"));
    plot_->graph(Fp32Roof)->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashLine));
    plot_->graph(Fp32Roof)->setName(tr("FP32 CUDA-core roof"));
    const QString boundNames[kBounds] = {tr("compute-bound"), tr("memory-bound"), tr("wave-bound"),
                                         tr("latency-bound"), tr("link-bound")};
    for (int bound = 0; bound < kBounds; ++bound)
        for (int size = 0; size < kSizes; ++size) {
            QCPGraph* g = plot_->addGraph();
            g->setLineStyle(QCPGraph::lsNone);
            QColor fill = boundColor(bound);
            fill.setAlpha(170);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, boundColor(bound), fill, kSizePixels[size]));
            g->setName(boundNames[bound]);
            // Collectives (link-bound) do no FLOPs: never a point on a roofline.
            if (size != 1 || bound == int(PassBound::Link)) g->removeFromLegend();
        }
    QCPGraph* ring = plot_->addGraph();
    pointGraphs_ = plot_->graphCount() - 1;
    ring->setLineStyle(QCPGraph::lsNone);
    ring->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette().color(QPalette::Highlight), 3), Qt::NoBrush, 24));
    ring->setName(tr("selected layer"));
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);

    connect(plot_, &QCustomPlot::mousePress, this, &RooflineView::clicked);
    connect(pass_, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    connect(&state_, &ExplorerState::selectionChanged, this, [this] {
        if (!isHidden()) showSelection();  // refresh() shows it when the view comes back
    });
    refresh();
}

void RooflineView::refresh() {
    stylePlot(plot_);  // the palette may have changed (theme)
    plot_->graph(Roof)->setPen(QPen(palette().color(QPalette::Text), 2));
    plot_->graph(Fp32Roof)->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashLine));
    plot_->graph(pointGraphs_)
        ->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(palette().color(QPalette::Highlight), 3), Qt::NoBrush, 24));
    points_.clear();
    const bool backward = pass_->currentIndex() == 1;
    const QString passName = backward ? tr("backward") : tr("forward");
    plot_->xAxis->setLabel(tr("arithmetic intensity of the %1 pass (FLOP per DRAM byte)").arg(passName));
    snapshot_ = state_.snapshot();
    const PredictionSnapshot& snap = *snapshot_;
    const LayerFigureTable table = computeLayerFigures(snap);
    int skipped = 0;
    double maxShare = 0;
    for (const LayerFigures& f : table.layers) {
        const PassFigures pass =
            backward ? f.backward
                     : PassFigures{f.forwardFlops, f.forwardBytes, f.intensity, f.achievedFlopsPerS, f.bound};
        if (pass.flops <= 0 || pass.bytes <= 0 || pass.achievedFlopsPerS <= 0) {
            ++skipped;
            continue;
        }
        const double ms = backward ? f.backwardMs : f.forwardMs;
        const double share = table.iterationMs > 0 ? ms / table.iterationMs : 0;
        points_.push_back({f.op, pass.intensity, pass.achievedFlopsPerS, share, int(pass.bound)});
        maxShare = std::max(maxShare, share);
    }

    QVector<QVector<double>> xs(kBounds * kSizes), ys(kBounds * kSizes);
    double xMin = 1, xMax = 10, yMin = 1e12, yMax = 1e12;
    if (!points_.isEmpty()) {
        xMin = xMax = points_.front().intensity;
        yMin = yMax = points_.front().flopsPerS;
    }
    for (const Point& p : points_) {
        // Area in proportion to the share: the size bucket follows its square root.
        const int size = maxShare > 0 ? std::clamp(int(std::sqrt(p.share / maxShare) * kSizes), 0, kSizes - 1) : 0;
        xs[p.bound * kSizes + size] << p.intensity;
        ys[p.bound * kSizes + size] << p.flopsPerS;
        xMin = std::min(xMin, p.intensity);
        xMax = std::max(xMax, p.intensity);
        yMin = std::min(yMin, p.flopsPerS);
        yMax = std::max(yMax, p.flopsPerS);
    }
    for (int i = 0; i < kBounds * kSizes; ++i) plot_->graph(FirstPoints + i)->setData(xs[i], ys[i]);

    const double peak = table.peakFlopsPerS, fp32 = table.fp32PeakFlopsPerS, bw = table.bandwidthBytesPerS;
    if (peak > 0 && bw > 0) {
        const double ridge = peak / bw;
        xMin = std::min(xMin, ridge / 10);
        xMax = std::max(xMax, ridge * 10);
        yMax = std::max(yMax, peak);
        const double left = xMin / 4, right = xMax * 4;
        plot_->graph(Roof)->setData({left, ridge, right}, {bw * left, peak, peak}, true);
        const bool second = fp32 > 0 && fp32 < peak;
        plot_->graph(Fp32Roof)->setData(second ? QVector<double>{fp32 / bw, right} : QVector<double>{},
                                        second ? QVector<double>{fp32, fp32} : QVector<double>{}, true);
        plot_->graph(Fp32Roof)->setVisible(second);
        second ? plot_->graph(Fp32Roof)->addToLegend() : plot_->graph(Fp32Roof)->removeFromLegend();
    } else {
        plot_->graph(Roof)->data()->clear();
        plot_->graph(Fp32Roof)->data()->clear();
    }
    plot_->xAxis->setRange(xMin / 3, xMax * 3);
    plot_->yAxis->setRange(yMin / 3, yMax * 3);

    QString note;
    if (!snap.hasModel())
        note = tr("No model.");
    else if (!snap.current.supported)
        note = tr("No prediction: %1").arg(QString::fromStdString(snap.current.reason));
    else if (const GpuSpec* gpu = snap.targetGpu())
        note =
            tr("%1 at %2: peak %3, %4 GB/s. Points are layers' %5 passes, their area in proportion to the "
               "pass's share of the iteration, coloured by the term of their predicted time that wins.")
                .arg(QString::fromStdString(gpu->name), trainingPrecisionName(snap.settings.precision), flopsText(peak))
                .arg(bw / 1e9, 0, 'f', 0)
                .arg(passName);
    if (skipped > 0)
        note += " " + tr("%n layer(s) without FLOPs or DRAM traffic in this pass (or without the pass) not shown.",
                         nullptr, skipped);
    note_->setText(note);
    showSelection();
}

void RooflineView::showSelection() {
    QVector<double> x, y;
    for (const Point& p : points_)
        if (p.op == state_.selectedOp()) {
            x << p.intensity;
            y << p.flopsPerS;
        }
    plot_->graph(pointGraphs_)->setData(x, y);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QPointF RooflineView::pointPixel(int op) const {
    for (const Point& p : points_)
        if (p.op == op) return {plot_->xAxis->coordToPixel(p.intensity), plot_->yAxis->coordToPixel(p.flopsPerS)};
    return {-1, -1};
}

int RooflineView::opAt(const QPointF& pos) const {
    int best = -1;
    double bestDistance = kPickPixels;
    for (const Point& p : points_) {
        const double d = std::hypot(plot_->xAxis->coordToPixel(p.intensity) - pos.x(),
                                    plot_->yAxis->coordToPixel(p.flopsPerS) - pos.y());
        if (d <= bestDistance) {
            best = p.op;
            bestDistance = d;
        }
    }
    return best;
}

void RooflineView::clicked(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    const int op = opAt(event->position());
    if (op >= 0) state_.setSelectedOp(op);
}

bool RooflineView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::ToolTip && snapshot_->hasModel()) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int op = opAt(help->pos());
        const auto it = std::find_if(points_.begin(), points_.end(), [op](const Point& p) { return p.op == op; });
        if (it == points_.end()) return false;  // the plot's own tooltip explains the axes
        QLocale locale;
        QToolTip::showText(
            help->globalPos(),
            tr("%1\n%2 FLOP/byte, %3 achieved in the %4 pass\n%5% of the iteration, %6-bound")
                .arg(QString::fromStdString(snapshot_->graph()->ops[size_t(op)].name),
                     locale.toString(it->intensity, 'g', 3), flopsText(it->flopsPerS), pass_->currentText(),
                     locale.toString(100 * it->share, 'f', 1), boundName(PassBound(it->bound))),
            plot_);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace ts::gui
