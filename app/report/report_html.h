#pragma once
// The hardware-choice report as well-formed XHTML (parses as XML): a summary, the ranking table,
// the recommended batch size and precision per GPU with their ranges, the plots, the assumptions
// and what the ranges mean. The same text is the PDF's source (QTextDocument reads it).
#include <QImage>
#include <QString>

#include "report_tables.h"
#include "trainscope/predictors/choice/hardware_choice.h"

namespace ts::report {

// What each <img> points at: data: URIs for the self-contained HTML, resource names for the PDF.
// An empty source leaves its plot out.
struct ImageSources {
    QString throughput;
    QString costVsTime;
    int width = 900;  // displayed width in pixels (the PDF's page is narrower)
};

// `generated` is shown in the header (a date, the program's version). `pages`: where the PDF breaks
// its tables (report_tables.h); null for the HTML file.
QString reportHtml(const predictors::HardwareChoice& choice, const ImageSources& images, const QString& generated,
                   TablePages* pages = nullptr);
// The document's start up to <body>: the title (already escaped) and the reports' style sheet.
QString reportHtmlHead(const QString& title);
// data:image/png;base64,... of `image`; empty for a null image.
QString pngDataUri(const QImage& image);

}  // namespace ts::report
