#pragma once
// Tables of the report's HTML that the PDF may break between pages only between rows. QTextDocument
// breaks a table row across a page's foot (each cell's lines go on as they fit), so the PDF writer
// (report_pdf.h) lays the document out, finds the rows that would cross, and has the table written
// again split before them: each piece after the first starts a new page and repeats the head.
#include <QString>
#include <QStringList>
#include <map>
#include <set>
#include <vector>

namespace ts::report {

struct TablePages {
    // By table id, the data rows (0-based, the head not counted) that start a new page (0: the
    // whole table does).
    std::map<QString, std::set<int>> breaks;
    // Every <table> element written, in document order: its table's id and first data row.
    struct Segment {
        QString id;
        int firstRow = 0;
    };
    std::vector<Segment> segments;
};

// `heading` (an <h2> title, empty for none), then `rows` ("<tr>...</tr>" each) under `head` (the
// <tr> of the table's <thead>) in one <table id=... attributes>, or, with `pages`, split at
// pages->breaks[id], each piece recorded in pages->segments; a break before the first row moves
// the heading to the new page with the table. A null `pages` (the HTML file) writes one table.
QString splitTable(const QString& id, const QString& heading, const QString& attributes, const QString& head,
                   const QStringList& rows, TablePages* pages);

}  // namespace ts::report
