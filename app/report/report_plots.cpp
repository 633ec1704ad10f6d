#include "report_plots.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace ts::report {

using namespace ts::predictors;

namespace {

// Tableau's first colours: distinct on screen and in print.
const QColor kColors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189}};

QString label(const HardwareChoiceRow& r) {
    return QString("%1. %2 (%3)")
        .arg(r.rank)
        .arg(QString::fromStdString(r.gpuName), trainingPrecisionName(r.precision));
}

void useLogScale(QCPAxis* axis) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    axis->setTicker(ticker);
    axis->setNumberFormat("gb");
}

QImage render(QCustomPlot& plot, int width, int height) {
    plot.resize(width, height);
    plot.replot();
    return plot.toPixmap(width, height).toImage();
}

QImage throughputPlot(const HardwareChoice& choice, int width, int height) {
    QCustomPlot plot;
    plot.xAxis->setLabel("batch size per GPU");
    useLogScale(plot.xAxis);
    // A language model's throughput in tokens, as its users count it.
    const double scale = choice.seq > 0 ? double(choice.seq) : 1;
    plot.yAxis->setLabel(choice.seq > 0 ? "throughput (tokens/s, all GPUs of a run)"
                                        : "throughput (samples/s, all GPUs of a run)");
    double xMin = 1, xMax = 2, yMax = 1;
    int drawn = 0;
    for (const HardwareChoiceRow& r : choice.rows) {
        if (!r.recommended || drawn == kPlottedGpus) continue;
        const QColor color = kColors[drawn++];
        QVector<double> batch, throughput;
        for (const SweepPoint& p : r.curve)
            if (p.fits && double(p.batch) <= r.prediction.maxBatch.low) {
                batch << double(p.batch);
                throughput << p.samplesPerS.value * scale;
            }
        if (batch.isEmpty()) continue;
        QCPGraph* line = plot.addGraph();
        line->setName(label(r));
        line->setPen(QPen(color, 2));
        line->setData(batch, throughput, true);
        QCPGraph* chosen = plot.addGraph();
        chosen->removeFromLegend();
        chosen->setLineStyle(QCPGraph::lsNone);
        chosen->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, 9));
        chosen->setData({double(r.batch)}, {r.prediction.samplesPerS.value * scale}, true);
        xMax = std::max(xMax, batch.back());
        yMax = std::max(
            {yMax, *std::max_element(throughput.begin(), throughput.end()), r.prediction.samplesPerS.value * scale});
    }
    plot.xAxis->setRange(xMin, xMax * 1.2);
    plot.yAxis->setRange(0, yMax * 1.1);
    plot.legend->setVisible(drawn > 0);
    plot.axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    auto* title = new QCPTextElement(&plot,
                                     "Throughput against batch size at each GPU's recommended precision "
                                     "(dot: the recommended batch)");
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, title);
    return render(plot, width, height);
}

QImage costPlot(const HardwareChoice& choice, int width, int height) {
    std::vector<const HardwareChoiceRow*> rows;
    for (const HardwareChoiceRow& r : choice.rows)
        if (r.recommended && r.cost.priced) rows.push_back(&r);
    // QCPGraph keeps its data sorted by key; the error bars follow it by index.
    std::sort(rows.begin(), rows.end(), [](const HardwareChoiceRow* a, const HardwareChoiceRow* b) {
        return a->cost.hoursToTrain.value < b->cost.hoursToTrain.value;
    });
    QVector<double> hours, usd, hoursBelow, hoursAbove, usdBelow, usdAbove;
    for (const HardwareChoiceRow* r : rows) {
        const TrainingCost& c = r->cost;
        hours << c.hoursToTrain.value;
        hoursBelow << c.hoursToTrain.value - c.hoursToTrain.low;
        hoursAbove << c.hoursToTrain.high - c.hoursToTrain.value;
        usd << c.usdToTrain.value;
        usdBelow << c.usdToTrain.value - c.usdToTrain.low;
        usdAbove << c.usdToTrain.high - c.usdToTrain.value;
    }
    if (rows.empty()) return {};
    QCustomPlot plot;
    plot.xAxis->setLabel("hours to train the goal");
    plot.yAxis->setLabel("US$ to train the goal");
    useLogScale(plot.xAxis);
    useLogScale(plot.yAxis);
    QCPGraph* points = plot.addGraph();
    points->setLineStyle(QCPGraph::lsNone);
    points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, kColors[0], 8));
    points->setData(hours, usd, true);
    for (auto [type, below, above] : {std::tuple{QCPErrorBars::etKeyError, &hoursBelow, &hoursAbove},
                                      std::tuple{QCPErrorBars::etValueError, &usdBelow, &usdAbove}}) {
        auto* bars = new QCPErrorBars(plot.xAxis, plot.yAxis);
        bars->removeFromLegend();
        bars->setDataPlottable(points);
        bars->setErrorType(type);
        bars->setPen(QPen(QColor(120, 120, 120)));
        bars->setData(*below, *above);
    }
    QFont small = plot.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    for (size_t i = 0; i < rows.size(); ++i) {
        auto* text = new QCPItemText(&plot);
        text->position->setCoords(hours[int(i)], usd[int(i)]);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        text->setFont(small);
        text->setText(QString(" %1").arg(QString::fromStdString(rows[i]->gpuId)));
    }
    auto span = [](const QVector<double>& v, const QVector<double>& below, const QVector<double>& above) {
        double lo = v[0] - below[0], hi = v[0] + above[0];
        for (int i = 0; i < v.size(); ++i) lo = std::min(lo, v[i] - below[i]), hi = std::max(hi, v[i] + above[i]);
        return QCPRange(lo / 1.3, hi * 1.6);  // room for the labels on the right and above
    };
    plot.xAxis->setRange(span(hours, hoursBelow, hoursAbove));
    plot.yAxis->setRange(span(usd, usdBelow, usdAbove));
    auto* title = new QCPTextElement(&plot, "Cost against time to train the goal (bars: the predicted ranges)");
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, title);
    return render(plot, width, height);
}

}  // namespace

QImage renderTracePlot(const TraceChoice& choice, int width, int height) {
    QVector<double> step, usd, recordedStep, recordedUsd;
    std::vector<const TraceChoiceRow*> rows;
    for (const TraceChoiceRow& r : choice.rows)
        if (r.predicted && r.price.priced && r.usdPer1000Steps > 0) rows.push_back(&r);
    if (rows.empty()) return {};
    std::sort(rows.begin(), rows.end(),
              [](const TraceChoiceRow* a, const TraceChoiceRow* b) { return a->stepMs < b->stepMs; });
    for (const TraceChoiceRow* r : rows) {
        (r->recorded ? recordedStep : step) << r->stepMs;
        (r->recorded ? recordedUsd : usd) << r->usdPer1000Steps;
    }
    QCustomPlot plot;
    plot.xAxis->setLabel("predicted median step (ms)");
    plot.yAxis->setLabel("US$ per 1,000 steps (one GPU)");
    useLogScale(plot.xAxis);
    useLogScale(plot.yAxis);
    for (auto [x, y, color, name] : {std::tuple{&step, &usd, kColors[0], QString("predicted")},
                                     std::tuple{&recordedStep, &recordedUsd, kColors[1], QString("recorded GPU")}}) {
        if (x->isEmpty()) continue;
        QCPGraph* points = plot.addGraph();
        points->setName(name);
        points->setLineStyle(QCPGraph::lsNone);
        points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, 8));
        points->setData(*x, *y, true);
    }
    QFont small = plot.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    double xLo = rows.front()->stepMs, xHi = xLo, yLo = rows.front()->usdPer1000Steps, yHi = yLo;
    for (const TraceChoiceRow* r : rows) {
        auto* text = new QCPItemText(&plot);
        text->position->setCoords(r->stepMs, r->usdPer1000Steps);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        text->setFont(small);
        text->setText(QString(" %1").arg(QString::fromStdString(r->gpuId)));
        xLo = std::min(xLo, r->stepMs), xHi = std::max(xHi, r->stepMs);
        yLo = std::min(yLo, r->usdPer1000Steps), yHi = std::max(yHi, r->usdPer1000Steps);
    }
    // Whole decades on the cost axis, so that it carries at least two labelled ticks.
    auto decadeBelow = [](double v) { return std::pow(10.0, std::floor(std::log10(v))); };
    auto decadeAbove = [](double v) { return std::pow(10.0, std::ceil(std::log10(v))); };
    plot.xAxis->setRange(xLo / 1.3, xHi * 1.8);  // room for the labels on the right and above
    plot.yAxis->setRange(decadeBelow(yLo / 1.3), decadeAbove(yHi * 1.6));
    plot.legend->setVisible(true);
    plot.axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    auto* title = new QCPTextElement(&plot, "Cost per 1,000 steps against the step time on every priced GPU");
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, title);
    return render(plot, width, height);
}

ReportPlots renderReportPlots(const HardwareChoice& choice, int width, int height) {
    return {throughputPlot(choice, width, height), costPlot(choice, width, height)};
}

}  // namespace ts::report
