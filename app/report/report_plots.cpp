#include "report_plots.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "label_placement.h"

namespace ts::report {

using namespace ts::predictors;

namespace {

// Tableau's first colours: distinct on screen and in print.
const QColor kColors[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189}, {140, 86, 75}};
const QColor kOffFrontier(150, 150, 150);

QString label(const HardwareChoiceRow& r) {
    return QString("%1. %2 (%3)").arg(r.rank).arg(shortGpuName(r.gpuName), trainingPrecisionName(r.precision));
}

void useLogScale(QCPAxis* axis) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    axis->setTicker(ticker);
    axis->setNumberFormat("gb");
}

// [lo, hi] widened by `below` and `above` (room for labels); where that spans no power of ten,
// out to whole decades, so that a log axis carries at least two labelled ticks.
QCPRange logRange(double lo, double hi, double below, double above) {
    lo /= below, hi *= above;
    if (std::floor(std::log10(lo)) == std::floor(std::log10(hi)))
        return QCPRange(std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi))));
    return QCPRange(lo, hi);
}

QImage render(QCustomPlot& plot, int width, int height) {
    plot.resize(width, height);
    plot.replot();
    return plot.toPixmap(width, height).toImage();
}

// The legend in a row under the axes, its items side by side: inside them it would hide the
// labels of the points behind it.
void legendBelow(QCustomPlot& plot, const QFont& font) {
    plot.legend->setVisible(true);
    plot.legend->setFont(font);
    plot.axisRect()->insetLayout()->take(plot.legend);
    plot.plotLayout()->addElement(plot.plotLayout()->rowCount(), 0, plot.legend);
    plot.legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot.legend->setBorderPen(Qt::NoPen);
    plot.plotLayout()->setRowStretchFactor(plot.plotLayout()->rowCount() - 1, 0.001);
}

void addTitle(QCustomPlot& plot, const QString& text) {
    auto* title = new QCPTextElement(&plot, text);
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, title);
}

QImage throughputPlot(const std::vector<const HardwareChoiceRow*>& rows, int64_t seq, bool frontier, int width,
                      int height) {
    QCustomPlot plot;
    plot.xAxis->setLabel("batch size per GPU");
    useLogScale(plot.xAxis);
    // A language model's throughput in tokens, as its users count it.
    const double scale = seq > 0 ? double(seq) : 1;
    plot.yAxis->setLabel(seq > 0 ? "throughput (tokens/s, all GPUs of a run)"
                                        : "throughput (samples/s, all GPUs of a run)");
    double xMin = 1, xMax = 2, yMax = 1;
    int drawn = 0;
    for (const HardwareChoiceRow* r : rows) {
        const QColor color = kColors[drawn % std::size(kColors)];
        QVector<double> batch, throughput;
        for (const SweepPoint& p : r->curve)
            if (p.fits && double(p.batch) <= r->prediction.maxBatch.low) {
                batch << double(p.batch);
                throughput << p.samplesPerS.value * scale;
            }
        if (batch.isEmpty()) continue;
        ++drawn;
        QCPGraph* line = plot.addGraph();
        line->setName(label(*r));
        line->setPen(QPen(color, 2));
        line->setData(batch, throughput, true);
        QCPGraph* chosen = plot.addGraph();
        chosen->removeFromLegend();
        chosen->setLineStyle(QCPGraph::lsNone);
        chosen->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, 9));
        chosen->setData({double(r->batch)}, {r->prediction.samplesPerS.value * scale}, true);
        xMax = std::max(xMax, batch.back());
        yMax = std::max(
            {yMax, *std::max_element(throughput.begin(), throughput.end()), r->prediction.samplesPerS.value * scale});
    }
    plot.xAxis->setRange(xMin, xMax * 1.2);
    plot.yAxis->setRange(0, yMax * 1.1);
    plot.legend->setVisible(drawn > 0);
    plot.axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    addTitle(plot,
             frontier
                 ? "Throughput against batch size on the GPUs of the cost-time frontier (dot: the recommended batch)"
                 : "Throughput against batch size on the best-ranked GPUs (dot: the recommended batch)");
    return render(plot, width, height);
}

// Every priced GPU with a recommendation as a point of time against cost to train the goal, both
// predicted ranges as bars; the frontier (no GPU both faster and cheaper) joined and coloured, the
// others grey; every point named, the fastest and the cheapest in bold, labels placed clear of
// each other (label_placement.h) and left out where none fits.
QImage frontierPlot(const HardwareChoice& choice, int width, int height) {
    std::vector<const HardwareChoiceRow*> rows;
    for (const HardwareChoiceRow& r : choice.rows)
        if (r.recommended && r.cost.priced) rows.push_back(&r);
    if (rows.empty()) return {};
    const std::vector<const HardwareChoiceRow*> frontier = costTimeFrontier(choice);
    const HardwareChoiceRow* fastest = frontier.front();
    const HardwareChoiceRow* cheapest = frontier.back();
    auto onFrontier = [&](const HardwareChoiceRow* r) {
        return std::find(frontier.begin(), frontier.end(), r) != frontier.end();
    };

    QCustomPlot plot;
    plot.xAxis->setLabel("hours to train the goal");
    plot.yAxis->setLabel("US$ to train the goal");
    useLogScale(plot.xAxis);
    useLogScale(plot.yAxis);
    // QCPGraph keeps its data sorted by key; the error bars follow it by index, so each set is
    // sorted by time first.
    auto points = [&](const std::vector<const HardwareChoiceRow*>& set, const QColor& color, double size,
                      const QString& name) {
        std::vector<const HardwareChoiceRow*> sorted = set;
        std::sort(sorted.begin(), sorted.end(), [](const HardwareChoiceRow* a, const HardwareChoiceRow* b) {
            return a->cost.hoursToTrain.value < b->cost.hoursToTrain.value;
        });
        QVector<double> hours, usd, hoursBelow, hoursAbove, usdBelow, usdAbove;
        for (const HardwareChoiceRow* r : sorted) {
            const TrainingCost& c = r->cost;
            hours << c.hoursToTrain.value;
            hoursBelow << c.hoursToTrain.value - c.hoursToTrain.low;
            hoursAbove << c.hoursToTrain.high - c.hoursToTrain.value;
            usd << c.usdToTrain.value;
            usdBelow << c.usdToTrain.value - c.usdToTrain.low;
            usdAbove << c.usdToTrain.high - c.usdToTrain.value;
        }
        QCPGraph* graph = plot.addGraph();
        graph->setName(name);
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, size));
        graph->setData(hours, usd, true);
        QColor bar = color;
        bar.setAlpha(90);
        for (auto [type, below, above] : {std::tuple{QCPErrorBars::etKeyError, &hoursBelow, &hoursAbove},
                                          std::tuple{QCPErrorBars::etValueError, &usdBelow, &usdAbove}}) {
            auto* bars = new QCPErrorBars(plot.xAxis, plot.yAxis);
            bars->removeFromLegend();
            bars->setDataPlottable(graph);
            bars->setErrorType(type);
            bars->setPen(QPen(bar));
            bars->setData(*below, *above);
        }
        return graph;
    };
    std::vector<const HardwareChoiceRow*> others;
    for (const HardwareChoiceRow* r : rows)
        if (!onFrontier(r)) others.push_back(r);
    if (!others.empty()) points(others, kOffFrontier, 7, "slower and dearer than a GPU of the frontier");
    QCPGraph* line = plot.addGraph();
    line->setName("cost-time frontier: no GPU is both faster and cheaper");
    line->setPen(QPen(kColors[0], 1.5, Qt::DashLine));
    QVector<double> lineHours, lineUsd;
    for (const HardwareChoiceRow* r : frontier)
        lineHours << r->cost.hoursToTrain.value, lineUsd << r->cost.usdToTrain.value;
    line->setData(lineHours, lineUsd, true);
    points(frontier, kColors[0], 9, "on the frontier")->removeFromLegend();

    // Labels: the fastest and the cheapest first, then the frontier, then the others by rank.
    QFont small = plot.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    QFont bold = small;
    bold.setBold(true);
    std::vector<const HardwareChoiceRow*> byPriority{fastest};
    if (cheapest != fastest) byPriority.push_back(cheapest);
    for (const HardwareChoiceRow* r : frontier)
        if (r != fastest && r != cheapest) byPriority.push_back(r);
    for (const HardwareChoiceRow* r : rows)
        if (!onFrontier(r)) byPriority.push_back(r);
    QVector<QCPItemText*> labels;
    for (const HardwareChoiceRow* r : byPriority) {
        auto* text = new QCPItemText(&plot);
        text->position->setCoords(r->cost.hoursToTrain.value, r->cost.usdToTrain.value);
        text->setPadding(QMargins(4, 1, 4, 1));
        QString name = shortGpuName(r->gpuName);
        if (r == fastest && r == cheapest)
            name += " (fastest and cheapest)";
        else if (r == fastest)
            name += " (fastest)";
        else if (r == cheapest)
            name += " (cheapest)";
        text->setText(name);
        text->setFont(r == fastest || r == cheapest ? bold : small);
        text->setColor(onFrontier(r) ? Qt::black : QColor(90, 90, 90));
        labels << text;
    }

    double hLo = rows[0]->cost.hoursToTrain.low, hHi = rows[0]->cost.hoursToTrain.high;
    double uLo = rows[0]->cost.usdToTrain.low, uHi = rows[0]->cost.usdToTrain.high;
    for (const HardwareChoiceRow* r : rows) {
        hLo = std::min(hLo, r->cost.hoursToTrain.low), hHi = std::max(hHi, r->cost.hoursToTrain.high);
        uLo = std::min(uLo, r->cost.usdToTrain.low), uHi = std::max(uHi, r->cost.usdToTrain.high);
    }
    plot.xAxis->setRange(logRange(hLo, hHi, 1.5, 1.5));  // room for the labels around the points
    plot.yAxis->setRange(logRange(uLo, uHi, 1.5, 1.5));
    legendBelow(plot, small);
    addTitle(plot, "Cost against time to train the goal on every priced GPU (bars: the predicted ranges)");
    // Pixel positions exist once the plot is laid out at its size: lay out, place, draw.
    plot.resize(width, height);
    plot.replot();
    placeLabelsWithLeaders(plot, labels, 5);
    return render(plot, width, height);
}

// The GPUs whose throughput curves are drawn: the cost-time frontier from the cheapest (at most
// kPlottedGpus, always with the fastest); without two priced GPUs, the best-ranked and the fastest.
std::vector<const HardwareChoiceRow*> curveRows(const HardwareChoice& choice) {
    std::vector<const HardwareChoiceRow*> frontier = costTimeFrontier(choice);
    std::vector<const HardwareChoiceRow*> rows;
    if (frontier.size() >= 2) {
        rows.assign(frontier.rbegin(), frontier.rend());  // cheapest first, as the ranking
        if (int(rows.size()) > kPlottedGpus) {
            rows.resize(size_t(kPlottedGpus - 1));
            rows.push_back(frontier.front());
        }
        return rows;
    }
    for (const HardwareChoiceRow& r : choice.rows)
        if (r.recommended && int(rows.size()) < kPlottedGpus) rows.push_back(&r);
    if (const HardwareChoiceRow* fastest = fastestRow(choice);
        fastest && std::find(rows.begin(), rows.end(), fastest) == rows.end()) {
        if (int(rows.size()) == kPlottedGpus) rows.pop_back();
        rows.push_back(fastest);
    }
    return rows;
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
    // Names beside the points, the cheapest, the fastest and the recorded GPU first and in bold,
    // placed clear of each other (label_placement.h).
    QFont small = plot.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    QFont bold = small;
    bold.setBold(true);
    const TraceChoiceRow* cheapest = choice.cheapest();
    const TraceChoiceRow* fastest = choice.fastest();
    std::vector<const TraceChoiceRow*> byPriority;
    for (const TraceChoiceRow* r : {cheapest, fastest, choice.recordedRow()})
        if (r && std::find(rows.begin(), rows.end(), r) != rows.end() &&
            std::find(byPriority.begin(), byPriority.end(), r) == byPriority.end())
            byPriority.push_back(r);
    std::vector<const TraceChoiceRow*> byRank = rows;
    std::sort(byRank.begin(), byRank.end(),
              [](const TraceChoiceRow* a, const TraceChoiceRow* b) { return a->rank < b->rank; });
    for (const TraceChoiceRow* r : byRank)
        if (std::find(byPriority.begin(), byPriority.end(), r) == byPriority.end()) byPriority.push_back(r);
    QVector<QCPItemText*> labels;
    double xLo = rows.front()->stepMs, xHi = xLo, yLo = rows.front()->usdPer1000Steps, yHi = yLo;
    for (const TraceChoiceRow* r : byPriority) {
        auto* text = new QCPItemText(&plot);
        text->position->setCoords(r->stepMs, r->usdPer1000Steps);
        text->setPadding(QMargins(4, 1, 4, 1));
        QString name = shortGpuName(r->gpuName);
        if (r == cheapest)
            name += r == fastest ? " (cheapest and fastest)" : " (cheapest)";
        else if (r == fastest)
            name += " (fastest)";
        if (r->recorded) name += " (recorded)";
        text->setText(name);
        const bool named = r == cheapest || r == fastest || r->recorded;
        text->setFont(named ? bold : small);
        labels << text;
        xLo = std::min(xLo, r->stepMs), xHi = std::max(xHi, r->stepMs);
        yLo = std::min(yLo, r->usdPer1000Steps), yHi = std::max(yHi, r->usdPer1000Steps);
    }
    // Whole decades on the cost axis, so that it carries at least two labelled ticks.
    auto decadeBelow = [](double v) { return std::pow(10.0, std::floor(std::log10(v))); };
    auto decadeAbove = [](double v) { return std::pow(10.0, std::ceil(std::log10(v))); };
    plot.xAxis->setRange(xLo / 1.3, xHi * 1.8);  // room for the labels on the right and above
    plot.yAxis->setRange(decadeBelow(yLo / 1.3), decadeAbove(yHi * 1.6));
    QFont legendFont = plot.font();
    legendFont.setPointSizeF(legendFont.pointSizeF() * 0.85);
    legendBelow(plot, legendFont);
    addTitle(plot, "Cost per 1,000 steps against the step time on every priced GPU");
    plot.resize(width, height);
    plot.replot();
    placeLabelsWithLeaders(plot, labels, 5);
    return render(plot, width, height);
}

QString shortGpuName(const std::string& name) {
    QString s = QString::fromStdString(name);
    for (const char* prefix : {"NVIDIA ", "GeForce ", "Tesla "})
        if (s.startsWith(prefix)) s = s.mid(int(strlen(prefix)));
    return s;
}

ReportPlots renderReportPlots(const HardwareChoice& choice, int width, int height) {
    return {throughputPlot(curveRows(choice), choice.seq, costTimeFrontier(choice).size() >= 2, width, height),
            frontierPlot(choice, width, int(height * 1.25))};
}

}  // namespace ts::report
