// The TrainScope GUI. The explorer issue builds it out; for now it opens a model and shows its
// size and cost, and renders itself to a PNG without a display (--screenshot), which packaging
// and tests use to check that the installed GUI starts.
#include <QApplication>
#include <QCommandLineParser>
#include <QLabel>
#include <QLocale>
#include <QPixmap>
#include <cstdio>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace {

// One paragraph about the model, or the sentence that says why it could not be opened.
QString describeModel(const std::string& spec, bool* ok) {
    try {
        ts::Graph g = ts::loadModel(spec);
        ts::ModelCosts costs = ts::computeCosts(g, g.defaults.batch, g.defaults.seq);
        *ok = true;
        QLocale locale;
        return QString("<h2>%1</h2><p>%2 parameters<br>%3 GFLOP forward at batch %4<br>%5 operations</p>"
                       "<p><i>Profiling and predictions arrive with the profiler and predictor views.</i></p>")
            .arg(QString::fromStdString(spec).toHtmlEscaped())
            .arg(locale.toString(qlonglong(g.parameterCount())))
            .arg(costs.totals.forwardFlops / 1e9, 0, 'f', 2)
            .arg(g.defaults.batch)
            .arg(qulonglong(g.ops.size()));
    } catch (const std::exception& e) {
        *ok = false;
        return QString("<p>Could not open the model: %1</p>").arg(QString::fromUtf8(e.what()).toHtmlEscaped());
    }
}

}  // namespace

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
    parser.addOption(screenshot);
    parser.process(app);

    const QStringList args = parser.positionalArguments();
    const std::string spec = args.isEmpty() ? "zoo:resnet50" : args.first().toStdString();
    bool ok = false;
    QLabel window(describeModel(spec, &ok));
    window.setWindowTitle("TrainScope");
    window.setMargin(24);
    window.setTextFormat(Qt::RichText);
    window.resize(640, 360);

    if (parser.isSet(screenshot)) {
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.show();
        const QString file = parser.value(screenshot);
        if (!window.grab().save(file, "PNG")) {
            std::fprintf(stderr, "trainscope: %s: cannot be written\n", qPrintable(file));
            return 2;
        }
        return ok ? 0 : 2;
    }
    window.show();
    return app.exec();
}
