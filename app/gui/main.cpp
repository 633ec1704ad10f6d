// The TrainScope GUI: the explorer window, or with --screenshot one of its views rendered to a PNG
// without a display (packaging and tests use it to check that the installed GUI starts). Where
// there is no display at all it says so and writes the model's (or the trace's) hardware-choice
// report instead.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <cstdio>

#include "app_settings.h"
#include "explorer_state.h"
#include "main_window.h"
#include "report_export.h"
#include "report_writer.h"
#include "trace_document.h"
#include "trainscope/predictors/choice/trace_choice.h"
#include "screenshot.h"
#include "theme.h"

namespace {

// Nothing to show a window on: no X11 or Wayland display, and no Qt platform chosen by the user.
bool noDisplay() {
#if defined(Q_OS_UNIX) && !defined(Q_OS_MACOS)
    return qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
           qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
#else
    return false;
#endif
}

// A trace's report: every GPU of the database predicted from it and costed, as `trainscope-cli
// report TRACE` writes it (predictors/choice/trace_choice.h).
int writeTraceReportInstead(const std::string& spec, const ts::gui::TraceDocument& doc, const ts::GpuDatabase& db) {
    if (!doc.predictionProblem.empty() || !doc.origin) {
        std::fprintf(stderr, "trainscope: %s: %s\n", spec.c_str(),
                     doc.predictionProblem.empty() ? "its GPU is not in the GPU database"
                                                   : doc.predictionProblem.c_str());
        return 2;
    }
    std::vector<const ts::GpuSpec*> gpus;
    for (const ts::GpuSpec& g : db.gpus()) gpus.push_back(&g);
    ts::predictors::TraceChoiceOptions options;
    options.priceSnapshot = db.priceSnapshot();
    options.amortisation = db.amortisation();
    // The database's own entry: the document's copy is not one of `gpus`, and the recorded row is
    // found by identity.
    const ts::GpuSpec& origin = db.get(doc.origin->id);
    const ts::predictors::TraceChoice choice =
        ts::predictors::chooseHardwareForTrace(doc.trace, origin, doc.originHow, gpus, options);
    namespace report = ts::report;
    const QString path =
        QDir::current().absoluteFilePath(report::defaultReportFileName(spec, report::ReportFormat::Html));
    const QString error = report::writeReport(choice, report::ReportFormat::Html, path);
    if (!error.isEmpty()) {
        std::fprintf(stderr, "trainscope: %s\n", qPrintable(error));
        return 2;
    }
    std::printf("%s\n", qPrintable(QDir::toNativeSeparators(path)));
    return 0;
}

int writeReportInstead(const std::string& spec) {
    std::printf(
        "trainscope: no display (DISPLAY and WAYLAND_DISPLAY are not set): writing the hardware-choice "
        "report for %s instead\n",
        spec.c_str());
    ts::gui::ExplorerState state;
    if (!state.openModel(spec)) {
        std::fprintf(stderr, "trainscope: %s\n", qPrintable(state.error()));
        return 2;
    }
    namespace report = ts::report;
    if (state.hasTrace()) return writeTraceReportInstead(spec, *state.trace(), state.database());
    const QString path =
        QDir::current().absoluteFilePath(report::defaultReportFileName(spec, report::ReportFormat::Html));
    const QString error = report::exportReport(
        report::requestFor(state.predictor(), state.database(), state.current().scenario, state.goal(), spec),
        report::ReportFormat::Html, path);
    if (!error.isEmpty()) {
        std::fprintf(stderr, "trainscope: %s\n", qPrintable(error));
        return 2;
    }
    std::printf("%s\n", qPrintable(QDir::toNativeSeparators(path)));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // Without a display Qt's default platform cannot start: render offscreen (the report's plots).
    const bool headless = noDisplay();
    if (headless) qputenv("QT_QPA_PLATFORM", "offscreen");
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
    QCommandLineOption theme("theme", "colour theme: system, light or dark (default: the one last chosen)", "THEME");
    parser.addOption(screenshot);
    parser.addOption(view);
    parser.addOption(theme);
    parser.process(app);
    std::optional<ts::gui::Theme> chosenTheme;
    if (parser.isSet(theme)) {
        chosenTheme = ts::gui::parseTheme(parser.value(theme));
        if (!chosenTheme) {
            std::fprintf(stderr, "trainscope: --theme: unknown theme '%s' (system, light or dark)\n",
                         qPrintable(parser.value(theme)));
            return 2;
        }
        ts::gui::applyTheme(app, *chosenTheme);
    }

    const std::optional<ts::gui::View> shown = ts::gui::parseView(parser.value(view));
    if (!shown) {
        std::fprintf(stderr,
                     "trainscope: --view: unknown view '%s' (overview, batch, gpus, modules, roofline or timeline)\n",
                     qPrintable(parser.value(view)));
        return 2;
    }
    const QStringList args = parser.positionalArguments();
    const std::string spec = args.isEmpty() ? "zoo:resnet50" : args.first().toStdString();
    if (headless && !parser.isSet(screenshot)) return writeReportInstead(spec);

    ts::gui::ExplorerState state;
    ts::gui::MainWindow window(state);

    if (parser.isSet(screenshot)) {
        const bool ok = state.openModel(spec);  // on this thread: the picture shows it loaded
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
    if (chosenTheme) settings.setTheme(*chosenTheme);
    window.useSettings(settings);
    window.showView(*shown);
    window.show();
    window.openModel(QString::fromStdString(spec));  // off the GUI thread, with progress and Cancel
    return app.exec();
}
