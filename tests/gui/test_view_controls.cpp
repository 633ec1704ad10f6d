// What the explorer's views set: dragging the batch plot's line or the Overview's bars sets the batch,
// batches that do not fit are shaded and never headlined, the recommended batch is marked, the goal
// controls drive the cost columns exactly as predictors::trainingCost does, an NVLink scenario on a GPU
// without it falls back to PCIe visibly, and Tools > Prices writes the user GPU file.
#include <qcustomplot.h>

#include <QLabel>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "batch_plot_view.h"
#include "breakdown_bar.h"
#include "explorer_state.h"
#include "gpu_table_model.h"
#include "gpu_view.h"
#include "main_window.h"
#include "offscreen_window.h"
#include "overview_view.h"
#include "prices_dialog.h"
#include "trainscope/core/gpu_user_file.h"
#include "trainscope/predictors/choice/hardware_choice.h"

using namespace ts::gui;
using guitest::showOffscreen;

namespace {

const char* kModel = "zoo:resnet18";  // small and quick to analyse

}  // namespace

class ViewControlsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void draggingTheBatchLineSetsTheBatch() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        state.setBatch(16);
        showOffscreen(window, View::BatchPlot);
        auto* view = qobject_cast<BatchPlotView*>(window.viewWidget(View::BatchPlot));
        QCustomPlot* plot = view->plot();
        const int y = plot->axisRect()->center().y();
        const int x = int(std::lround(view->batchLinePixel()));

        // A press away from the line does nothing.
        QTest::mousePress(plot, Qt::LeftButton, {}, QPoint(x - 60, y));
        QTest::mouseMove(plot, QPoint(x - 100, y));
        QTest::mouseRelease(plot, Qt::LeftButton, {}, QPoint(x - 100, y));
        QCOMPARE(state.settings().batch, int64_t(16));

        // Dragging the line to the right raises the batch to the batch under the mouse.
        const double target = plot->xAxis->pixelToCoord(x + 80);
        QTest::mousePress(plot, Qt::LeftButton, {}, QPoint(x, y));
        QTest::mouseMove(plot, QPoint(x + 40, y));
        QTest::mouseMove(plot, QPoint(x + 80, y));
        QTest::mouseRelease(plot, Qt::LeftButton, {}, QPoint(x + 80, y));
        QVERIFY2(std::llabs(state.settings().batch - std::llround(target)) <= 1,
                 qPrintable(QString("%1 vs %2").arg(state.settings().batch).arg(target)));
        QVERIFY(state.settings().batch > 16);
        QCOMPARE(window.batchSpin()->value(), int(state.settings().batch));  // the controls follow
    }

    // The dashed line marks the recommended batch: a batch of the sweep that fits, within 3% of the
    // best fitting throughput, and no smaller batch is; it follows the GPU and hides when nothing fits.
    // Batches that do not fit are shaded from the largest that fits: on a 16 GB T4 the sweep runs
    // past its memory; on every GPU the shading starts right after the prediction's largest batch.
    void batchesThatDoNotFitAreShaded() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        state.setTargetGpu("t4");
        state.waitForPredictions();
        state.setBatch(8);
        showOffscreen(window, View::BatchPlot);
        auto* view = qobject_cast<BatchPlotView*>(window.viewWidget(View::BatchPlot));
        const double largest = state.current().maxBatch.value;
        QVERIFY(largest > 0);
        QVERIFY(double(state.batchSweep().points.back().batch) > largest);  // the plot reaches past it
        QCOMPARE(view->notFittingFrom(), largest + 1);
    }

    // A batch beyond the GPU's memory says so where the throughput would headline.
    void aBatchThatDoesNotFitIsNotHeadlined() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        state.setTargetGpu("t4");
        state.waitForPredictions();
        state.setBatch(8);
        showOffscreen(window, View::Overview);
        auto* overview = window.viewWidget(View::Overview);
        auto* throughput = overview->findChild<QLabel*>("throughputValue");
        QVERIFY(throughput);
        QVERIFY(state.current().fits);
        QVERIFY2(!throughput->text().contains("does not fit"), qPrintable(throughput->text()));
        state.setBatch(int64_t(state.current().maxBatch.value) + 64);
        QCoreApplication::processEvents();
        overview->repaint();
        QVERIFY(!state.current().fits);
        QTRY_VERIFY2(throughput->text().startsWith("<b>does not fit</b>"), qPrintable(throughput->text()));
    }

    void recommendedBatchIsMarked() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        state.setTargetGpu("a100-sxm4-80gb");
        state.waitForPredictions();
        state.setBatch(8);
        showOffscreen(window, View::BatchPlot);
        auto* view = qobject_cast<BatchPlotView*>(window.viewWidget(View::BatchPlot));
        const int64_t recommended = state.recommendedBatch();
        QVERIFY(recommended > 0);
        QCOMPARE(view->recommendedShown(), double(recommended));
        const ts::predictors::GpuSweep& sweep = state.batchSweep();
        double best = 0, atRecommended = 0;
        for (const ts::predictors::SweepPoint& p : sweep.points) {
            if (!p.fits || double(p.batch) > sweep.maxBatch.low) continue;
            best = std::max(best, p.samplesPerS.value);
            if (p.batch == recommended) atRecommended = p.samplesPerS.value;
        }
        QVERIFY(atRecommended >= 0.97 * best);
        const std::vector<int64_t> candidates = ts::predictors::candidateBatches(ExplorerState::kMaxBatch);
        QVERIFY(std::binary_search(candidates.begin(), candidates.end(), recommended));  // as the report picks
        for (const ts::predictors::SweepPoint& p : sweep.points)
            if (p.batch < recommended && p.fits && std::binary_search(candidates.begin(), candidates.end(), p.batch))
                QVERIFY(p.samplesPerS.value < 0.97 * best);
        // A host-bound small batch is never the recommendation: ResNet-18 on an A100 is not at its
        // plateau at batch 1.
        QVERIFY(recommended > 1);
        // Nothing fits when the weights and Adam's state alone exceed the GPU (GPT-2 large: 774M
        // parameters x 16 B on an 8 GB P4): the line hides.
        QVERIFY2(state.openModel("zoo:gpt2_large?seq=128"), qPrintable(state.error()));
        ExplorerSettings adam = state.settings();
        adam.optimizer = ts::predictors::Optimizer::Adam;
        adam.precision = ts::predictors::TrainingPrecision::Fp32;  // a language model opens in bf16, which a P4 lacks
        adam.gpuId = "p4";
        adam.batch = 1;
        state.applySettings(adam);
        state.waitForPredictions();
        QVERIFY(state.current().supported);
        QCOMPARE(state.current().maxBatch.value, 0.0);
        QCOMPARE(state.recommendedBatch(), int64_t(0));
        showOffscreen(window, View::BatchPlot);
        QCOMPARE(view->recommendedShown(), 0.0);
    }

    void draggingTheOverviewBarsSetsTheBatch() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        state.setBatch(8);
        showOffscreen(window, View::Overview);
        auto* overview = qobject_cast<OverviewView*>(window.viewWidget(View::Overview));
        BreakdownBar* memory = overview->memoryBar();
        // Drag to half the GPU's memory: the largest batch whose peak stays under it.
        const double half = state.current().capacityBytes / 2;
        const int y = int(memory->segmentRect(0).center().y());
        QTest::mousePress(memory, Qt::LeftButton, {}, QPoint(int(memory->xOfValue(half)), y));
        QTest::mouseRelease(memory, Qt::LeftButton, {}, QPoint(int(memory->xOfValue(half)), y));
        const double dragged = memory->valueAt(std::round(memory->xOfValue(half)));
        QVERIFY(state.settings().batch > 8);
        QVERIFY(state.current().peakMemoryBytes.value <= dragged);
        // The throughput bar's left end asks for the least throughput: batch 1.
        BreakdownBar* throughput = overview->throughputBar();
        QTest::mousePress(throughput, Qt::LeftButton, {}, QPoint(1, y));
        QTest::mouseRelease(throughput, Qt::LeftButton, {}, QPoint(1, y));
        QCOMPARE(state.settings().batch, int64_t(1));
    }

    void goalControlsDriveTheCostColumns() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        GpuView view(state);
        view.setAttribute(Qt::WA_DontShowOnScreen);
        view.show();  // a view refreshes (and its table takes the new snapshot) while it is shown
        GpuTableModel* model = view.model();
        auto costs = [&] {
            QVector<double> usd;
            for (int row = 0; row < model->rowCount(); ++row) {
                const QVariant shown = model->index(row, GpuTableModel::UsdToTrain).data(GpuTableModel::SortRole);
                if (!model->costApplies(row) || !model->costOf(row).priced) continue;
                // The column is exactly what trainingCost says for the state's goal.
                const auto expected = ts::predictors::trainingCost(state.allGpus()[size_t(row)],
                                                                   state.database().gpus()[size_t(row)], state.goal());
                if (shown.toDouble() != expected.usdToTrain.value) return QVector<double>{};
                usd << shown.toDouble();
            }
            return usd;
        };
        const QVector<double> before = costs();
        QVERIFY(before.size() >= 3);
        view.epochs()->setValue(state.goal().epochs * 3);
        QCOMPARE(state.goal().epochs, 3.0);
        const QVector<double> tripled = costs();
        QCOMPARE(tripled.size(), before.size());
        for (int i = 0; i < before.size(); ++i) QVERIFY(std::abs(tripled[i] / before[i] - 3) < 1e-9);
        view.datasetSamples()->setValue(100000);
        QCOMPARE(state.goal().datasetSamples, 100000.0);
        QCOMPARE(costs().size(), before.size());
        // The scatter shows every priced GPU the batch fits on, and lists the others.
        QCOMPARE(view.scatterPoints(), before.size());
    }

    // An 8-GPU NVLink scenario drops no GPU: those whose NVLink does not join 8 run over PCIe, and
    // the view says which, in plain sight and in the GPU's tooltip.
    void nvlinkScenarioFallsBackToPcieVisibly() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        state.setInterconnect(ts::predictors::InterconnectKind::NvLink);
        state.waitForPredictions();
        state.setGpuCount(8);
        state.waitForPredictions();
        GpuView view(state);
        GpuTableModel* model = view.model();
        int row3090 = -1;
        for (int row = 0; row < model->rowCount(); ++row) {
            const auto& p = state.allGpus()[size_t(row)];
            QVERIFY2(p.supported, qPrintable(QString::fromStdString(p.gpuId + ": " + p.reason)));
            if (p.gpuId == "rtx-3090") row3090 = row;
        }
        QVERIFY(row3090 >= 0);
        const QString tip = model->index(row3090, GpuTableModel::Gpu).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("PCIe") && tip.contains("at most 2"), qPrintable(tip));
        const QString shown = view.notShown()->text();
        QVERIFY2(shown.contains("Over PCIe, not NVLink") && shown.contains("NVIDIA GeForce RTX 3090") &&
                     !shown.contains("NVIDIA H100 80GB SXM5"),
                 qPrintable(shown));
    }

    // Tools > Prices: a price of the user's own is written to the user GPU file, replaces the listed
    // ones in the costs at once, and removing it brings them back.
    void pricesDialogWritesTheUserFile() {
        QTemporaryDir config;
        qputenv("XDG_CONFIG_HOME", config.path().toUtf8());
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        const double listed = state.database().get("rtx-3090").cheapestPrice()->usdPerGpuHour;
        const QString file = QString::fromStdString(ts::userGpuFilePath());
        {
            PricesDialog dialog(state, file);
            QCOMPARE(dialog.table()->rowCount(), int(state.database().gpus().size()));
            QVERIFY(dialog.ownPrice("rtx-3090"));
            dialog.ownPrice("rtx-3090")->setValue(0.5);
            QVERIFY(dialog.save());
        }
        const ts::Price* own = state.database().get("rtx-3090").cheapestPrice();
        QVERIFY(own && !own->amortised);
        QCOMPARE(own->usdPerGpuHour, 0.5);
        QCOMPARE(QString::fromStdString(own->source), QString(ts::kUserPriceSource));
        QVERIFY(QFile::exists(file));
        QCOMPARE(ts::GpuDatabase::load().get("rtx-3090").cheapestPrice()->usdPerGpuHour,
                 0.5);  // what the CLI reads too
        {
            PricesDialog dialog(state, file);
            QCOMPARE(dialog.ownPrice("rtx-3090")->value(), 0.5);
            dialog.ownPrice("rtx-3090")->setValue(0);
            QVERIFY(dialog.save());
        }
        QCOMPARE(state.database().get("rtx-3090").cheapestPrice()->usdPerGpuHour, listed);
        qunsetenv("XDG_CONFIG_HOME");
    }
};

QTEST_MAIN(ViewControlsTest)
#include "test_view_controls.moc"
