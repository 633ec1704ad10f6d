// The explorer: its item models pass Qt's model checks, the batch control drives the predictions
// every view shows, each view renders something offscreen, and Help opens the documentation.
#include <memory>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "explorer_state.h"
#include "gpu_table_model.h"
#include "help_menu.h"
#include "main_window.h"
#include "module_tree_model.h"
#include "screenshot.h"

using namespace ts::gui;
using ts::predictors::Checkpointing;
using ts::predictors::TrainingPrecision;
using ts::predictors::Optimizer;
using ts::predictors::OptimizerImplementation;

namespace {

// Small and quick to analyse; the explorer treats every model alike.
const char* kModel = "zoo:resnet18";

// Pixels that differ from the most common colour: a blank widget has (almost) none.
int foregroundPixels(const QImage& image) {
    QHash<QRgb, int> counts;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) ++counts[image.pixel(x, y)];
    int background = 0;
    for (int n : counts) background = std::max(background, n);
    return image.width() * image.height() - background;
}

// BERT-base (short sequences) at batch 8 with AdamW in a shown window: the optimizer controls'
// set-up. Null when the model does not open.
std::unique_ptr<MainWindow> showBertWithAdamW(ExplorerState& state) {
    if (!state.openModel("zoo:bert_base?seq=64")) return nullptr;
    auto window = std::make_unique<MainWindow>(state);
    window->show();
    window->batchSpin()->setValue(8);
    state.setOptimizer(Optimizer::AdamW);
    return window;
}

}  // namespace

class ExplorerTest : public QObject {
    Q_OBJECT
public Q_SLOTS:
    // QDesktopServices hands file: URLs here during helpOpensTheDocumentation.
    void openUrl(const QUrl& url) { opened_ << url; }

private:
    QList<QUrl> opened_;

private Q_SLOTS:
    // Help lists the documentation pages; each exists in the source tree; the installed copy is
    // preferred to the source tree's; choosing a page hands that file to the desktop.
    void helpOpensTheDocumentation() {
        QTemporaryDir installed, source;
        auto write = [](const QTemporaryDir& dir, const QString& name) {
            QFile f(dir.filePath(name));
            return f.open(QIODevice::WriteOnly) && f.write("# page\n") > 0;
        };
        QVERIFY(write(installed, "gui.md") && write(source, "gui.md") && write(source, "report.md"));
        QCOMPARE(helpPagePath("gui.md", installed.path(), source.path()), installed.filePath("gui.md"));
        QCOMPARE(helpPagePath("report.md", installed.path(), source.path()), source.filePath("report.md"));
        QCOMPARE(helpPagePath("traces.md", installed.path(), source.path()), QString());
        QCOMPARE(helpPagePath("gui.md", "", ""), QString());

        QStringList files;
        for (const HelpPage& page : helpPages()) {
            files << page.file;
            QVERIFY2(QFile::exists(QDir(sourceDocsDir()).filePath(page.file)), qPrintable(page.file));
        }
        for (const char* needed : {"gui.md", "prediction.md", "report.md", "traces.md", "model-format.md"})
            QVERIFY2(files.contains(needed), needed);

        ExplorerState state;
        MainWindow window(state);
        QDesktopServices::setUrlHandler("file", this, "openUrl");
        for (const QString& file : files) {
            auto* action = window.menuBar()->findChild<QAction*>("help:" + file);
            QVERIFY2(action, qPrintable(file));
            action->trigger();
            QVERIFY(!opened_.isEmpty());
            QCOMPARE(opened_.last().toLocalFile(), helpPagePath(file, installedDocsDir(), sourceDocsDir()));
        }
        QDesktopServices::unsetUrlHandler("file");
        QCOMPARE(opened_.size(), files.size());
        QVERIFY(window.menuBar()->findChildren<QAction*>().size() > files.size());  // and About
    }

    void gpuTableModelIsConsistent() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        GpuTableModel model(state);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), int(state.database().gpus().size()));
        state.setBatch(8);
        model.refresh();
        state.openModel("missing-model.onnx");
        model.refresh();
        QCOMPARE(model.rowCount(), 0);
    }

    void moduleTreeModelIsConsistent() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        ModuleTreeModel model(state);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 1);  // the model itself
        const QModelIndex root = model.index(0, 0);
        QVERIFY(model.rowCount(root) > 0);
        // Forward time is predicted per operation and summed up the tree.
        QVERIFY(model.index(0, ModuleTreeModel::ForwardMs).data().toString().size() > 0);
        state.setBatch(4);
        model.refresh();
        QVERIFY2(state.openModel("zoo:mobilenet_v2"), qPrintable(state.error()));
        model.refresh();
        QVERIFY(model.rowCount(model.index(0, 0)) > 0);
    }

    void batchControlChangesThroughput() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        auto* throughput = window.findChild<QLabel*>("throughputValue");
        QVERIFY(throughput);
        window.batchSpin()->setValue(2);
        QCOMPARE(window.batchSlider()->value(), sliderAtBatch(2));
        const QString atTwo = throughput->text();
        const double samplesAtTwo = state.current().samplesPerS.value;
        window.batchSlider()->setValue(sliderAtBatch(64));  // as a user dragging it would
        QCOMPARE(window.batchSpin()->value(), 64);
        QCOMPARE(state.settings().batch, 64);
        QVERIFY(state.current().samplesPerS.value > samplesAtTwo);  // larger batches use the GPU better
        QVERIFY(throughput->text() != atTwo);
        window.batchSlider()->setValue(0);
        QCOMPARE(state.settings().batch, 1);
        window.batchSlider()->setValue(kSliderSteps);
        QCOMPARE(state.settings().batch, ExplorerState::kMaxBatch);
    }

    void batchMovesGiveTheFiguresOfAFullPrediction() {
        // The slider's fast path (a prepared sweep plan) must show what predicting afresh shows.
        ExplorerState moved;
        QVERIFY2(moved.openModel(kModel), qPrintable(moved.error()));
        for (int64_t b : {3, 700, 37}) moved.setBatch(b);
        ExplorerState fresh;
        QVERIFY(fresh.openModel(kModel));
        ExplorerSettings s = fresh.settings();
        s.batch = 37;
        fresh.applySettings(s);
        fresh.waitForPredictions();
        QCOMPARE(moved.allGpus().size(), fresh.allGpus().size());
        for (size_t i = 0; i < fresh.allGpus().size(); ++i) {
            const auto& a = moved.allGpus()[i];
            const auto& b = fresh.allGpus()[i];
            QCOMPARE(a.gpuId, b.gpuId);
            QCOMPARE(a.supported, b.supported);
            if (!b.supported) continue;
            QVERIFY(qFuzzyCompare(a.iterationMs.value, b.iterationMs.value));
            QVERIFY(qFuzzyCompare(a.samplesPerS.high, b.samplesPerS.high));
            QVERIFY(qFuzzyCompare(a.peakMemoryBytes.value, b.peakMemoryBytes.value));
            QVERIFY(qFuzzyCompare(a.maxBatch.value + 1, b.maxBatch.value + 1));
            QCOMPARE(a.fits, b.fits);
        }
        QVERIFY(qFuzzyCompare(moved.current().iterationMs.value, fresh.current().iterationMs.value));
        QCOMPARE(moved.current().layers.size(), fresh.current().layers.size());
        QVERIFY(!moved.batchSweep().points.empty());
        QVERIFY(moved.batchSweep().points.back().batch >= 2 * 37);
    }

    void checkpointingLowersPeakMemory() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        window.batchSpin()->setValue(64);
        const double without = state.current().peakMemoryBytes.value;
        const double iterationWithout = state.current().iterationMs.value;
        QComboBox* box = window.checkpointingBox();
        box->setCurrentIndex(box->findData(int(Checkpointing::Blocks)));
        QCOMPARE(state.settings().checkpointing, Checkpointing::Blocks);
        state.waitForPredictions();
        QVERIFY(state.current().peakMemoryBytes.value < without);
        QVERIFY(state.current().iterationMs.value > iterationWithout);  // the second forward
    }

    // Sharding and gradient accumulation from the controls: ZeRO-3 over 8 GPUs holds less than DDP;
    // accumulating 4 micro-batches spreads the step and the all-reduce over them; the title says both.
    void shardingAndAccumulationFollowTheControls() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        window.batchSpin()->setValue(32);
        state.setGpuCount(8);
        state.waitForPredictions();
        const double replicated = state.current().peakMemoryBytes.value;
        const double iteration = state.current().iterationMs.value;
        QComboBox* sharding = window.shardingBox();
        sharding->setCurrentIndex(sharding->findData(3));
        QCOMPARE(state.settings().zeroStage, 3);
        state.waitForPredictions();
        QVERIFY(state.current().peakMemoryBytes.value < replicated);
        sharding->setCurrentIndex(sharding->findData(0));
        window.accumulationSpin()->setValue(4);
        QCOMPARE(state.settings().accumulation, int64_t(4));
        state.waitForPredictions();
        QVERIFY(state.current().iterationMs.value < iteration);  // per micro-batch
        QCOMPARE(state.current().stepMs.value, 4 * state.current().iterationMs.value);
    }

    // LoRA from the controls: a transformer's blocks get adapters, the base is frozen, so far fewer
    // parameters train and the peak falls; a model without linear layers in numbered blocks (ResNet)
    // says why it cannot, and turning LoRA off brings the full model back.
    void loraRankFollowsTheControl() {
        ExplorerState state;
        QVERIFY2(state.openModel("zoo:bert_base?seq=64"), qPrintable(state.error()));
        MainWindow window(state);
        state.waitForPredictions();
        const double full = state.current().peakMemoryBytes.value;
        const int64_t parameters = state.graph()->parameterCount();
        window.loraSpin()->setValue(8);
        QCOMPARE(state.settings().loraRank, int64_t(8));
        state.waitForPredictions();
        QVERIFY(state.graph()->parameterCount() > parameters);  // the adapters
        QVERIFY(state.current().peakMemoryBytes.value < full);
        // PEFT's lora_dropout, offered only with adapters: each adapter's input keeps a mask and its
        // dropped copy, so the same adapters need more memory.
        QVERIFY(!window.loraDropoutSpin()->isHidden());
        const double withoutDropout = state.current().peakMemoryBytes.value;
        const int64_t adapters = state.graph()->parameterCount();
        window.loraDropoutSpin()->setValue(0.1);
        QCOMPARE(state.settings().loraDropout, 0.1);
        state.waitForPredictions();
        QCOMPARE(state.graph()->parameterCount(), adapters);
        QVERIFY(state.current().peakMemoryBytes.value > withoutDropout);
        window.loraSpin()->setValue(0);
        state.waitForPredictions();
        QCOMPARE(state.graph()->parameterCount(), parameters);
        QCOMPARE(state.current().peakMemoryBytes.value, full);
        QVERIFY(window.loraDropoutSpin()->isHidden());

        ExplorerState resnet;
        QVERIFY(resnet.openModel(kModel));
        resnet.setLoraRank(8);
        resnet.waitForPredictions();
        QVERIFY(!resnet.current().supported);
        const QString reason = QString::fromStdString(resnet.current().reason);
        QVERIFY2(reason.startsWith("LoRA rank 8: no linear layer of resnet18") && !reason.contains("--lora"),
                 qPrintable(reason));
    }

    // Tensor parallelism from its control, shown only for a model built from a Hugging Face config:
    // each GPU holds about half of Qwen3-0.6B at 2 (its tied embedding split too), the GPU count moves
    // to a whole group and steps by it, the peak falls; back at 1 the whole model returns. A zoo
    // model has no such control.
    void tensorParallelFollowsTheControl() {
        ExplorerState state;
        const std::string config = std::string(TRAINSCOPE_TEST_DATA_DIR) + "/hf-configs/qwen3-0.6b.json?seq=128";
        QVERIFY2(state.openModel(config), qPrintable(state.error()));
        MainWindow window(state);
        window.show();
        state.waitForPredictions();
        auto* group = window.findChild<QSpinBox*>("tensorParallel");
        auto* gpus = window.findChild<QSpinBox*>("gpuCount");
        QVERIFY(group && gpus);
        QVERIFY(group->isVisible());
        const int64_t whole = state.graph()->parameterCount();
        const double peak = state.current().peakMemoryBytes.value;
        group->setValue(2);
        QCOMPARE(state.settings().tensorParallel, 2);
        QCOMPARE(state.settings().gpus, 2);
        QCOMPARE(gpus->singleStep(), 2);
        state.waitForPredictions();
        QVERIFY2(state.current().supported, state.current().reason.c_str());
        QCOMPARE(state.current().tensorParallel, 2);
        QVERIFY(state.graph()->parameterCount() < whole * 6 / 10);
        QVERIFY(state.current().peakMemoryBytes.value < peak);
        // Sequence parallelism, shown once there is a group: the same parameters, fewer activations.
        auto* sequence = window.findChild<QCheckBox*>("sequenceParallel");
        QVERIFY(sequence && sequence->isVisible());
        const int64_t shard = state.graph()->parameterCount();
        const double activations = state.current().memory.activations;
        sequence->setChecked(true);
        QVERIFY(state.settings().sequenceParallel);
        state.waitForPredictions();
        QCOMPARE(state.graph()->parameterCount(), shard);
        QVERIFY(state.current().memory.activations < activations);
        sequence->setChecked(false);
        state.waitForPredictions();
        group->setValue(1);
        state.waitForPredictions();
        QCOMPARE(state.graph()->parameterCount(), whole);
        QCOMPARE(state.current().tensorParallel, 1);
        QVERIFY(!sequence->isVisible());

        ExplorerState resnet;
        QVERIFY(resnet.openModel(kModel));
        MainWindow other(resnet);
        other.show();
        resnet.waitForPredictions();
        QVERIFY(!other.findChild<QSpinBox*>("tensorParallel")->isVisible());
    }

    // Expert parallelism from its control, shown only for a mixture of experts: OLMoE's 64 experts a
    // layer over groups of 8 leave each GPU 8 of them, the GPU count moves to a whole group, the peak
    // falls; tensor parallelism then puts the experts back whole (the two are not combined). A dense
    // model has no such control.
    void expertParallelFollowsTheControl() {
        ExplorerState state;
        const std::string config = std::string(TRAINSCOPE_TEST_DATA_DIR) + "/hf-configs/olmoe-1b-7b.json?seq=128";
        QVERIFY2(state.openModel(config), qPrintable(state.error()));
        MainWindow window(state);
        window.show();
        state.waitForPredictions();
        auto* group = window.findChild<QSpinBox*>("expertParallel");
        auto* gpus = window.findChild<QSpinBox*>("gpuCount");
        QVERIFY(group && gpus);
        QVERIFY(group->isVisible());
        const int64_t whole = state.graph()->parameterCount();
        const double peak = state.current().peakMemoryBytes.value;
        group->setValue(8);
        QCOMPARE(state.settings().expertParallel, 8);
        QCOMPARE(state.settings().gpus, 8);
        QCOMPARE(gpus->singleStep(), 8);
        state.waitForPredictions();
        QVERIFY2(state.current().supported, state.current().reason.c_str());
        QCOMPARE(state.current().expertParallel, 8);
        QCOMPARE(state.graph()->modelParameterCount(), whole);
        QVERIFY(state.graph()->parameterCount() < whole / 4);  // the experts are most of OLMoE
        QVERIFY(state.current().peakMemoryBytes.value < peak);
        window.findChild<QSpinBox*>("tensorParallel")->setValue(2);
        QCOMPARE(state.settings().expertParallel, 1);
        QCOMPARE(group->value(), 1);

        ExplorerState dense;
        const std::string qwen = std::string(TRAINSCOPE_TEST_DATA_DIR) + "/hf-configs/qwen3-0.6b.json?seq=128";
        QVERIFY2(dense.openModel(qwen), qPrintable(dense.error()));
        MainWindow other(dense);
        other.show();
        dense.waitForPredictions();
        QVERIFY(!other.findChild<QSpinBox*>("expertParallel")->isVisible());
    }

    // The memory format from its control, shown only for a model with convolutions: channels-last
    // spares a convolution net's tensor-core convolutions cuDNN's transposes (faster at tf32 on an
    // A100), the title says so; a transformer has no such control.
    void channelsLastFollowsTheControl() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        window.show();
        window.batchSpin()->setValue(32);
        state.setPrecision(TrainingPrecision::Tf32);
        state.waitForPredictions();
        const double channelsFirst = state.current().iterationMs.value;
        QVERIFY(window.channelsLastBox()->isVisible());
        window.channelsLastBox()->setChecked(true);
        QVERIFY(state.settings().channelsLast);
        state.waitForPredictions();
        QVERIFY(state.current().iterationMs.value < channelsFirst);
        QVERIFY(state.current().scenario.channelsLast);

        ExplorerState bert;
        QVERIFY(bert.openModel("zoo:bert_base?seq=64"));
        MainWindow other(bert);
        other.show();
        QVERIFY(!other.channelsLastBox()->isVisible());
    }

    // How the optimizer runs, from its control: a fused step is faster than foreach's passes and
    // keeps no temporary; the title says so; hidden for bitsandbytes' 8-bit Adam (its own kernel).
    void optimizerImplementationFollowsTheControl() {
        ExplorerState state;
        const std::unique_ptr<MainWindow> shown = showBertWithAdamW(state);
        QVERIFY(shown);
        MainWindow& window = *shown;
        state.waitForPredictions();
        const double foreachMs = state.current().optimizerMs.value;
        QComboBox* box = window.optimizerImplementationBox();
        QVERIFY(box->isVisible());
        box->setCurrentIndex(box->findData(int(OptimizerImplementation::Fused)));
        QCOMPARE(state.settings().optimizerImplementation, OptimizerImplementation::Fused);
        state.waitForPredictions();
        QVERIFY(state.current().optimizerMs.value < foreachMs / 2);
        QCOMPARE(state.current().scenario.optimizerImplementation, OptimizerImplementation::Fused);
        QVERIFY(window.findChild<QLabel*>("overviewTitle")->text().contains("fused optimizer step"));
        state.setOptimizer(Optimizer::Adam8bit);
        QVERIFY(!box->isVisible());
    }

    // Where bf16 training's updates go, from its control, shown only at bf16-params: without the
    // fp32 master copy AdamW's states are bf16 (4 bytes a parameter, not 12 with the copy), the
    // title says so; fp16-params always keeps the copy.
    void masterWeightsFollowTheControl() {
        ExplorerState state;
        const std::unique_ptr<MainWindow> shown = showBertWithAdamW(state);
        QVERIFY(shown);
        MainWindow& window = *shown;
        state.setPrecision(TrainingPrecision::AmpBf16);
        QCheckBox* box = window.masterWeightsBox();
        QVERIFY(!box->isVisible());
        state.setPrecision(TrainingPrecision::Bf16Params);
        QVERIFY(box->isVisible());
        QVERIFY(box->isChecked());
        state.waitForPredictions();
        const double withMaster = state.current().memory.optimizerState;
        box->setChecked(false);
        QVERIFY(!state.settings().masterWeights);
        state.waitForPredictions();
        QVERIFY(!state.current().scenario.masterWeights);
        QCOMPARE(state.current().memory.optimizerState, withMaster / 3);
        // The set-up follows the GPU count it belongs after ("1 GPU(s) · ...", not "1 · ... GPU(s)").
        const QString title = window.findChild<QLabel*>("overviewTitle")->text();
        QVERIFY2(title.contains("1 GPU(s) · no fp32 master weights</p>"), qPrintable(title));
        // fp16-params keeps its master copy whatever the box says, and hides it.
        state.setPrecision(TrainingPrecision::Fp16Params);
        QVERIFY(!box->isVisible());
        state.waitForPredictions();
        QCOMPARE(state.current().memory.optimizerState, withMaster);
        QVERIFY(!window.findChild<QLabel*>("overviewTitle")->text().contains("no fp32 master weights"));
        state.setPrecision(TrainingPrecision::Bf16Params);
        box->setChecked(true);  // the settings are remembered: leave them as found
    }

    // The prediction's notes under the figures: GPT-2's 50,257-word output layer is a 16-bit GEMM whose
    // rows have an odd width at amp-bf16 (charged 3x), named there; in fp32 (its GEMMs on CUDA cores)
    // the prediction has no note on one GPU and the row is hidden.
    void overviewListsThePredictionsNotes() {
        ExplorerState state;
        QVERIFY2(state.openModel("zoo:gpt2?seq=64"), qPrintable(state.error()));
        MainWindow window(state);
        window.show();
        const ExplorerSettings before = state.settings();
        state.setTargetGpu("a100-sxm4-80gb");
        state.setGpuCount(1);
        state.setPrecision(TrainingPrecision::AmpBf16);
        state.waitForPredictions();
        window.showView(View::Overview);
        QApplication::processEvents();
        auto* notes = window.findChild<QLabel*>("notesValue");
        QVERIFY(notes);
        QVERIFY2(notes->isVisible(), qPrintable(notes->text()));
        QVERIFY2(notes->text().contains("lm_head") && notes->text().contains("50,257 columns"),
                 qPrintable(notes->text()));
        state.setPrecision(TrainingPrecision::Fp32);
        state.waitForPredictions();
        QApplication::processEvents();
        QVERIFY(state.current().notes.empty());
        QVERIFY(!notes->isVisible());
        state.setTargetGpu(before.gpuId);  // the settings are remembered: leave them as found
        state.setGpuCount(before.gpus);
        state.setPrecision(before.precision);
    }

    void batchSliderScaleRoundTrips() {
        for (int64_t batch : {1, 2, 3, 7, 32, 100, 1000, 4096})
            QVERIFY2(std::llabs(batchAtSlider(sliderAtBatch(batch)) - batch) <= std::max<int64_t>(1, batch / 100),
                     qPrintable(QString::number(batch)));
        QCOMPARE(batchAtSlider(-5), int64_t(1));
        QCOMPARE(batchAtSlider(kSliderSteps + 5), ExplorerState::kMaxBatch);
    }

    void everyViewRendersOffscreen() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (const char* name : {"overview", "batch", "gpus", "modules"}) {
            const std::optional<View> view = parseView(name);
            QVERIFY(view);
            const QString file = dir.filePath(QString(name) + ".png");
            QVERIFY(saveScreenshot(window, *view, file));
            const QImage saved(file);
            QVERIFY2(!saved.isNull(), name);
            // The view itself, not only the controls around it, must draw something.
            const QImage content = window.viewWidget(*view)->grab().toImage();
            QVERIFY2(foregroundPixels(content) > content.width() * content.height() / 200, name);
        }
        QVERIFY(!parseView("nonsense"));
    }
};

QTEST_MAIN(ExplorerTest)
#include "test_explorer.moc"
