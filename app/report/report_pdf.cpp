#include "report_pdf.h"

#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>
#include <cmath>
#include <memory>

namespace ts::report {

namespace {

// The tables of the document in document order (the report nests none), each with the block
// just before it (its heading, when it has one).
std::vector<std::pair<QTextTable*, QTextBlock>> tablesOf(QTextFrame* root) {
    std::vector<std::pair<QTextTable*, QTextBlock>> tables;
    QTextBlock previous;
    for (QTextFrame::iterator it = root->begin(); !it.atEnd(); ++it) {
        if (auto* table = qobject_cast<QTextTable*>(it.currentFrame()))
            tables.push_back({table, previous});
        else if (it.currentBlock().isValid())
            previous = it.currentBlock();
    }
    return tables;
}

// The vertical extent of a table row's text, in document coordinates (pages stacked).
std::pair<double, double> rowExtent(const QTextDocument& doc, const QTextTable& table, int row) {
    const QAbstractTextDocumentLayout* layout = doc.documentLayout();
    double top = INFINITY, bottom = -INFINITY;
    for (int c = 0; c < table.columns(); ++c) {
        const QTextTableCell cell = table.cellAt(row, c);
        if (cell.row() != row || cell.column() != c) continue;  // covered by a spanning cell
        for (QTextFrame::iterator it = cell.begin(); !it.atEnd(); ++it) {
            const QTextBlock block = it.currentBlock();
            if (!block.isValid()) continue;
            const QRectF r = layout->blockBoundingRect(block);
            top = std::min(top, r.top());
            bottom = std::max(bottom, r.bottom());
        }
    }
    return {top, bottom};
}

// Adds a break before the first data row that crosses a page's foot (before the whole table, with
// its heading, for its first row, or where the layout has moved the table to the next page and left
// its heading behind), unless there is one already (a row taller than a page cannot be helped).
// False when no row needs one.
bool breakFirstCrossingRow(const QTextDocument& doc, TablePages& pages) {
    const double pageHeight = doc.pageSize().height();
    auto page = [&](double y) { return std::floor(y / pageHeight); };
    const auto tables = tablesOf(doc.rootFrame());
    for (size_t t = 0; t < tables.size() && t < pages.segments.size(); ++t) {
        const QTextTable& table = *tables[t].first;
        const TablePages::Segment& segment = pages.segments[t];
        const int headRows = table.format().headerRowCount();
        for (int r = headRows; r < table.rows(); ++r) {
            const auto [top, bottom] = rowExtent(doc, table, r);
            if (!(top < bottom)) continue;
            bool split = page(top) != page(bottom - 0.5);
            if (r == headRows && segment.firstRow == 0 && tables[t].second.isValid() &&
                !tables[t].second.text().trimmed().isEmpty()) {
                const QRectF heading = doc.documentLayout()->blockBoundingRect(tables[t].second);
                split = split || page(heading.bottom() - 0.5) != page(top);
            }
            if (!split) continue;
            const int dataRow = segment.firstRow + r - headRows;
            if (!pages.breaks[segment.id].insert(dataRow).second) continue;
            return true;
        }
    }
    return false;
}

}  // namespace

QByteArray printReportPdf(const std::function<QString(TablePages&)>& html, const std::vector<PdfImage>& images,
                          const QString& title) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter pdf(&buffer);
        pdf.setPageSize(QPageSize(QPageSize::A4));
        // Landscape: the ranking's eight columns keep GPU names whole (portrait broke them mid-word).
        pdf.setPageOrientation(QPageLayout::Landscape);
        pdf.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
        pdf.setTitle(title);
        pdf.setCreator("TrainScope " TRAINSCOPE_VERSION);
        TablePages pages;
        std::unique_ptr<QTextDocument> doc;
        // Each pass moves one row to the next page; a document has far fewer page feet than this.
        for (int pass = 0; pass < 200; ++pass) {
            pages.segments.clear();
            doc = std::make_unique<QTextDocument>();
            // Laid out on the PDF itself: its page, resolution and font metrics are what print() uses.
            doc->documentLayout()->setPaintDevice(&pdf);
            doc->setPageSize(QSizeF(pdf.width(), pdf.height()));
            doc->setDocumentMargin(0);  // the PDF's page margins hold the text
            for (const PdfImage& image : images)
                doc->addResource(QTextDocument::ImageResource, image.name, image.image);
            doc->setHtml(html(pages));
            if (!breakFirstCrossingRow(*doc, pages)) break;
        }
        doc->print(&pdf);  // ends the painter: the PDF is complete when this returns
    }
    return bytes;
}

}  // namespace ts::report
