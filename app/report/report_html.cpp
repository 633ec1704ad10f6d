#include "report_html.h"

#include <QBuffer>
#include <QByteArray>
#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <cmath>

namespace ts::report {

using namespace ts::predictors;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const QString kDash = QString::fromUtf8("\u2013");
const QString kTableAttributes = "width=\"100%\" border=\"1\" cellspacing=\"0\" cellpadding=\"4\"";

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
    if (s.optimizerImplementation != OptimizerImplementation::Foreach && s.optimizer != Optimizer::Adam8bit)
        line += QString(" (%1)").arg(optimizerImplementationName(s.optimizerImplementation));
    line += QString(", %1 GPU%2 per run").arg(s.dataParallel.gpus).arg(s.dataParallel.gpus == 1 ? "" : "s");
    if (c.tensorParallel > 1)
        line += QString(" in tensor-parallel groups of %1 (each GPU holds a shard of the model; figures per GPU)")
                    .arg(c.tensorParallel);
    if (c.expertParallel > 1)
        line += QString(" with the routed experts split over groups of %1 (expert parallelism; figures per GPU)")
                    .arg(c.expertParallel);
    if (s.dataParallel.gpus > 1)
        line += s.dataParallel.interconnect == InterconnectKind::NvLink
                    ? QString(" over NVLink where the GPU's topology joins that many, else PCIe")
                    : QString(" over %1").arg(interconnectName(s.dataParallel.interconnect));
    if (s.dataParallel.zeroStage > 0)
        line += s.dataParallel.zeroStage == 3 ? QString(", ZeRO stage 3 (FSDP full sharding)")
                                              : QString(", ZeRO stage %1").arg(s.dataParallel.zeroStage);
    if (s.accumulation > 1) line += QString(", gradient accumulation over %1 micro-batches").arg(s.accumulation);
    if (s.checkpointing != predictors::Checkpointing::None)
        line += ", " + QString::fromStdString(checkpointingPhrase(s.checkpointing));
    if (s.channelsLast) line += ", activations channels-last";
    if (s.keepGradients) line += ", gradients kept between steps";
    if (!s.masterWeights) line += ", bf16-params without fp32 master weights";
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

// "$1.39 per GPU-hour, the on-demand price of RunPod A100 pod (2026-11-09)": the price a cost
// assumes and where it comes from, in the same sentence as the GPU it is for.
QString priceClause(const TrainingCost& cost) {
    if (!cost.priced) return "no price in the GPU database";
    const QString price = QString("at $%1 per GPU-hour, ").arg(cost.usdPerGpuHour, 0, 'f', 2);
    if (!cost.amortised) return price + "the on-demand listing of " + esc(cost.priceSource);
    // "amortised purchase launch MSRP $999 (2018-08-20)" -> "launch MSRP $999 (2018-08-20)"
    QString bought = esc(cost.priceSource);
    bought.remove(QRegularExpression("^amortised purchase "));
    return price + "its " + bought + " amortised (see Assumptions)";
}

QString choiceSentence(const HardwareChoiceRow& r) {
    QString s = QString("<b>%1</b> at batch %2 per GPU in %3: %4 to train")
                    .arg(esc(r.gpuName))
                    .arg(r.batch)
                    .arg(trainingPrecisionName(r.precision), range(r.cost.hoursToTrain, {}, " h", false));
    if (r.cost.priced) s += " for " + range(r.cost.usdToTrain, "$", {}, false);
    return s + ", " + priceClause(r.cost) + ".";
}

QString summary(const HardwareChoice& c) {
    const auto recommended = [](const HardwareChoiceRow& r) { return r.recommended; };
    const auto first = std::find_if(c.rows.begin(), c.rows.end(), recommended);
    if (first == c.rows.end())
        return "<p class=\"summary\">Nothing fits on any GPU considered (see the reasons below).</p>";
    QString html = "<p class=\"summary\">";
    // Each superlative names the set it holds in, in the same sentence, so that a subset is never
    // passed off as all.
    const HardwareChoiceRow* fastest = fastestRow(c);
    if (first->cost.priced)
        html += "Best value (cheapest for the goal) " + esc(rankingScope(c)) + ": " + choiceSentence(*first);
    html += QString(first->cost.priced ? "<br/>" : "") + "Fastest " + esc(fastestScope(c)) +
            (first->cost.priced ? "" : " (no GPU has a price)") + ": " + choiceSentence(*fastest);
    const std::vector<const HardwareChoiceRow*> frontier = costTimeFrontier(c);
    if (frontier.size() > 2) {
        QStringList names;
        for (auto it = frontier.rbegin(); it != frontier.rend(); ++it) names << esc((*it)->gpuName);
        html += "<br/>Between the two, each of these is faster than the one before it and dearer: " + names.join(", ") +
                " (the cost-time frontier; every other priced GPU is slower and dearer than one "
                "of them).";
    }
    return html + "</p>";
}

QString rankingTable(const HardwareChoice& c, TablePages* pages) {
    // A language model's users count tokens (model_defaults.h): its throughput in tokens.
    const bool tokens = c.seq > 0;
    const QString head = "<tr><th>#</th><th>GPU</th><th>precision</th><th>batch per GPU</th><th>" +
                         QString(tokens ? "tokens/s" : "samples/s") +
                         "</th><th>time to train</th><th>cost to train</th><th>price per GPU-hour</th></tr>";
    QStringList rows;
    for (const HardwareChoiceRow& r : c.rows) {
        QString html = rowOpen(r) + cell(QString::number(r.rank), "rank") + gpuCell(r);
        if (!r.recommended) {
            rows << html + "<td colspan=\"6\" class=\"reason\">" + esc(r.reason) + "</td></tr>";
            continue;
        }
        const TrainingCost& cost = r.cost;
        rows << html + cell(trainingPrecisionName(r.precision), "precision") + cell(QString::number(r.batch), "batch") +
                    cell(range(tokens ? r.prediction.tokensPerS : r.prediction.samplesPerS), "num") +
                    cell(range(cost.hoursToTrain, {}, " h"), "num") +
                    cell(cost.priced ? range(cost.usdToTrain, "$") : "no price", "num") +
                    cell(cost.priced ? "$" + QString::number(cost.usdPerGpuHour, 'f', 2) : QString(kDash), "num") +
                    "</tr>";
    }
    return splitTable("ranking", "Ranking", kTableAttributes, head, rows, pages);
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

QString detailTable(const HardwareChoice& c, const QStringList& notes, TablePages* pages) {
    const QString head =
        "<tr><th>GPU</th><th>recommended</th><th>largest batch that fits</th><th>iteration (ms)</th><th>peak "
        "memory (GiB)</th><th>price</th><th>prediction source</th><th>notes</th></tr>";
    QStringList rows;
    for (const HardwareChoiceRow& r : c.rows) {
        QString html = rowOpen(r) + gpuCell(r);
        const TrainingPrediction& p = r.prediction;
        if (!r.recommended) {
            const QString memory =
                p.supported && r.batch > 0
                    ? "batch " + QString::number(r.batch) + " at " + trainingPrecisionName(r.precision) + ": " +
                          range(scaled(p.peakMemoryBytes, 1 / kGiB)) + " of " + sig(p.capacityBytes / kGiB)
                    : QString(kDash);
            rows << html + cell("nothing fits") + cell(kDash) + cell(kDash) + cell(memory, "num") + cell(kDash) +
                        cell(kDash) + cell(esc(r.reason)) + "</tr>";
            continue;
        }
        QStringList refs;
        for (const std::string& n : r.notes) refs << QString::number(notes.indexOf(QString::fromStdString(n)) + 1);
        rows << html + cell(QString("%1, batch %2").arg(trainingPrecisionName(r.precision)).arg(r.batch)) +
                    cell(range(p.maxBatch), "num") + cell(range(p.iterationMs), "num") +
                    cell(range(scaled(p.peakMemoryBytes, 1 / kGiB)) + " of " + sig(p.capacityBytes / kGiB), "num") +
                    cell(r.cost.priced ? esc(r.cost.priceSource) : QString("no price")) +
                    cell(predictionSourceName(p.source)) + cell(refs.join(", ")) + "</tr>";
    }
    return splitTable("details", "Recommended batch size and precision per GPU", kTableAttributes, head, rows, pages);
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

QString reportHtml(const HardwareChoice& c, const ImageSources& images, const QString& generated, TablePages* pages) {
    const QString title = "Hardware choice for " + esc(c.modelLabel);
    QString html = reportHtmlHead(title);
    html += "<h1>" + title + "</h1>\n";
    const QString parameters = c.tensorParallel > 1 || c.expertParallel > 1
                                   ? QString("%1 M parameters, %2 M on each GPU")
                                         .arg(c.parameters / 1e6, 0, 'f', 1)
                                         .arg(c.parametersPerGpu / 1e6, 0, 'f', 1)
                                   : QString("%1 M parameters").arg(c.parameters / 1e6, 0, 'f', 1);
    const QString active = c.activeParameters > 0 && c.activeParameters < c.parameters
                               ? QString(", %1 M active per token").arg(c.activeParameters / 1e6, 0, 'f', 1)
                               : QString();
    // A fine-tune (LoRA, frozen parameters) says how much of the model trains.
    const QString trainable = c.trainableParameters < c.parametersPerGpu
                                  ? QString(", %1 M trainable%2")
                                        .arg(c.trainableParameters / 1e6, 0, 'f', c.trainableParameters < 1e8 ? 2 : 1)
                                        .arg(c.tensorParallel > 1 || c.expertParallel > 1 ? " on each GPU" : "")
                                  : QString();
    html += QString("<p>%1 (%2); %3.<br/><span class=\"id\">%4</span></p>\n")
                .arg(esc(c.modelName))
                .arg(parameters + active + trainable)
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
    html += rankingTable(c, pages);
    html += image(images.throughput, "Throughput against batch size on the best-ranked GPUs", images.width);
    html += image(images.costVsTime, "Cost against time to train on every priced GPU", images.width);
    const QStringList notes = distinctNotes(c);
    html += detailTable(c, notes, pages);
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
