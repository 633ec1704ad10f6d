#include "trace_report_html.h"

#include <QFileInfo>
#include <QStringList>
#include <cmath>

#include "report_html.h"

namespace ts::report {

using namespace ts::predictors;

namespace {

const QString kDash = QString::fromUtf8("\u2013");

QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

// Milliseconds with three significant digits (0.0123, 1.23, 12.3, 123).
QString ms(double v) {
    const double a = std::abs(v);
    return QString::number(v, 'f', a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : a >= 0.1 ? 3 : 4);
}

// US$: cents from $1 up, otherwise three significant digits, so a cheap step is never shown as $0.00.
QString usd(double v) {
    if (v >= 1000) return "$" + QString::number(v, 'f', 0);
    if (v >= 1 || v <= 0) return "$" + QString::number(v, 'f', 2);
    const int decimals = std::min(6, 2 - int(std::floor(std::log10(v))));
    return "$" + QString::number(v, 'f', decimals);
}

QString cell(const QString& html, const QString& cls = {}) {
    return cls.isEmpty() ? "<td>" + html + "</td>" : "<td class=\"" + cls + "\">" + html + "</td>";
}

QString gpuCell(const TraceChoiceRow& r) {
    return cell(esc(r.gpuName) + (r.recorded ? " <b>(recorded)</b>" : QString()) + "<br/><span class=\"id\">" +
                    esc(r.gpuId) + "</span>",
                "gpu");
}

QString rowOpen(const TraceChoiceRow& r) {
    return QString("<tr class=\"%1\" data-gpu=\"%2\">")
        .arg(!r.predicted ? "none"
             : r.recorded ? "recorded"
                          : "fits",
             esc(r.gpuId));
}

QString speed(const TraceChoiceRow& r) {
    return QString::number(r.speedup, 'f', 2) + "x";
}

QString rowSentence(const TraceChoiceRow& r) {
    QString s = QString("<b>%1</b>: a step in %2 ms").arg(esc(r.gpuName), ms(r.stepMs));
    if (!r.recorded) s += " (" + speed(r) + " the recorded GPU's speed)";
    if (r.price.priced)
        s += QString(", %1 per 1,000 steps at $%2 per GPU-hour (%3)")
                 .arg(usd(r.usdPer1000Steps))
                 .arg(r.price.usdPerGpuHour, 0, 'f', 2)
                 .arg(esc(r.price.priceSource) + (r.price.amortised ? ", see Assumptions" : ""));
    else
        s += ", no price in the GPU database";
    return s + ".";
}

QString jobParagraph(const TraceChoice& c, const QString& generated) {
    QString p = QString(
                    "PyTorch profiler trace <code>%1</code>: %2 recorded on %3 (<span class=\"id\">%4</span>; "
                    "the trace's device %5, matched %6).<br/>")
                    .arg(esc(c.source))
                    .arg(c.steps > 0 ? QString("%1 step%2").arg(c.steps).arg(c.steps == 1 ? "" : "s")
                                     : QString("no ProfilerStep marks (the whole trace taken as one step)"))
                    .arg(esc(c.recordedGpuName), esc(c.recordedGpuId), esc("\"" + c.deviceName + "\""), esc(c.match));
    const QString batch =
        c.batch > 0 ? QString("batch <b>%1</b> (recorded %2, found in its shapes)").arg(c.batch).arg(c.recordedBatch)
                    : QString("batch as recorded");
    const QString precision =
        c.precision != c.recordedPrecision
            ? QString("precision <b>%1</b> (recorded %2)")
                  .arg(trainingPrecisionName(c.precision), trainingPrecisionName(c.recordedPrecision))
            : QString("precision as recorded (%1)").arg(trainingPrecisionName(c.recordedPrecision));
    p += QString(
             "Measured median step: <b>%1 ms</b>. Operator shapes %2; Python stack %3. Predicted at %4, %5; "
             "optimizer and data parallelism as recorded; FP32 arithmetic: %6.")
             .arg(ms(c.measuredStepMs))
             .arg(c.recordShapes ? "recorded (GEMMs moved by their FLOPs and bytes)"
                                 : "not recorded (kernels moved by their launch alone)")
             .arg(c.withStack ? "recorded" : "not recorded")
             .arg(batch, precision)
             .arg(fp32MathName(c.options.change.math));
    return "<p>" + p + "<br/><span class=\"id\">" + generated.toHtmlEscaped() + "</span></p>\n";
}

QString summary(const TraceChoice& c) {
    const TraceChoiceRow* cheapest = c.cheapest();
    const TraceChoiceRow* fastest = c.fastest();
    if (!fastest) return "<p class=\"summary\">No GPU considered could be predicted (see the reasons below).</p>\n";
    QString html = "<p class=\"summary\">";
    html += cheapest ? "Cheapest " + esc(traceRankingScope(c)) + ": " + rowSentence(*cheapest)
                     : "Fastest (no GPU considered has a price): " + rowSentence(*fastest);
    if (cheapest && fastest != cheapest) html += "<br/>Fastest: " + rowSentence(*fastest);
    if (const TraceChoiceRow* recorded = c.recordedRow(); recorded && recorded->predicted)
        html += "<br/>On the recorded GPU, " + rowSentence(*recorded);
    return html + "</p>\n";
}

QString rankingTable(const TraceChoice& c, TablePages* pages) {
    const QString head =
        "<tr><th>#</th><th width=\"22%\">GPU</th><th>step (ms)</th><th>speed vs recorded</th><th>steps per "
        "hour</th><th>cost per 1,000 steps</th><th width=\"30%\">price per GPU-hour</th></tr>";
    QStringList rows;
    for (const TraceChoiceRow& r : c.rows) {
        QString html = rowOpen(r) + cell(QString::number(r.rank), "rank") + gpuCell(r);
        if (!r.predicted) {
            rows << html + "<td colspan=\"5\" class=\"reason\">not predicted: " + esc(r.reason) + "</td></tr>";
            continue;
        }
        rows << html + cell(ms(r.stepMs), "num") + cell(speed(r), "num") +
                    cell(QString::number(r.stepsPerHour, 'f', 0), "num") +
                    cell(r.price.priced ? usd(r.usdPer1000Steps) : QString("no price"), "num") +
                    cell(r.price.priced ? "$" + QString::number(r.price.usdPerGpuHour, 'f', 2) +
                                              "<br/><span class=\"id\">" + esc(r.price.priceSource) + "</span>"
                                        : kDash + "<br/><span class=\"id\">" + esc(r.priceNote) + "</span>") +
                    "</tr>";
    }
    return splitTable("ranking", "Ranking", "width=\"100%\" border=\"1\" cellspacing=\"0\" cellpadding=\"4\"", head,
                      rows, pages);
}

// GPU time per step by kernel class: measured on the recorded GPU, predicted on it (when the
// arithmetic changes) and on the cheapest and the fastest GPU.
QString breakdownTable(const TraceChoice& c, TablePages* pages) {
    const TraceChoiceRow* measured = nullptr;  // any predicted row: the measured times are the trace's
    for (const TraceChoiceRow& r : c.rows)
        if (r.predicted) {
            measured = &r;
            break;
        }
    if (!measured) return {};
    struct Column {
        QString head;
        const TraceChoiceRow* row;
        bool measured;
    };
    std::vector<Column> columns{{"measured on " + esc(c.recordedGpuId), measured, true}};
    const TraceChoiceRow* recorded = c.recordedRow();
    auto add = [&](const QString& what, const TraceChoiceRow* r) {
        if (!r || !r->predicted) return;
        for (const Column& col : columns)
            if (col.row == r && !col.measured) return;
        const bool asRecorded =
            c.options.change.math == Fp32Math::AsRecorded && c.batch == 0 && c.precision == c.recordedPrecision;
        if (r == recorded && asRecorded) return;  // predicted = measured there
        columns.push_back({what + " " + esc(r->gpuId), r, false});
    };
    add("predicted on", recorded);
    add("cheapest:", c.cheapest());
    add("fastest:", c.fastest());
    QString head = "<tr><th>kernel class</th><th>activities per step</th>";
    for (const Column& col : columns) head += "<th>" + col.head + " (ms)</th>";
    head += "</tr>";
    QStringList rows;
    const std::vector<TraceClassTime>& classes = measured->prediction->classes;
    const double steps = std::max(1, c.steps);
    std::vector<double> totals(columns.size(), 0.0);
    for (size_t k = 0; k < classes.size(); ++k) {
        QString html = "<tr>" + cell(kernelClassName(classes[k].kind)) +
                       cell(QString::number(double(classes[k].activities) / steps, 'f', 0), "num");
        for (size_t i = 0; i < columns.size(); ++i) {
            double v = classes[k].measuredMs;
            if (!columns[i].measured)
                for (const TraceClassTime& t : columns[i].row->prediction->classes)
                    if (t.kind == classes[k].kind) v = t.predictedMs;
            totals[i] += v;
            html += cell(ms(v), "num");
        }
        rows << html + "</tr>";
    }
    QString work = "<tr><td><b>GPU work</b> (streams summed)</td><td></td>";
    for (double t : totals) work += cell("<b>" + ms(t) + "</b>", "num");
    QString step = "<tr><td><b>median step</b></td><td></td>";
    for (const Column& col : columns)
        step += cell("<b>" + ms(col.measured ? c.measuredStepMs : col.row->stepMs) + "</b>", "num");
    rows << work + "</tr>" << step + "</tr>";
    return splitTable("classes", {}, "border=\"1\" cellspacing=\"0\" cellpadding=\"4\"", head, rows, pages);
}

}  // namespace

QString traceReportHtml(const TraceChoice& c, const QString& plot, int width, const QString& generated,
                        TablePages* pages) {
    const QString title = "Hardware choice for the job recorded in " +
                          QFileInfo(QString::fromStdString(c.source)).fileName().toHtmlEscaped();
    QString html = reportHtmlHead(title);
    html += "<h1>" + title + "</h1>\n" + jobParagraph(c, generated) + summary(c);
    html +=
        QString(
            "<p>Every figure is a point prediction from the trace (no ranges). Costs are of one GPU: a "
            "data-parallel job of N GPUs costs N times as much per step.%1</p>\n")
            .arg(c.options.priceSnapshot.date.empty() ? QString()
                                                      : " Prices per GPU-hour: the GPU database's snapshot of " +
                                                            esc(c.options.priceSnapshot.date) + " (see Assumptions).");
    html += rankingTable(c, pages);
    if (!plot.isEmpty())
        html += QString("<p class=\"plot\"><img src=\"%1\" alt=\"%2\" width=\"%3\"/></p>\n")
                    .arg(plot.toHtmlEscaped(), "Cost per 1,000 steps against the step time on every priced GPU")
                    .arg(width);
    html +=
        "<h2>GPU time per step by kernel class</h2>\n"
        "<p>The median step is shorter than the GPU work where streams overlap, and longer where the GPU "
        "waits for the host (whose time is kept as measured).</p>\n" +
        breakdownTable(c, pages);
    QStringList notes;
    for (const std::string& n : c.traceNotes) notes << esc(n);
    for (const TraceNote& n : c.notes) {
        QString line = esc(n.text);
        if (int(n.gpuIds.size()) < c.predicted) {
            QStringList ids;
            for (const std::string& id : n.gpuIds) ids << esc(id);
            line += " <span class=\"id\">(" + ids.join(", ") + ")</span>";
        }
        notes << line;
    }
    if (!notes.isEmpty())
        html += "<h2>Notes</h2>\n<ul class=\"notes\">\n<li>" + notes.join("</li>\n<li>") + "</li>\n</ul>\n";
    html += "<h2>Assumptions</h2>\n<ul class=\"assumptions\">\n";
    for (const std::string& a : c.assumptions) html += "<li>" + esc(a) + "</li>\n";
    html += "</ul>\n</body>\n</html>\n";
    return html;
}

}  // namespace ts::report
