#include "report_export.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QRegularExpression>

namespace ts::report {

using namespace ts::predictors;

ReportRequest requestFor(const TrainingPredictor* predictor, const GpuDatabase& db, const TrainingScenario& base,
                         const TrainingGoal& goal, const std::string& modelLabel) {
    ReportRequest r;
    r.predictor = predictor;
    for (const GpuSpec& gpu : db.gpus()) r.gpus.push_back(&gpu);
    r.base = base;
    r.goal = goal;
    r.options.modelLabel = modelLabel;
    r.options.priceSnapshot = db.priceSnapshot();
    r.options.amortisation = db.amortisation();
    return r;
}

QString exportReport(const ReportRequest& request, ReportFormat format, const QString& path) {
    if (!request.predictor) return "Open a model first: the report is about one model.";
    if (request.gpus.empty()) return "The GPU database is empty: there is nothing to compare.";
    try {
        const HardwareChoice choice =
            chooseHardware(*request.predictor, request.gpus, request.base, request.goal, request.options);
        return writeReport(choice, format, path);
    } catch (const std::exception& e) {
        return QString("The report could not be made: %1").arg(QString::fromUtf8(e.what()));
    }
}

QString defaultReportFileName(const std::string& modelLabel, ReportFormat format) {
    QString name = QString::fromStdString(modelLabel);
    name = name.section('?', 0, 0);  // zoo options
    if (name.startsWith("zoo:"))
        name = name.mid(4);
    else
        name = QFileInfo(name).completeBaseName();
    name.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "-");
    if (name.isEmpty()) name = "model";
    return QString("trainscope-report-%1.%2").arg(name, reportFormatName(format));
}

bool askReportPath(QWidget* parent, const std::string& modelLabel, QString& path, ReportFormat& format) {
    const QString suggested = defaultReportFileName(modelLabel, ReportFormat::Html);
    path = QFileDialog::getSaveFileName(parent, QObject::tr("Export the hardware-choice report"), suggested,
                                        QObject::tr("HTML (*.html);;PDF (*.pdf);;CSV (*.csv);;JSON (*.json)"));
    if (path.isEmpty()) return false;
    std::optional<ReportFormat> f = reportFormatOfPath(path);
    if (!f) {  // no known suffix: HTML, and say so in the name
        f = ReportFormat::Html;
        path += ".html";
    }
    format = *f;
    return true;
}

}  // namespace ts::report
