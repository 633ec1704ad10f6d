// The hardware-choice report: the HTML parses as XML and lists the GPUs in the ranking's order with
// its plots embedded as PNGs; the PDF is a complete PDF with pages; the CSV and JSON files carry
// the same ranking; a file that cannot be written gives a sentence, not a crash.
#include <qcustomplot.h>

#include <QAction>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QXmlStreamReader>
#include <QtTest>

#include "explorer_state.h"
#include "label_placement.h"
#include "main_window.h"
#include "report_export.h"
#include "report_writer.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/choice/trace_choice.h"

using namespace ts;
using namespace ts::predictors;
using namespace ts::report;

namespace {

const char* kModel = "zoo:resnet18?image=64";

QStringList rankedIds(const HardwareChoice& c) {
    QStringList ids;
    for (const HardwareChoiceRow& r : c.rows) ids << QString::fromStdString(r.gpuId);
    return ids;
}

// Two ProfilerSteps of 1000 us on an A100 80 GB, each an operator launching one 100 us elementwise
// kernel (tests/unit/test_trace_choice.cpp works the same job out in full).
TraceChoice traceChoice(const std::vector<std::string>& ids) {
    QString events;
    for (int s = 0; s < 2; ++s) {
        const int t = 1000 * s, c = s + 1;
        events +=
            QString(R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#%1","pid":1,"tid":1,"ts":%2,"dur":1000},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":%3,"dur":8},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%4,"dur":3,"args":{"correlation":%1}},
{"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":%5,"dur":100,
 "args":{"device":0,"stream":7,"correlation":%1,"grid":[2048,1,1],"block":[256,1,1],"registers per thread":32,"shared memory":0}},)")
                .arg(c)
                .arg(t)
                .arg(t + 10)
                .arg(t + 12)
                .arg(t + 20);
    }
    events.chop(1);
    const QString doc = R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-80GB",
"totalGlobalMem":85899345920,"computeMajor":8,"computeMinor":0,"numSms":108,"warpSize":32}],"traceEvents":[)" +
                        events + "]}";
    const GpuDatabase& db = GpuDatabase::builtin();
    const KinetoTrace trace = readKinetoTraceText(doc.toStdString(), "/data/job.json");
    std::string how;
    const GpuSpec* origin = matchTraceGpu(trace, db, &how);
    std::vector<const GpuSpec*> gpus;
    for (const std::string& id : ids) gpus.push_back(&db.get(id));
    TraceChoiceOptions options;
    options.priceSnapshot = db.priceSnapshot();
    return chooseHardwareForTrace(trace, *origin, how, gpus, options);
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A ranking of `n` made-up GPUs "Test GPU 001"... (id "test-gpu-001"), each with a two-line cell
// (value, range) in every column: GPU i trains in 1 + i hours for $10 + i, so that GPU 000 is both
// the cheapest and the fastest and the only one the summary names.
HardwareChoice longRanking(int n) {
    HardwareChoice c;
    c.modelLabel = c.modelName = "made-up";
    for (int i = 0; i < n; ++i) {
        HardwareChoiceRow r;
        r.rank = i + 1;
        r.gpuId = QString("test-gpu-%1").arg(i, 3, 10, QChar('0')).toStdString();
        r.gpuName = QString("Test GPU %1").arg(i, 3, 10, QChar('0')).toStdString();
        r.recommended = true;
        r.batch = 64;
        TrainingPrediction& p = r.prediction;
        p.samplesPerS = {1000.0 + i, 900.0 + i, 1100.0 + i};
        p.iterationMs = {50.0 + i, 45.0 + i, 55.0 + i};
        p.peakMemoryBytes = {8e9, 7e9, 9e9};
        p.capacityBytes = 16e9;
        p.maxBatch = {128, 100, 150};
        r.cost.priced = true;
        r.cost.usdPerGpuHour = 1;
        r.cost.priceSource = "Example Cloud example-instance (2026-11-01)";
        r.cost.hoursToTrain = {1.0 + i, 0.9 + i, 1.2 + i};
        r.cost.usdToTrain = {10.0 + i, 9.0 + i, 12.0 + i};
        c.rows.push_back(r);
    }
    return c;
}

// The text of each page of a PDF (pdftotext), empty when poppler's pdftotext is not installed.
QStringList pdfPages(const QString& pdf) {
    QProcess pdftotext;
    pdftotext.start("pdftotext", {"-layout", pdf, "-"});
    if (!pdftotext.waitForFinished(60000) || pdftotext.exitCode() != 0) return {};
    QStringList pages = QString::fromUtf8(pdftotext.readAllStandardOutput()).split('\f');
    if (!pages.isEmpty() && pages.back().trimmed().isEmpty()) pages.removeLast();
    return pages;
}

}  // namespace

class ReportTest : public QObject {
    Q_OBJECT
private:
    Graph graph_ = loadModel(kModel);
    TrainingPredictor predictor_{graph_};
    HardwareChoice choice_;

private Q_SLOTS:
    void initTestCase() {
        std::vector<const GpuSpec*> gpus;
        for (const GpuSpec& g : GpuDatabase::builtin().gpus()) gpus.push_back(&g);
        HardwareChoiceOptions options;
        options.modelLabel = kModel;
        choice_ = chooseHardware(predictor_, gpus, TrainingScenario{}, TrainingGoal{}, options);
        QVERIFY(choice_.rows.size() > 20);
    }

    void htmlIsXmlWithTheRankingAndTheImages() {
        const QByteArray html = reportBytes(choice_, ReportFormat::Html);
        QXmlStreamReader xml(html);
        QStringList rows;
        QStringList images;
        QString table, list;
        int assumptions = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement) continue;
            const auto attrs = xml.attributes();
            if (xml.name() == u"table") table = attrs.value("id").toString();
            if (xml.name() == u"tr" && table == "ranking" && attrs.hasAttribute("data-gpu"))
                rows << attrs.value("data-gpu").toString();
            if (xml.name() == u"img") images << attrs.value("src").toString();
            if (xml.name() == u"ul" || xml.name() == u"ol") list = attrs.value("class").toString();
            if (xml.name() == u"li" && list == "assumptions") ++assumptions;
        }
        QVERIFY2(!xml.hasError(), qPrintable(QString("line %1: %2").arg(xml.lineNumber()).arg(xml.errorString())));
        QCOMPARE(rows, rankedIds(choice_));
        QCOMPARE(assumptions, int(choice_.assumptions.size()));
        QCOMPARE(images.size(), 2);  // throughput, and cost against time (priced GPUs exist)
        for (const QString& src : images) {
            const QString prefix = "data:image/png;base64,";
            QVERIFY(src.startsWith(prefix));
            QImage image;
            QVERIFY(image.loadFromData(QByteArray::fromBase64(src.mid(prefix.size()).toLatin1()), "PNG"));
            QVERIFY(image.width() >= 400);
            QSet<QRgb> colours;  // a drawn plot, not a blank image
            for (int y = 0; y < image.height(); y += 3)
                for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
            QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
        }
        // The recommended precision and batch of the first GPU are in its row.
        const HardwareChoiceRow& first = choice_.rows.front();
        QVERIFY(first.recommended);
        const QString row = QString::fromUtf8(html)
                                .section(QString("data-gpu=\"%1\"").arg(first.gpuId.c_str()), 1, 1)
                                .section("</tr>", 0, 0);
        QVERIFY2(row.contains(QString(">%1<").arg(trainingPrecisionName(first.precision))), qPrintable(row));
        QVERIFY2(row.contains(QString(">%1<").arg(first.batch)), qPrintable(row));
    }

    // The headline names the best value and the fastest GPU, each with the set it was chosen in,
    // the price it assumes and where that price comes from, in the same sentence; and the snapshot.
    void headlineNamesTheSetThePriceAndTheSnapshot() {
        // The P4 without its price: the best value is of a subset, the fastest of all three.
        GpuDatabase db = GpuDatabase::builtin();
        db.applyOverrides(R"({"format": "trainscope-gpu-database", "version": 1,
                              "gpus": [{"id": "p4", "prices": [], "purchase": []}]})",
                          "test");
        QCOMPARE(db.get("p4").cheapestPrice(), nullptr);
        std::vector<const GpuSpec*> gpus;
        for (const char* id : {"t4", "p4", "a100-sxm4-80gb"}) gpus.push_back(&db.get(id));
        HardwareChoiceOptions options;
        options.modelLabel = kModel;
        options.priceSnapshot = db.priceSnapshot();
        const HardwareChoice c = chooseHardware(predictor_, gpus, TrainingScenario{}, TrainingGoal{}, options);
        const QString html = QString::fromUtf8(reportBytes(c, ReportFormat::Html));
        const QStringList sentences = html.section("<p class=\"summary\">", 1, 1).section("</p>", 0, 0).split("<br/>");
        QVERIFY2(sentences.size() >= 2, qPrintable(sentences.join("\n")));
        const HardwareChoiceRow& best = c.rows.front();
        const HardwareChoiceRow* fastest = fastestRow(c);
        QVERIFY(best.cost.priced && fastest && fastest->cost.priced);
        auto dollars = [](double v) { return QString("$%1 per GPU-hour").arg(v, 0, 'f', 2); };
        QVERIFY2(sentences[0].startsWith("Best value (cheapest for the goal) of the 2 priced GPUs where a batch "
                                         "fits, out of 3 (1 without a price): <b>" +
                                         QString::fromStdString(best.gpuName) + "</b>") &&
                     sentences[0].contains(dollars(best.cost.usdPerGpuHour)) &&
                     sentences[0].contains(QString::fromStdString(best.cost.priceSource).toHtmlEscaped()),
                 qPrintable(sentences[0]));
        QVERIFY2(
            sentences[1].startsWith("Fastest of all 3 GPUs: <b>" + QString::fromStdString(fastest->gpuName) + "</b>") &&
                sentences[1].contains(dollars(fastest->cost.usdPerGpuHour)),
            qPrintable(sentences[1]));
        // The basis: an on-demand listing or an amortised purchase, said of each price.
        for (const QString& sentence : sentences.mid(0, 2))
            QVERIFY2(sentence.contains("the on-demand listing of") || sentence.contains("amortised (see Assumptions)"),
                     qPrintable(sentence));
        QVERIFY(html.contains("snapshot of " + QString::fromStdString(db.priceSnapshot().date)));
    }

    // The scenario line says how the run is set up: sharding, accumulation, the checkpointing policy.
    void scenarioLineSaysShardingAccumulationAndCheckpointing() {
        const GpuDatabase& db = GpuDatabase::builtin();
        std::vector<const GpuSpec*> gpus = {&db.get("a100-sxm4-80gb"), &db.get("h100-sxm")};
        TrainingScenario base;
        base.dataParallel.gpus = 8;
        base.dataParallel.zeroStage = 3;
        base.accumulation = 2;
        base.checkpointing = Checkpointing::SelectiveOps;
        HardwareChoiceOptions options;
        options.modelLabel = kModel;
        const HardwareChoice c = chooseHardware(predictor_, gpus, base, TrainingGoal{}, options);
        const QString html = QString::fromUtf8(reportBytes(c, ReportFormat::Html));
        for (const QString& phrase : {QString("ZeRO stage 3 (FSDP full sharding)"),
                                      QString("gradient accumulation over 2 micro-batches"),
                                      QString::fromStdString(checkpointingPhrase(Checkpointing::SelectiveOps))})
            QVERIFY2(html.contains(phrase.toHtmlEscaped()), qPrintable(phrase));
    }

    void pdfIsCompleteWithPages() {
        QTemporaryDir dir;
        const QString path = dir.filePath("report.pdf");
        QCOMPARE(writeReport(choice_, ReportFormat::Pdf, path), QString());
        const QByteArray pdf = readAll(path);
        QVERIFY(pdf.startsWith("%PDF-"));
        QVERIFY(pdf.trimmed().endsWith("%%EOF"));
        const qsizetype pages = QString::fromLatin1(pdf).count(QRegularExpression("/Type\\s*/Page[^s]"));
        QVERIFY2(pages >= 2, qPrintable(QString::number(pages)));  // 28 GPUs, two tables, two plots
        QVERIFY(pdf.contains("/Image"));                           // the plots
        // A4 landscape (842 x 595 points): the ranking's columns need the width.
        const QRegularExpressionMatch box =
            QRegularExpression("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]").match(QString::fromLatin1(pdf));
        QVERIFY(box.hasMatch());
        QVERIFY2(box.captured(1).toDouble() > box.captured(2).toDouble(), qPrintable(box.captured(0)));
    }

    // A ranking longer than a page: every row's cells sit on one page. Each GPU's name and id are
    // the two lines of its GPU cell (in the ranking and in the details table), so on every page
    // both appear as often: a row broken at a page's foot leaves its name on one page and its id
    // on the next.
    void pdfRowsAreNeverSplitAcrossPages() {
        const HardwareChoice c = longRanking(90);
        QTemporaryDir dir;
        const QString path = dir.filePath("long.pdf");
        QCOMPARE(writeReport(c, ReportFormat::Pdf, path), QString());
        const QStringList pages = pdfPages(path);
        if (pages.isEmpty()) QSKIP("pdftotext (poppler-utils) is not installed");
        QVERIFY2(pages.size() >= 4, qPrintable(QString::number(pages.size())));
        for (int i = 1; i < 90; ++i) {  // GPU 000 is also named in the summary
            const QString name = QString("Test GPU %1").arg(i, 3, 10, QChar('0'));
            const QString id = QString("test-gpu-%1").arg(i, 3, 10, QChar('0'));
            int total = 0;
            for (int page = 0; page < pages.size(); ++page) {
                const int names = int(pages[page].count(name)), ids = int(pages[page].count(id));
                QVERIFY2(
                    names == ids,
                    qPrintable(QString("page %1: %2 x%3, %4 x%5").arg(page + 1).arg(name).arg(names).arg(id).arg(ids)));
                total += ids;
            }
            QCOMPARE(total, 2);  // the ranking and the details
        }
    }

    // Twenty points crowded into a corner of the plot: every one gets its label, none over
    // another label or another point, the ones that find no place beside their point further out
    // with a line to it.
    void crowdedLabelsAreAllShownApart() {
        QCustomPlot plot;
        plot.resize(900, 600);
        plot.xAxis->setRange(0, 100);
        plot.yAxis->setRange(0, 100);
        QVector<QCPItemText*> labels;
        for (int i = 0; i < 20; ++i) {
            auto* text = new QCPItemText(&plot);
            text->position->setCoords(10 + (i % 5) * 1.5, 10 + (i / 5) * 2.0);
            text->setText(QString("GPU number %1").arg(i));
            labels << text;
        }
        plot.replot();
        QCOMPARE(placeLabelsWithLeaders(plot, labels, 5), 20);
        QVector<QRectF> rects;
        for (QCPItemText* label : labels) {
            QVERIFY(label->visible());
            rects << QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
            QVERIFY(QRectF(plot.axisRect()->rect()).contains(rects.back()));
        }
        for (int i = 0; i < rects.size(); ++i)
            for (int j = i + 1; j < rects.size(); ++j)
                QVERIFY2(!rects[i].intersects(rects[j]), qPrintable(QString("labels %1 and %2 overlap").arg(i).arg(j)));
        QVERIFY(plot.itemCount() > labels.size());  // leader lines for those moved away
    }

    void csvAndJsonCarryTheSameRanking() {
        QTemporaryDir dir;
        const QString csvPath = dir.filePath("report.csv"), jsonPath = dir.filePath("report.json");
        QCOMPARE(writeReport(choice_, ReportFormat::Csv, csvPath), QString());
        QCOMPARE(writeReport(choice_, ReportFormat::Json, jsonPath), QString());
        const QStringList lines = QString::fromUtf8(readAll(csvPath)).split("\r\n", Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), int(choice_.rows.size()) + 1);
        QVERIFY(lines.front().startsWith("rank,gpu,name,recommended,precision,batch,"));
        QStringList csvIds;
        for (int i = 1; i < lines.size(); ++i) csvIds << lines[i].section(',', 1, 1);  // GPU ids need no quoting
        QCOMPARE(csvIds, rankedIds(choice_));

        QJsonParseError error;
        const QJsonDocument json = QJsonDocument::fromJson(readAll(jsonPath), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QStringList jsonIds;
        for (const QJsonValue& row : json.object().value("ranking").toArray())
            jsonIds << row.toObject().value("gpu").toString();
        QCOMPARE(jsonIds, rankedIds(choice_));
    }

    // A recorded job's report: well-formed, the ranking's rows in order with the recorded GPU marked,
    // the summary naming the set, the kernel classes, the plot; the PDF complete and landscape.
    void traceReportIsXmlWithTheRankingAndThePlot() {
        const TraceChoice c = traceChoice({"t4", "h100-sxm", "a100-sxm4-80gb"});
        const QByteArray html = reportBytes(c, ReportFormat::Html);
        QXmlStreamReader xml(html);
        QStringList rows, recorded, images, classes;
        QString table;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement) continue;
            const auto attrs = xml.attributes();
            if (xml.name() == u"table") table = attrs.value("id").toString();
            if (xml.name() == u"tr" && table == "ranking" && attrs.hasAttribute("data-gpu")) {
                rows << attrs.value("data-gpu").toString();
                if (attrs.value("class") == u"recorded") recorded << rows.back();
            }
            if (xml.name() == u"img") images << attrs.value("src").toString();
            if (xml.name() == u"th" && table == "classes") classes << xml.readElementText();
        }
        QVERIFY2(!xml.hasError(), qPrintable(QString("line %1: %2").arg(xml.lineNumber()).arg(xml.errorString())));
        QStringList expected;
        for (const TraceChoiceRow& r : c.rows) expected << QString::fromStdString(r.gpuId);
        QCOMPARE(rows, expected);
        QCOMPARE(recorded, QStringList{"a100-sxm4-80gb"});
        QCOMPARE(images.size(), 1);
        QVERIFY(images.front().startsWith("data:image/png;base64,"));
        QVERIFY2(classes.contains("measured on a100-sxm4-80gb (ms)"), qPrintable(classes.join("|")));
        const QString text = QString::fromUtf8(html);
        QVERIFY2(text.contains("Cheapest of all 3 GPUs: <b>" + QString::fromStdString(c.rows.front().gpuName)),
                 qPrintable(text.section("<p class=\"summary\">", 1, 1).left(300)));
        QVERIFY(text.contains("Measured median step: <b>1.00 ms</b>"));

        QTemporaryDir dir;
        const QString path = dir.filePath("trace.pdf");
        QCOMPARE(writeReport(c, ReportFormat::Pdf, path), QString());
        const QByteArray pdf = readAll(path);
        QVERIFY(pdf.startsWith("%PDF-"));
        QVERIFY(pdf.trimmed().endsWith("%%EOF"));
        QVERIFY(pdf.contains("/Image"));
        const QRegularExpressionMatch box =
            QRegularExpression("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]").match(QString::fromLatin1(pdf));
        QVERIFY(box.hasMatch());
        QVERIFY2(box.captured(1).toDouble() > box.captured(2).toDouble(), qPrintable(box.captured(0)));
    }

    void formatsComeFromNamesAndSuffixes() {
        QCOMPARE(parseReportFormat("PDF"), std::optional<ReportFormat>(ReportFormat::Pdf));
        QCOMPARE(reportFormatOfPath("/tmp/x.json"), std::optional<ReportFormat>(ReportFormat::Json));
        QVERIFY(!reportFormatOfPath("/tmp/x.txt"));
        QCOMPARE(defaultReportFileName("zoo:resnet50?image=160", ReportFormat::Html),
                 QString("trainscope-report-resnet50.html"));
        QCOMPARE(defaultReportFileName("/models/my model.onnx", ReportFormat::Pdf),
                 QString("trainscope-report-my-model.pdf"));
    }

    void failuresAreSentences() {
        // Below a plain file: no directory can be made there, not even by root.
        QTemporaryFile notADirectory;
        QVERIFY(notADirectory.open());
        const QString path = notADirectory.fileName() + "/report.csv";
        const QString error = writeReport(choice_, ReportFormat::Csv, path);
        QVERIFY2(error.startsWith(path + ": cannot be written"), qPrintable(error));
        ReportRequest noModel;
        QVERIFY(exportReport(noModel, ReportFormat::Html, "unused.html").contains("Open a model"));
    }

    void fileMenuHasExportReport() {
        ts::gui::ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        ts::gui::MainWindow window(state);
        QAction* found = nullptr;
        for (QAction* a : window.menuBar()->findChildren<QAction*>())
            if (a->text().startsWith("&Export Report")) found = a;
        QVERIFY(found);
        QCOMPARE(found->shortcut(), QKeySequence("Ctrl+E"));
        // What the action exports: the explorer's settings and goal, every GPU.
        QTemporaryDir dir;
        const QString path = dir.filePath("from-gui.json");
        const ReportRequest request =
            requestFor(state.predictor(), state.database(), state.current().scenario, state.goal(), state.modelSpec());
        QCOMPARE(exportReport(request, ReportFormat::Json, path), QString());
        QVERIFY(readAll(path).contains("\"format\": \"trainscope-hardware-choice\""));
    }
};

QTEST_MAIN(ReportTest)
#include "test_report.moc"
