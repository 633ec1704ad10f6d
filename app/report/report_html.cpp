#include "report_html.h"

#include <QBuffer>
#include <QByteArray>
#include <algorithm>
#include <cmath>

namespace ts::report {

using namespace ts::predictors;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const QString kDash = QString::fromUtf8("\u2013");

QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

// Three significant digits: the ranges are 10-60% wide, more digits would be noise.
QString sig(double v) {
    const double a = std::abs(v);
    return QString::number(v, 'f', a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

// The value, then its range: below it in table cells, beside it in sentences.
QString range(const Interval& i, const QString& prefix = {}, const QString& unit = {}, bool below = true) {
    return QString("%1%2%3%7<span class=\"range\">(%1%4%5%6)</span>")
        .arg(prefix, sig(i.value), unit, sig(i.low), kDash, sig(i.high), below ? "<br/>" : " ");
}

Interval scaled(Interval i, double k) {
    return {i.value * k, i.low * k, i.high * k};
}

QString cell(const QString& html, const QString& cls = {}) {
    return cls.isEmpty() ? "<td>" + html + "</td>" : "<td class=\"" + cls + "\">" + html + "</td>";
}

QString gpuCell(const HardwareChoiceRow& r) {
    return cell(esc(r.gpuName) + "<br/><span class=\"id\">" + esc(r.gpuId) + "</span>", "gpu");
}

QString rowOpen(const HardwareChoiceRow& r) {
    return QString("<tr class=\"%1\" data-gpu=\"%2\">").arg(r.recommended ? "fits" : "none", esc(r.gpuId));
}

QString scenarioLine(const HardwareChoice& c) {
    const TrainingScenario& s = c.base;
    QString line = QString("optimizer %1").arg(optimizerName(s.optimizer));
    line += QString(", %1 GPU%2 per run").arg(s.dataParallel.gpus).arg(s.dataParallel.gpus == 1 ? "" : "s");
    if (s.dataParallel.gpus > 1)
        line += s.dataParallel.interconnect == InterconnectKind::NvLink
                    ? QString(" over NVLink where the GPU's topology joins that many, else PCIe")
                    : QString(" over %1").arg(interconnectName(s.dataParallel.interconnect));
    if (s.checkpointing) line += ", activation checkpointing";
    line += c.options.batch > 0 ? QString(", batch %1 per GPU (fixed)").arg(c.options.batch)
                                : QString(", batch size chosen per GPU");
    if (c.options.precisions.empty()) {
        line += ", every precision the GPU supports";
    } else {
        QStringList names;
        for (TrainingPrecision p : c.options.precisions) names << trainingPrecisionName(p);
        line += ", precisions " + names.join(", ");
    }
    return line.toHtmlEscaped();
}

QString choiceSentence(const HardwareChoiceRow& r) {
    QString s = QString("<b>%1</b> at batch %2 per GPU in %3: %4 to train")
                    .arg(esc(r.gpuName))
                    .arg(r.batch)
                    .arg(trainingPrecisionName(r.precision), range(r.cost.hoursToTrain, {}, " h", false));
    if (r.cost.priced)
        s += ", " + range(r.cost.usdToTrain, "$", {}, false) +
             QString(" at $%1 per GPU-hour (%2)")
                 .arg(r.cost.usdPerGpuHour, 0, 'f', 2)
                 .arg(esc(r.cost.priceSource) + (r.cost.amortised ? ", see Assumptions" : ""));
    return s + ".";
}

QString summary(const HardwareChoice& c) {
    const auto recommended = [](const HardwareChoiceRow& r) { return r.recommended; };
    const auto first = std::find_if(c.rows.begin(), c.rows.end(), recommended);
    if (first == c.rows.end())
        return "<p class=\"summary\">Nothing fits on any GPU considered (see the reasons below).</p>";
    QString html = "<p class=\"summary\">";
    // "Cheapest" always names the set it is cheapest in, so a subset is never passed off as all.
    html += (first->cost.priced ? "Cheapest for the goal " + esc(rankingScope(c)) + ": "
                                : QString("Fastest for the goal (no GPU has a price): ")) +
            choiceSentence(*first);
    const HardwareChoiceRow* fastest = nullptr;
    for (const HardwareChoiceRow& r : c.rows)
        if (r.recommended && (!fastest || r.cost.hoursToTrain.value < fastest->cost.hoursToTrain.value)) fastest = &r;
    if (fastest != &*first) html += "<br/>Fastest: " + choiceSentence(*fastest);
    return html + "</p>";
}

QString rankingTable(const HardwareChoice& c) {
    // A language model's users count tokens (model_defaults.h): its throughput in tokens.
    const bool tokens = c.seq > 0;
    QString html =
        "<table id=\"ranking\" width=\"100%\" border=\"1\" cellspacing=\"0\" "
        "cellpadding=\"4\"><thead><tr><th>#</th><th>GPU</th>"
        "<th>precision</th><th>batch per GPU</th><th>" +
        QString(tokens ? "tokens/s" : "samples/s") +
        "</th><th>time to train</th>"
        "<th>cost to train</th><th>price per GPU-hour</th></tr></thead><tbody>";
    for (const HardwareChoiceRow& r : c.rows) {
        html += rowOpen(r) + cell(QString::number(r.rank), "rank") + gpuCell(r);
        if (!r.recommended) {
            html += "<td colspan=\"6\" class=\"reason\">" + esc(r.reason) + "</td></tr>";
            continue;
        }
        const TrainingCost& cost = r.cost;
        html += cell(trainingPrecisionName(r.precision), "precision") + cell(QString::number(r.batch), "batch") +
                cell(range(tokens ? r.prediction.tokensPerS : r.prediction.samplesPerS), "num") +
                cell(range(cost.hoursToTrain, {}, " h"), "num") +
                cell(cost.priced ? range(cost.usdToTrain, "$") : "no price", "num") +
                cell(cost.priced ? "$" + QString::number(cost.usdPerGpuHour, 'f', 2) : QString(kDash), "num") + "</tr>";
    }
    return html + "</tbody></table>";
}

// Notes repeat across GPUs (a precision's numerics): each is written once, below the table, and
// the table refers to it by number.
QStringList distinctNotes(const HardwareChoice& c) {
    QStringList notes;
    for (const HardwareChoiceRow& r : c.rows)
        for (const std::string& n : r.notes)
            if (!notes.contains(QString::fromStdString(n))) notes << QString::fromStdString(n);
    return notes;
}

QString detailTable(const HardwareChoice& c, const QStringList& notes) {
    QString html =
        "<table id=\"details\" width=\"100%\" border=\"1\" cellspacing=\"0\" cellpadding=\"4\"><thead><tr><th>GPU</th>"
        "<th>recommended</th><th>largest batch that fits</th><th>iteration (ms)</th><th>peak memory (GiB)</th>"
        "<th>price</th><th>prediction source</th><th>notes</th></tr></thead><tbody>";
    for (const HardwareChoiceRow& r : c.rows) {
        html += rowOpen(r) + gpuCell(r);
        const TrainingPrediction& p = r.prediction;
        if (!r.recommended) {
            const QString memory =
                p.supported && r.batch > 0
                    ? "batch " + QString::number(r.batch) + " at " + trainingPrecisionName(r.precision) + ": " +
                          range(scaled(p.peakMemoryBytes, 1 / kGiB)) + " of " + sig(p.capacityBytes / kGiB)
                    : QString(kDash);
            html += cell("nothing fits") + cell(kDash) + cell(kDash) + cell(memory, "num") + cell(kDash) + cell(kDash) +
                    cell(esc(r.reason)) + "</tr>";
            continue;
        }
        QStringList refs;
        for (const std::string& n : r.notes) refs << QString::number(notes.indexOf(QString::fromStdString(n)) + 1);
        html += cell(QString("%1, batch %2").arg(trainingPrecisionName(r.precision)).arg(r.batch)) +
                cell(range(p.maxBatch), "num") + cell(range(p.iterationMs), "num") +
                cell(range(scaled(p.peakMemoryBytes, 1 / kGiB)) + " of " + sig(p.capacityBytes / kGiB), "num") +
                cell(r.cost.priced ? esc(r.cost.priceSource) : QString("no price")) +
                cell(predictionSourceName(p.source)) + cell(refs.join(", ")) + "</tr>";
    }
    return html + "</tbody></table>";
}

QString image(const QString& src, const QString& alt, int width) {
    if (src.isEmpty()) return {};
    return QString("<p class=\"plot\"><img src=\"%1\" alt=\"%2\" width=\"%3\"/></p>")
        .arg(src.toHtmlEscaped(), alt.toHtmlEscaped())
        .arg(width);
}

}  // namespace

QString pngDataUri(const QImage& img) {
    if (img.isNull()) return {};
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    img.save(&buffer, "PNG");
    return "data:image/png;base64," + QString::fromLatin1(bytes.toBase64());
}

QString reportHtmlHead(const QString& title) {
    return "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
           "<meta charset=\"utf-8\"/>\n<title>" +
           title +
           "</title>\n<style type=\"text/css\">\n"
           "body { font-family: sans-serif; font-size: 10pt; color: #222; }\n"
           "table { border-collapse: collapse; margin-bottom: 12px; }\n"
           "th { background-color: #e8eef6; text-align: left; }\n"
           "td, th { border: 1px solid #bbb; padding: 4px; vertical-align: top; }\n"
           "td.num { text-align: right; }\n"
           "tr.none td { color: #777; }\n"
           "tr.recorded td { background-color: #f6f3e8; }\n"
           ".range, .id { color: #666; font-size: 8pt; }\n"
           ".summary { font-size: 11pt; background-color: #f3f7ec; padding: 6px; }\n"
           "</style>\n</head>\n<body>\n";
}

QString reportHtml(const HardwareChoice& c, const ImageSources& images, const QString& generated) {
    const QString title = "Hardware choice for " + esc(c.modelLabel);
    QString html = reportHtmlHead(title);
    html += "<h1>" + title + "</h1>\n";
    html += QString("<p>%1 (%2 M parameters); %3.<br/><span class=\"id\">%4</span></p>\n")
                .arg(esc(c.modelName))
                .arg(c.parameters / 1e6, 0, 'f', 1)
                .arg(scenarioLine(c), generated.toHtmlEscaped());
    html += summary(c) + "\n";
    const QString goal =
        c.goal.inTokens()
            ? QString("%1 billion tokens at sequence length %2").arg(c.goal.tokens / 1e9, 0, 'g', 3).arg(c.seq)
            : QString("%1 %2 of %3 samples")
                  .arg(c.goal.epochs)
                  .arg(c.goal.epochs == 1 ? "epoch" : "epochs")
                  .arg(c.goal.datasetSamples, 0, 'f', 0);
    html +=
        QString("<p>Every figure is a prediction with, below it, the range it is expected in. The goal: %1.%2</p>\n")
            .arg(goal)
            .arg(c.options.priceSnapshot.date.empty() ? QString()
                                                      : " Prices per GPU-hour: the GPU database's snapshot of " +
                                                            esc(c.options.priceSnapshot.date) + " (see Assumptions).");
    html += "<h2>Ranking</h2>\n" + rankingTable(c) + "\n";
    html += image(images.throughput, "Throughput against batch size on the best-ranked GPUs", images.width);
    html += image(images.costVsTime, "Cost against time to train on every priced GPU", images.width);
    const QStringList notes = distinctNotes(c);
    html += "<h2>Recommended batch size and precision per GPU</h2>\n" + detailTable(c, notes) + "\n";
    if (!notes.isEmpty()) {
        html += "<ol class=\"notes\">\n";
        for (const QString& n : notes) html += "<li>" + n.toHtmlEscaped() + "</li>\n";
        html += "</ol>\n";
    }
    html += "<h2>Assumptions</h2>\n<ul class=\"assumptions\">\n";
    for (const std::string& a : c.assumptions) html += "<li>" + esc(a) + "</li>\n";
    html += "</ul>\n<h2>Prediction ranges</h2>\n<p>A range (low " + kDash +
            " high) is where the figure is expected given the errors TrainScope measured or assumed for each part "
            "of an iteration (docs/prediction.md, Intervals). Times and costs take the throughput's range: the "
            "fastest end is the cheapest. Two GPUs whose ranges overlap may rank either way in practice.</p>\n";
    html += "</body>\n</html>\n";
    return html;
}

}  // namespace ts::report
