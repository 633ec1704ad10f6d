#include "report_tables.h"

namespace ts::report {

QString splitTable(const QString& id, const QString& heading, const QString& attributes, const QString& head,
                   const QStringList& rows, TablePages* pages) {
    auto open = [&](int firstRow, bool newPage) {
        if (pages) pages->segments.push_back({id, firstRow});
        return QString("<table id=\"%1\" %2%3><thead>%4</thead><tbody>")
            .arg(id, attributes, newPage ? " style=\"page-break-before: always\"" : "", head);
    };
    const std::set<int> none;
    const std::set<int>& breaks = pages && pages->breaks.count(id) ? pages->breaks.at(id) : none;
    const bool newPage = breaks.count(0) > 0;
    QString html;
    if (!heading.isEmpty())
        html = QString("<h2%1>%2</h2>\n").arg(newPage ? " style=\"page-break-before: always\"" : "", heading);
    html += open(0, newPage && heading.isEmpty());
    for (int r = 0; r < rows.size(); ++r) {
        if (r > 0 && breaks.count(r)) html += "</tbody></table>\n" + open(r, true);
        html += rows[r];
    }
    return html + "</tbody></table>\n";
}

}  // namespace ts::report
