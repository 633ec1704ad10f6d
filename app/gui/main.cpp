// The TrainScope GUI: the explorer window, or with --screenshot one of its views rendered to a PNG
// without a display (packaging and tests use it to check that the installed GUI starts).
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

#include "app_settings.h"
#include "explorer_state.h"
#include "main_window.h"
#include "screenshot.h"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("TrainScope");
    QApplication::setApplicationVersion(TRAINSCOPE_VERSION);
    QApplication::setDesktopFileName("io.github.trainscope.TrainScope");

    QCommandLineParser parser;
    parser.setApplicationDescription("Performance explorer for deep-learning training.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("MODEL", "model file or zoo:NAME (default zoo:resnet50)");
    QCommandLineOption screenshot("screenshot", "render the window to FILE (PNG) and exit; works without a display",
                                  "FILE");
    QCommandLineOption view(
        "view", "the view --screenshot renders: overview (default), batch, gpus, modules, roofline or timeline", "VIEW",
        "overview");
    parser.addOption(screenshot);
    parser.addOption(view);
    parser.process(app);

    const std::optional<ts::gui::View> shown = ts::gui::parseView(parser.value(view));
    if (!shown) {
        std::fprintf(stderr, "trainscope: --view: unknown view '%s' (overview, batch, gpus or modules)\n",
                     qPrintable(parser.value(view)));
        return 2;
    }
    const QStringList args = parser.positionalArguments();
    const std::string spec = args.isEmpty() ? "zoo:resnet50" : args.first().toStdString();

    ts::gui::ExplorerState state;
    const bool ok = state.openModel(spec);
    ts::gui::MainWindow window(state);

    if (parser.isSet(screenshot)) {
        const QString file = parser.value(screenshot);
        if (!ts::gui::saveScreenshot(window, *shown, file)) {
            std::fprintf(stderr, "trainscope: %s: cannot be written\n", qPrintable(file));
            return 2;
        }
        if (!ok) std::fprintf(stderr, "trainscope: %s\n", qPrintable(state.error()));
        return ok ? 0 : 2;
    }
    // Screenshots above are reproducible: only an interactive session reads and writes settings.
    ts::gui::AppSettings settings;
    window.useSettings(settings);
    window.showView(*shown);
    window.show();
    return app.exec();
}
