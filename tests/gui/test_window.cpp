// The explorer window as a desktop program: models, profiles and traces open off the GUI thread in
// every format (dialog, drag and drop, recent files), a failing import is a sentence in the window and
// keeps the open model, profiling runs off the GUI thread with progress and Cancel and replaces
// estimates with measurements as they arrive, and settings survive a restart.
#include <QAction>
#include <QDropEvent>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMimeData>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTimer>
#include <QtTest>

#include "app_settings.h"
#include "background_job.h"
#include "explorer_state.h"
#include "gpu_profiling.h"
#include "job_progress_widget.h"
#include "main_window.h"
#include "theme.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profiler.h"

using namespace ts::gui;
using ts::predictors::Checkpointing;
using ts::predictors::PredictionSource;
using ts::predictors::TrainingPrecision;
using ts::predictors::OptimizerImplementation;

namespace {

const char* kTinyJsonModel = R"({
  "trainscope_model": 1,
  "name": "tiny-cnn",
  "inputs": [{"name": "image", "shape": ["N", 3, 32, 32]}],
  "layers": [
    {"name": "conv1", "type": "Conv2d", "out_channels": 16, "kernel_size": 3, "padding": 1},
    {"name": "relu", "type": "ReLU"},
    {"name": "pool", "type": "AdaptiveAvgPool2d", "output_size": 1},
    {"name": "flat", "type": "Flatten"},
    {"name": "fc", "type": "Linear", "out_features": 10}
  ]
})";

// Deep enough that one batch size takes a while to profile: Cancel lands between batch sizes.
QByteArray deepJsonModel() {
    QByteArray layers;
    for (int i = 0; i < 48; ++i)
        layers += QString(R"({"name": "conv%1", "type": "Conv2d", "out_channels": 16, "kernel_size": 3, "padding": 1},
                             {"name": "relu%1", "type": "ReLU"},)")
                      .arg(i)
                      .toUtf8();
    return R"({"trainscope_model": 1, "name": "deep-cnn", "inputs": [{"name": "image", "shape": ["N", 3, 32, 32]}],
              "layers": [)" +
           layers + R"({"name": "pool", "type": "AdaptiveAvgPool2d", "output_size": 1},
              {"name": "flat", "type": "Flatten"}, {"name": "fc", "type": "Linear", "out_features": 10}]})";
}

// Waits, with the event loop running, until the window's job has ended and the predictions it
// asked for (a model opened, measurements used) are shown.
bool waitForJob(MainWindow& window, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while ((window.currentJob() || window.state().predicting()) && clock.elapsed() < timeoutMs) QTest::qWait(20);
    return window.currentJob() == nullptr && !window.state().predicting();
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    QFile f(dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(text);
    return f.fileName();
}

}  // namespace

class WindowTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opensEveryFormatOffTheGuiThread() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        ExplorerState state;
        MainWindow window(state);
        QStringList inputs{"zoo:mobilenet_v2", writeFile(dir, "tiny.json", kTinyJsonModel)};
        for (const char* file : {"resnet18.onnx", "resnet18.pt"}) {
            const QString path = QString(TRAINSCOPE_GENERATED_DIR "/") + file;
            if (QFile::exists(path) && (!path.endsWith(".pt") || ts::torchScriptSupported())) inputs << path;
        }
        inputs << TRAINSCOPE_TEST_DATA_DIR "/profiles/cpu/resnet18-image-32-classes-10-fp32.json";
        for (const QString& input : inputs) {
            // The event loop keeps turning while the model loads: a timer fires during the job.
            int ticks = 0;
            QTimer timer;
            connect(&timer, &QTimer::timeout, [&ticks] { ++ticks; });
            timer.start(1);
            window.openModel(input);
            QVERIFY(window.currentJob());
            QVERIFY(window.jobProgress()->isVisibleTo(&window));
            QVERIFY2(waitForJob(window, 60000), qPrintable(input));
            QVERIFY2(state.hasModel(), qPrintable(input + ": " + window.errorText()));
            QCOMPARE(QString::fromStdString(state.modelSpec()), input);
            QVERIFY(ticks > 0);
            QVERIFY(!window.jobProgress()->isVisibleTo(&window));
        }
        // The last input was a profile: the predictor starts from it, at its precision, optimizer
        // and batch. (A CPU profile cannot move to a GPU, so GPU figures stay calibrated.)
        QVERIFY(state.profile());
        QVERIFY(state.predictor()->hasProfile());
        QCOMPARE(state.settings().precision, TrainingPrecision::Fp32);
        QCOMPARE(state.settings().optimizer, ts::predictors::Optimizer::Adam);
        QCOMPARE(state.settings().batch, int64_t(4));
    }

    void aFailingImportIsASentenceAndKeepsTheOpenModel() {
        QTemporaryDir dir;
        ExplorerState state;
        QVERIFY(state.openModel("zoo:resnet18"));
        MainWindow window(state);
        const QString corrupt = writeFile(dir, "corrupt.onnx", QByteArray("\x08\x07garbage", 9));
        for (const QString& bad : {QString("/no/such/model.onnx"), corrupt,
                                   writeFile(dir, "broken.json", "{\"trainscope_model\": 1, \"layers\": [")}) {
            window.openModel(bad);
            QVERIFY(waitForJob(window, 30000));
            QVERIFY2(window.errorText().contains(bad), qPrintable(window.errorText()));
            QVERIFY(window.errorText().startsWith("Could not open"));
            QCOMPARE(state.modelSpec(), std::string("zoo:resnet18"));
            QVERIFY(state.hasModel());
        }
    }

    // A PyTorch profiler trace opens off the GUI thread too: shown as soon as it is read, its
    // predictions on every GPU following in the same job. A damaged one is refused with what is
    // wrong with it, and the open trace stays.
    void aTraceOpensOffTheGuiThreadAndADamagedOneIsRefused() {
        ExplorerState state;
        QVERIFY(state.openModel("zoo:resnet18"));
        MainWindow window(state);
        const QString trace = TRAINSCOPE_TEST_DATA_DIR "/traces/gpu_tiny_two_streams.json";
        int ticks = 0;
        QTimer timer;
        connect(&timer, &QTimer::timeout, [&ticks] { ++ticks; });
        timer.start(1);
        window.openModel(trace);
        QVERIFY(window.currentJob());
        QVERIFY(window.jobProgress()->isVisibleTo(&window));
        QVERIFY(waitForJob(window, 60000));
        QVERIFY(ticks > 0);
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
        QVERIFY(state.hasTrace());
        QVERIFY(!state.hasModel());
        QCOMPARE(QString::fromStdString(state.modelSpec()), trace);
        QVERIFY(state.trace()->summary.steps.size() == 3);
        QVERIFY(state.tracePredictions() && state.tracePredictions()->complete);
        QCOMPARE(state.tracePredictions()->gpus.size(), state.database().gpus().size());
        QVERIFY(window.windowTitle().contains("gpu_tiny_two_streams.json"));

        const QString truncated = TRAINSCOPE_TEST_DATA_DIR "/bad-traces/truncated.json.gz";
        window.openModel(truncated);
        QVERIFY(waitForJob(window, 30000));
        QVERIFY2(window.errorText().startsWith("Could not open " + truncated), qPrintable(window.errorText()));
        QVERIFY2(window.errorText().contains("truncated"), qPrintable(window.errorText()));
        QCOMPARE(QString::fromStdString(state.modelSpec()), trace);
        QVERIFY(state.hasTrace());
    }

    void dragAndDropAndRecentFilesOpenModels() {
        QTemporaryDir dir;
        AppSettings settings(dir.filePath("settings.ini"));
        ExplorerState state;
        MainWindow window(state);
        window.useSettings(settings);
        const QString model = writeFile(dir, "dropped.json", kTinyJsonModel);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(model)});
        // As a drag does it: the window accepts the file when it enters, then opens it on drop.
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        QVERIFY(waitForJob(window, 30000));
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
        QCOMPARE(QString::fromStdString(state.modelSpec()), model);
        QCOMPARE(settings.recentFiles().value(0), model);

        window.openModel("zoo:resnet18");
        QVERIFY(waitForJob(window, 30000));
        // The recent menu lists the last model first and reopens the dropped one.
        QList<QAction*> recent = window.recentMenu()->actions();
        QVERIFY(recent.size() >= 2);
        QCOMPARE(recent[0]->toolTip(), QString("zoo:resnet18"));
        QCOMPARE(recent[1]->toolTip(), model);
        recent[1]->trigger();
        QVERIFY(waitForJob(window, 30000));
        QCOMPARE(QString::fromStdString(state.modelSpec()), model);
    }

    void settingsSurviveARestart() {
        QTemporaryDir dir;
        const QString ini = dir.filePath("settings.ini");
        {
            AppSettings settings(ini);
            ExplorerState state;
            QVERIFY(state.openModel("zoo:resnet18"));
            MainWindow window(state);
            window.useSettings(settings);
            state.setBatch(48);
            state.setPrecision(TrainingPrecision::AmpBf16);
            state.waitForPredictions();
            state.setGpuCount(4);
            state.waitForPredictions();
            state.setZeroStage(3);
            state.setAccumulation(4);
            state.setCheckpointing(Checkpointing::EveryOtherBlock);
            state.setOptimizerImplementation(OptimizerImplementation::ForLoop);
            state.setMasterWeights(false);
            state.waitForPredictions();
            state.setGoal({3, 5e5});
            for (int i = 0; i < AppSettings::kMaxRecent + 3; ++i) settings.addRecentFile(QString("zoo:m%1").arg(i));
            window.close();  // writes the settings
        }
        AppSettings restored(ini);
        QCOMPARE(restored.recentFiles().size(), AppSettings::kMaxRecent);
        QCOMPARE(restored.recentFiles().first(), QString("zoo:m%1").arg(AppSettings::kMaxRecent + 2));
        ExplorerState state;
        QVERIFY(state.openModel("zoo:resnet18"));
        MainWindow window(state);
        window.useSettings(restored);
        QCOMPARE(state.settings().batch, int64_t(48));
        QCOMPARE(state.settings().precision, TrainingPrecision::AmpBf16);
        QCOMPARE(state.settings().gpus, 4);
        QCOMPARE(state.settings().zeroStage, 3);
        QCOMPARE(state.settings().accumulation, int64_t(4));
        QCOMPARE(state.settings().checkpointing, Checkpointing::EveryOtherBlock);
        QCOMPARE(state.settings().optimizerImplementation, OptimizerImplementation::ForLoop);
        QCOMPARE(state.goal().epochs, 3.0);
        QCOMPARE(state.goal().datasetSamples, 5e5);
        QVERIFY(!state.settings().masterWeights);
        // The batch and precision were the classifier's: a language model opens with its kind's
        // defaults, and the classifier's come back with it from the file.
        QVERIFY(state.openModel("zoo:gpt2?seq=32"));
        QCOMPARE(state.settings().batch, int64_t(8));
        QCOMPARE(state.settings().precision, TrainingPrecision::AmpBf16);
        state.setPrecision(TrainingPrecision::AmpFp16);
        QVERIFY(state.openModel("zoo:resnet18"));
        QCOMPARE(state.settings().batch, int64_t(48));
        QCOMPARE(state.settings().precision, TrainingPrecision::AmpBf16);
    }

    void profileActionSaysWhyItIsDisabled() {
        ExplorerState state;
        QVERIFY(state.openModel("zoo:resnet18"));
        MainWindow window(state);
        const ProfilingAvailability a = gpuProfilingAvailability();
        QCOMPARE(window.profileAction()->isEnabled(), a.available);
        QVERIFY(!window.profileAction()->toolTip().isEmpty());
        if (!a.available) QCOMPARE(window.profileAction()->toolTip(), a.reason);
    }

    void profilingReplacesEstimatesAsMeasurementsArrive() {
        if (!ts::executionSupported()) QSKIP("this build has no LibTorch");
        QTemporaryDir dir;
        ExplorerState state;
        QVERIFY(state.openModel(writeFile(dir, "tiny.json", kTinyJsonModel).toStdString()));
        state.setBatch(2);
        QCOMPARE(state.current().source, PredictionSource::ShippedCalibration);
        MainWindow window(state);
        QStringList stages;
        window.startProfiling("cpu", true);
        QVERIFY(window.currentJob());
        connect(window.currentJob(), &BackgroundJob::progressed,
                [&stages](const QString& stage, double) { stages << stage; });
        QVERIFY(waitForJob(window, 180000));
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
        QVERIFY(state.profile());
        QCOMPARE(int(state.profile()->runs.size()), 3);  // 1, 2 and 4
        QVERIFY(state.predictor()->hasProfile());
        // Taken after each batch size, then the whole profile (a prediction still running when the
        // next arrives is superseded, so the published updates can be fewer on a busy machine).
        QCOMPARE(state.profileUpdates(), 4);
        QVERIFY(stages.filter("layers").size() > 0);
    }

    void cancelKeepsWhatWasMeasured() {
        if (!ts::executionSupported()) QSKIP("this build has no LibTorch");
        QTemporaryDir dir;
        ExplorerState state;
        QVERIFY2(state.openModel(writeFile(dir, "deep.json", deepJsonModel()).toStdString()),
                 qPrintable(state.error()));
        state.setBatch(2);
        MainWindow window(state);
        // Cancel as soon as the first batch size's measurements are shown.
        connect(&state, &ExplorerState::changed, &window, [&] {
            if (state.profile() && window.jobProgress()->cancelButton()->isEnabled())
                window.jobProgress()->cancelButton()->click();
        });
        window.startProfiling("cpu", true);
        QVERIFY(window.currentJob());
        QVERIFY(waitForJob(window, 120000));
        QVERIFY(state.profile());
        QVERIFY(!state.profile()->runs.empty());
        QVERIFY(int(state.profile()->runs.size()) < 3);
        QVERIFY(!state.profile()->complete);
        QVERIFY(state.predictor()->hasProfile());
    }

    void exportReportRunsOffTheGuiThread() {
        QTemporaryDir dir;
        ExplorerState state;
        QVERIFY(state.openModel("zoo:resnet18"));
        MainWindow window(state);
        const QString path = dir.filePath("choice.json");
        window.exportReportTo(path, ts::report::ReportFormat::Json);
        QVERIFY(window.currentJob());
        QVERIFY(waitForJob(window, 60000));
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
        QFile written(path);
        QVERIFY(written.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(written.readAll());
        QVERIFY(doc.isObject());
        QVERIFY(!doc.object().isEmpty());
        // A file that cannot be written is a sentence in the window.
        QTemporaryFile notADirectory;
        QVERIFY(notADirectory.open());
        window.exportReportTo(notADirectory.fileName() + "/choice.json", ts::report::ReportFormat::Json);
        QVERIFY(waitForJob(window, 60000));
        QVERIFY2(window.errorText().contains("cannot be written"), qPrintable(window.errorText()));
    }

    void themesChangeThePalette() {
        auto* app = qobject_cast<QApplication*>(QCoreApplication::instance());
        QVERIFY(app);
        applyTheme(*app, Theme::Dark);
        QVERIFY(darkPalette());
        applyTheme(*app, Theme::Light);
        QVERIFY(!darkPalette());
        applyTheme(*app, Theme::System);
        for (Theme t : {Theme::System, Theme::Light, Theme::Dark}) QCOMPARE(parseTheme(themeName(t)), t);
        QVERIFY(!parseTheme("purple"));
    }

    void progressHelpers() {
        const std::vector<int64_t> batches = batchesAround(8, 4096);
        QCOMPARE(batches, (std::vector<int64_t>{8, 4, 16}));
        QCOMPARE(batchesAround(1, 4096), (std::vector<int64_t>{1, 2}));
        QVERIFY(profilingFraction("batch 8: layers", 0, 10, batches) <
                profilingFraction("batch 8: layers", 5, 10, batches));
        QVERIFY(profilingFraction("batch 8: layers", 10, 10, batches) <=
                profilingFraction("batch 4: iteration", 0, 1, batches));
        QVERIFY(profilingFraction("batch 16: layers", 10, 10, batches) <= 1.0);
        QCOMPARE(profilingFraction("batch 12: iteration", 0, 1, batches), -1.0);
        QCOMPARE(formatTimeLeft(-1), QString());
        QCOMPARE(formatTimeLeft(12.4), QString("about 12 s left"));
        QCOMPARE(formatTimeLeft(150), QString("about 3 min left"));
    }
};

QTEST_MAIN(WindowTest)
#include "test_window.moc"
