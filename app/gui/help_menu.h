#pragma once
// The Help menu: the documentation pages (docs/*.md), opened with the desktop's viewer
// (QDesktopServices) from where an installed TrainScope keeps them (share/doc/trainscope beside the
// binary's bin/, as packaging/CMakeLists.txt installs them) or, for a build run in place, from the
// source tree's docs/; then About TrainScope and About Qt.
#include <QString>
#include <vector>

class QMenuBar;
class QWidget;

namespace ts::gui {

struct HelpPage {
    QString title;  // the menu's text
    QString file;   // "gui.md"
};

const std::vector<HelpPage>& helpPages();

// The page's path: under `installedDocs` when it is there, else under `sourceDocs`; empty when
// neither holds it.
QString helpPagePath(const QString& file, const QString& installedDocs, const QString& sourceDocs);
// The two places this binary looks: applicationDirPath()/../share/doc/trainscope and the source
// tree's docs/ it was built from.
QString installedDocsDir();
QString sourceDocsDir();

// Opens docs/FILE, or says in a message box where it looked.
void openHelpPage(QWidget* parent, const QString& file);
// Adds the Help menu to `bar`; About names the prices' snapshot date.
void addHelpMenu(QMenuBar* bar, QWidget* parent, const QString& pricesSnapshot);

}  // namespace ts::gui
