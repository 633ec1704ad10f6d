// The explorer's predictions as snapshots made off the GUI thread (explorer_state.h): an older
// request's result is never shown, item models keep reading the snapshot they were refreshed with,
// the state answers while a long prediction runs; and the scenario a model opens with follows its
// kind (predictors/choice/model_defaults.h), with the bound of each layer the predictor's own.
#include <QComboBox>
#include <QLabel>
#include <QSpinBox>
#include <QTimer>
#include <QtTest>
#include <map>

#include "batch_plot_view.h"
#include "explorer_state.h"
#include "gpu_table_model.h"
#include "main_window.h"
#include "module_tree_model.h"
#include "overview_view.h"
#include "qcustomplot.h"
#include "trainscope/predictors/iteration/layer_bounds.h"

using namespace ts::gui;
using ts::predictors::ModelKind;
using ts::predictors::Optimizer;
using ts::predictors::TrainingPrecision;

namespace {

const char* kVision = "zoo:resnet18";
const char* kLanguage = "zoo:bert_base?seq=128";

QVector<double> iterationColumn(const GpuTableModel& model) {
    QVector<double> ms;
    for (int row = 0; row < model.rowCount(); ++row)
        ms << model.index(row, GpuTableModel::IterationMs).data(GpuTableModel::SortRole).toDouble();
    return ms;
}

QVector<double> iterationsOf(const PredictionSnapshot& s) {
    QVector<double> ms;
    for (const auto& p : s.allGpus) ms << (p.supported ? p.iterationMs.value : 1e300);
    return ms;
}

// The leaf of graph operation `name` in the module tree, column `column`.
QString treeCell(const ModuleTreeModel& model, const ts::Graph& g, const std::string& name, int column) {
    for (size_t op = 0; op < g.ops.size(); ++op)
        if (g.ops[op].name == name) return model.indexOfOp(int(op)).siblingAtColumn(column).data().toString();
    return "(no such operation)";
}

}  // namespace

class PredictionsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Two precisions asked for one after the other: the first one's job is cancelled or, if it
    // ended, its result waits in the event queue behind the second request and is dropped. Only
    // the second is ever published.
    void anOlderRequestsResultIsDropped() {
        ExplorerState state;
        QVERIFY2(state.openModel(kVision), qPrintable(state.error()));
        std::vector<TrainingPrecision> published;
        connect(&state, &ExplorerState::changed, [&] { published.push_back(state.snapshot()->settings.precision); });
        state.setPrecision(TrainingPrecision::AmpFp16);
        QVERIFY(state.predicting());
        QThread::msleep(1500);  // the first job ends meanwhile (ResNet-18: well under a second)
        state.setPrecision(TrainingPrecision::AmpBf16);
        state.waitForPredictions();
        QCOMPARE(state.snapshot()->settings.precision, TrainingPrecision::AmpBf16);
        QVERIFY(!published.empty());
        for (TrainingPrecision p : published) QVERIFY(p != TrainingPrecision::AmpFp16);
        // And what is shown is what predicting afresh at amp-bf16 gives.
        ExplorerState fresh;
        QVERIFY(fresh.openModel(kVision));
        fresh.setPrecision(TrainingPrecision::AmpBf16);
        fresh.waitForPredictions();
        QCOMPARE(state.current().iterationMs.value, fresh.current().iterationMs.value);
    }

    // The item models show the snapshot they were refreshed with: neither a request under way nor a
    // snapshot published since changes their rows until they take it.
    void itemModelsReadOneSnapshot() {
        ExplorerState state;
        QVERIFY2(state.openModel(kVision), qPrintable(state.error()));
        GpuTableModel gpus(state);
        ModuleTreeModel tree(state);
        const std::shared_ptr<const PredictionSnapshot> before = state.snapshot();
        const QVector<double> fp32 = iterationColumn(gpus);
        QCOMPARE(fp32, iterationsOf(*before));
        const QString rootForward = tree.index(0, ModuleTreeModel::ForwardMs).data().toString();

        state.setPrecision(TrainingPrecision::AmpFp16);
        gpus.refresh();  // a request under way: the published snapshot is still the fp32 one
        QCOMPARE(gpus.snapshot(), before);
        QCOMPARE(iterationColumn(gpus), fp32);

        state.waitForPredictions();
        const std::shared_ptr<const PredictionSnapshot> after = state.snapshot();
        QVERIFY(after != before);
        QCOMPARE(after->settings.precision, TrainingPrecision::AmpFp16);
        // Published, but not yet taken: the rows are still the fp32 snapshot's, all of them.
        QCOMPARE(iterationColumn(gpus), fp32);
        QCOMPARE(tree.index(0, ModuleTreeModel::ForwardMs).data().toString(), rootForward);
        gpus.refresh();
        tree.refresh();
        QCOMPARE(iterationColumn(gpus), iterationsOf(*after));
        QVERIFY(iterationColumn(gpus) != fp32);
        QVERIFY(tree.index(0, ModuleTreeModel::ForwardMs).data().toString() != rootForward);
        QCOMPARE(tree.snapshot(), after);
    }

    // Another sequence length is a new analysis of the model, made on the worker: while it runs the
    // state answers at once, the views keep the last snapshot and the batch slider moves them; when
    // it lands it takes the batch chosen meanwhile.
    void theStateAnswersWhileALongPredictionRuns() {
        ExplorerState state;
        QVERIFY2(state.openModel(kLanguage), qPrintable(state.error()));
        state.setBatch(8);
        const int64_t seq = state.snapshot()->model->seq;
        QCOMPARE(seq, int64_t(128));
        int ticks = 0;
        QTimer timer;
        connect(&timer, &QTimer::timeout, [&ticks] { ++ticks; });
        timer.start(1);

        state.setSequenceLength(512);
        QVERIFY(state.predicting());
        QCOMPARE(state.settings().seq, int64_t(512));
        QCOMPARE(state.snapshot()->model->seq, seq);  // still the last snapshot
        state.setBatch(24);                           // answered at once, from the last snapshot's plans
        QCOMPARE(state.snapshot()->settings.batch, int64_t(24));
        QCOMPARE(state.snapshot()->model->seq, seq);
        state.waitForPredictions();
        QVERIFY(ticks > 0);  // the event loop turned while the worker predicted

        const PredictionSnapshot& s = *state.snapshot();
        QCOMPARE(s.model->seq, int64_t(512));
        QCOMPARE(s.settings.batch, int64_t(24));
        QCOMPARE(s.costs.seq, int64_t(512));
        // tokens = samples x the sequence length
        QVERIFY(std::abs(s.current.tokensPerS.value - 512 * s.current.samplesPerS.value) <=
                1e-9 * s.current.tokensPerS.value);
        // The costs are the model's at 512: the linear layers' FLOPs grow 4x with the length, the
        // attention scores' (2 x S^2 x 768 per matrix product and layer) 16x, so more than 4x in all.
        ExplorerState short128;
        QVERIFY(short128.openModel(kLanguage));
        short128.setBatch(24);
        QVERIFY(s.costs.totals.forwardFlops > 4 * short128.costs().totals.forwardFlops);
        QVERIFY(s.current.iterationMs.value > short128.current().iterationMs.value);
    }

    // A language model opens with AdamW, a goal in tokens (20 per parameter), bf16 autocast and
    // batch 8, a vision model with SGD and momentum, one epoch of ImageNet-1k, fp32 and batch 32; a
    // choice made for one kind comes back with it, and never crosses to the other kind.
    void scenariosFollowTheModelKind() {
        ExplorerState state;
        QVERIFY2(state.openModel(kLanguage), qPrintable(state.error()));
        QCOMPARE(state.modelKind(), ModelKind::Language);
        QCOMPARE(state.settings().optimizer, Optimizer::AdamW);
        QCOMPARE(state.settings().precision, TrainingPrecision::AmpBf16);
        QCOMPARE(state.settings().batch, int64_t(8));
        const double parameters = double(state.graph()->parameterCount());
        QCOMPARE(state.goal().tokens, 20 * parameters);
        QCOMPARE(state.snapshot()->current.scenario.optimizer, Optimizer::AdamW);
        QCOMPARE(state.snapshot()->current.scenario.precision, TrainingPrecision::AmpBf16);
        state.setOptimizer(Optimizer::Adam);
        state.setBatch(4);
        state.waitForPredictions();

        QVERIFY2(state.openModel(kVision), qPrintable(state.error()));
        QCOMPARE(state.modelKind(), ModelKind::Vision);
        QCOMPARE(state.settings().optimizer, Optimizer::SgdMomentum);
        QCOMPARE(state.settings().precision, TrainingPrecision::Fp32);
        QCOMPARE(state.settings().batch, int64_t(32));
        QVERIFY(!state.goal().inTokens());
        QCOMPARE(state.goal().datasetSamples, 1281167.0);
        QCOMPARE(state.goal().epochs, 1.0);
        state.setPrecision(TrainingPrecision::Tf32);
        state.setBatch(64);
        state.waitForPredictions();

        QVERIFY(state.openModel("zoo:gpt2?seq=256"));
        QCOMPARE(state.modelKind(), ModelKind::Language);
        QCOMPARE(state.settings().optimizer, Optimizer::Adam);  // the choices made for BERT
        QCOMPARE(state.settings().batch, int64_t(4));
        QCOMPARE(state.settings().precision, TrainingPrecision::AmpBf16);
        QCOMPARE(state.goal().tokens, 20 * double(state.graph()->parameterCount()));
        QCOMPARE(state.snapshot()->model->seq, int64_t(256));

        QVERIFY(state.openModel(kVision));
        QCOMPARE(state.settings().precision, TrainingPrecision::Tf32);
        QCOMPARE(state.settings().batch, int64_t(64));

        // Where the target GPU has no bf16 (a V100), a language model opens in fp16 autocast; a
        // batch in the model's spec wins over the kind's.
        ExplorerState volta;
        ExplorerSettings s = volta.settings();
        s.gpuId = "v100-sxm2-16gb";
        volta.applySettings(s);
        QVERIFY(volta.openModel("zoo:gpt2?seq=64&batch=2"));
        QCOMPARE(volta.settings().precision, TrainingPrecision::AmpFp16);
        QCOMPARE(volta.settings().batch, int64_t(2));
    }

    // Where users of a language model count tokens, the explorer does: the Overview's headline, the
    // GPUs table, the batch plot's axis; the sequence control shows the model's length.
    void tokenModelsShowTokensPerSecond() {
        ExplorerState state;
        QVERIFY2(state.openModel(kLanguage), qPrintable(state.error()));
        MainWindow window(state);
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.show();
        const auto& p = state.current();
        QVERIFY(p.tokensPerS.value > 0);
        auto* throughput = window.findChild<QLabel*>("throughputValue");
        QVERIFY(throughput->text().contains("tokens/s"));
        QVERIFY(throughput->text().contains(QLocale().toString(p.tokensPerS.value, 'f', 0)));
        GpuTableModel* table = window.gpuTableModel();
        table->refresh();
        QCOMPARE(table->headerData(GpuTableModel::SamplesPerS, Qt::Horizontal).toString(), QString("Tokens/s"));
        QCOMPARE(table->headerData(GpuTableModel::UsdPerMillionSamples, Qt::Horizontal).toString(),
                 QString("$/B tokens"));
        window.showView(View::BatchPlot);
        QApplication::processEvents();
        auto* plot = qobject_cast<BatchPlotView*>(window.viewWidget(View::BatchPlot));
        QVERIFY(plot->plot()->yAxis->label().contains("tokens/s"));
        QSpinBox* seq = window.controls()->sequenceSpin();
        QVERIFY(seq->isVisibleTo(&window));
        QCOMPARE(seq->value(), 128);
        seq->setValue(256);  // as a user entering it
        QCOMPARE(state.settings().seq, int64_t(256));
        state.waitForPredictions();
        QCOMPARE(state.snapshot()->model->seq, int64_t(256));

        QVERIFY(state.openModel(kVision));
        QVERIFY(!seq->isVisibleTo(&window));  // a model without a sequence has no length to set
        table->refresh();
        QCOMPARE(table->headerData(GpuTableModel::SamplesPerS, Qt::Horizontal).toString(), QString("Samples/s"));
    }

    // The Modules view's bound is the predictor's (as `trainscope-cli predict` prints it): BERT-base's
    // encoder GEMMs are compute-bound at amp-fp16 on an A100 at batch 32 (tests/unit/test_layer_bounds.cpp
    // has the arithmetic).
    void boundsAreThePredictorsOwn() {
        ExplorerState state;
        QVERIFY2(state.openModel(kLanguage), qPrintable(state.error()));
        ExplorerSettings s = state.settings();
        s.gpuId = "a100-sxm4-80gb";
        s.precision = TrainingPrecision::AmpFp16;
        s.batch = 32;
        state.applySettings(s);
        state.waitForPredictions();
        ModuleTreeModel tree(state);
        const ts::Graph& g = *state.graph();
        for (const char* gemm : {"encoder.layer.0.intermediate.dense/MatMul", "encoder.layer.0.output.dense/MatMul",
                                 "encoder.layer.11.attention.self.query/MatMul"}) {
            QCOMPARE(treeCell(tree, g, gemm, ModuleTreeModel::Bound), QString("compute"));
            QCOMPARE(treeCell(tree, g, gemm, ModuleTreeModel::TensorCores), QString("yes (predicted)"));
        }
        QCOMPARE(treeCell(tree, g, "encoder.layer.0.output.LayerNorm/LayerNormalization", ModuleTreeModel::Bound),
                 QString("memory"));
        // Every layer: the tree shows what LayerBounds says of its forward pass.
        const ts::predictors::LayerBounds bounds(*state.predictor(), state.database().get("a100-sxm4-80gb"),
                                                 TrainingPrecision::AmpFp16);
        int checked = 0;
        for (const ts::predictors::LayerBound& b : bounds.at(32)) {
            const QModelIndex cell = tree.indexOfOp(b.op).siblingAtColumn(ModuleTreeModel::Bound);
            if (!cell.isValid()) continue;
            QCOMPARE(cell.data().toString(), QString(ts::predictors::passBoundName(b.forward)));
            ++checked;
        }
        QVERIFY(checked > 100);
    }
};

QTEST_MAIN(PredictionsTest)
#include "test_predictions.moc"
