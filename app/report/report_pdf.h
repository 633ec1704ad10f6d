#pragma once
// Prints a report's HTML as an A4 landscape PDF (QTextDocument through QPdfWriter) whose table rows
// never straddle two pages: the document is laid out at the PDF's own page size and resolution,
// and while a row would cross a page's foot its table is written again split before that row
// (report_tables.h; the piece starts a new page and repeats the head), then printed as laid out.
#include <QByteArray>
#include <QImage>
#include <QString>
#include <QUrl>
#include <functional>
#include <vector>

#include "report_tables.h"

namespace ts::report {

struct PdfImage {
    QUrl name;  // what the HTML's <img src> names
    QImage image;
};

// `html` writes the document with the table breaks it is given (and records its tables).
QByteArray printReportPdf(const std::function<QString(TablePages&)>& html, const std::vector<PdfImage>& images,
                          const QString& title);

}  // namespace ts::report
