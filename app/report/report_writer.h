#pragma once
// Writes a hardware choice (of a model, or of a recorded job) as a report file: HTML
// (self-contained: plots as PNG data URIs), PDF (A4, from the same HTML through QTextDocument and
// QPdfWriter), CSV or JSON (the predictors' tables). Every file is written atomically (QSaveFile): a
// failed write leaves the old file. HTML and PDF draw plots: a QApplication must exist (the
// offscreen platform is enough).
#include <QString>
#include <optional>

#include "trainscope/predictors/choice/hardware_choice.h"
#include "trainscope/predictors/choice/trace_choice.h"

namespace ts::report {

enum class ReportFormat { Html, Pdf, Csv, Json };

// "html", "pdf", "csv", "json" (case-insensitive; "htm" too); nullopt for anything else.
std::optional<ReportFormat> parseReportFormat(const QString& name);
// From a file name's suffix (report.pdf -> Pdf); nullopt when it names none of them.
std::optional<ReportFormat> reportFormatOfPath(const QString& path);
QString reportFormatName(ReportFormat format);

// The report's bytes in `format` (HTML and PDF: rendered now).
QByteArray reportBytes(const predictors::HardwareChoice& choice, ReportFormat format);
// Writes them to `path`; empty on success, otherwise a sentence naming `path` and the problem.
QString writeReport(const predictors::HardwareChoice& choice, ReportFormat format, const QString& path);

// The same for a recorded job's choice (a PyTorch profiler trace): trace_report_html.h,
// traceChoiceCsv, traceChoiceJson.
QByteArray reportBytes(const predictors::TraceChoice& choice, ReportFormat format);
QString writeReport(const predictors::TraceChoice& choice, ReportFormat format, const QString& path);

}  // namespace ts::report
