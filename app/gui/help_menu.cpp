#include "help_menu.h"

#include <QAction>
#include <QApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QUrl>

namespace ts::gui {

const std::vector<HelpPage>& helpPages() {
    static const std::vector<HelpPage> pages = {
        {QCoreApplication::translate("Help", "The explorer's &views"), "gui.md"},
        {QCoreApplication::translate("Help", "How &predictions are made"), "prediction.md"},
        {QCoreApplication::translate("Help", "The hardware-choice &report"), "report.md"},
        {QCoreApplication::translate("Help", "PyTorch profiler &traces"), "traces.md"},
        {QCoreApplication::translate("Help", "&Model formats"), "model-format.md"},
        {QCoreApplication::translate("Help", "&Hugging Face configs"), "huggingface.md"},
        {QCoreApplication::translate("Help", "The &GPU database and prices"), "gpu-database.md"},
        {QCoreApplication::translate("Help", "&Profiling on a GPU"), "profiling.md"},
    };
    return pages;
}

QString helpPagePath(const QString& file, const QString& installedDocs, const QString& sourceDocs) {
    for (const QString& dir : {installedDocs, sourceDocs}) {
        if (dir.isEmpty()) continue;
        const QFileInfo page(QDir(dir), file);
        if (page.isFile()) return page.absoluteFilePath();
    }
    return {};
}

QString installedDocsDir() {
    return QDir(QCoreApplication::applicationDirPath()).filePath(TRAINSCOPE_DOCS_FROM_BINDIR);
}

QString sourceDocsDir() {
    return TRAINSCOPE_SOURCE_DOCS_DIR;
}

void openHelpPage(QWidget* parent, const QString& file) {
    const QString path = helpPagePath(file, installedDocsDir(), sourceDocsDir());
    if (path.isEmpty()) {
        QMessageBox::warning(
            parent, QCoreApplication::translate("Help", "Help"),
            QCoreApplication::translate("Help",
                                        "%1 was found neither in %2 (installed) nor in %3 "
                                        "(the source tree).")
                .arg(file, QDir::toNativeSeparators(installedDocsDir()), QDir::toNativeSeparators(sourceDocsDir())));
        return;
    }
    if (!QDesktopServices::openUrl(QUrl::fromLocalFile(path)))
        QMessageBox::warning(parent, QCoreApplication::translate("Help", "Help"),
                             QCoreApplication::translate("Help", "No program on this desktop opens %1.").arg(path));
}

void addHelpMenu(QMenuBar* bar, QWidget* parent, const QString& pricesSnapshot) {
    auto tr = [](const char* text) { return QCoreApplication::translate("Help", text); };
    QMenu* help = bar->addMenu(tr("&Help"));
    for (const HelpPage& page : helpPages()) {
        QAction* action =
            help->addAction(page.title, parent, [parent, file = page.file] { openHelpPage(parent, file); });
        action->setObjectName("help:" + page.file);
        action->setToolTip(tr("Opens %1 with the desktop's viewer").arg(page.file));
    }
    help->setToolTipsVisible(true);
    help->addSeparator();
    help->addAction(tr("&About TrainScope"), parent, [parent, pricesSnapshot, tr] {
        const QString docs = helpPagePath("gui.md", installedDocsDir(), sourceDocsDir());
        QMessageBox::about(
            parent, tr("About TrainScope"),
            tr("<h3>TrainScope %1</h3><p>Performance explorer for deep-learning training: per-layer time and "
               "memory, and predictions across batch sizes, precisions, optimizers and GPUs, with the cost of "
               "training on each GPU.</p><p>Predictions come with intervals; <i>How predictions are made</i> in "
               "the Help menu explains where each comes from. GPU prices: the database's snapshot of %2.</p>"
               "<p>Built with Qt %3 and QCustomPlot.%4</p>")
                .arg(QCoreApplication::applicationVersion(), pricesSnapshot.toHtmlEscaped(), qVersion(),
                     docs.isEmpty() ? QString()
                                    : tr(" Documentation: %1").arg(QFileInfo(docs).absolutePath().toHtmlEscaped())));
    });
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

}  // namespace ts::gui
