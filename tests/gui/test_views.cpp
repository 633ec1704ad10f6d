// The explorer's views: their item models pass Qt's model checks, a layer selected in one view is
// selected in the others, dragging the current-batch line or the overview's bars sets the batch,
// the goal controls drive the cost columns exactly as predictors::trainingCost does, the module
// filter keeps what matches, views in background tabs wait until shown, and every view draws.
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "batch_plot_view.h"
#include "breakdown_bar.h"
#include "explorer_state.h"
#include "gpu_table_model.h"
#include "gpu_view.h"
#include "layer_figures.h"
#include "main_window.h"
#include "module_tree_model.h"
#include "module_tree_view.h"
#include "overview_view.h"
#include "prices_dialog.h"
#include "roofline_view.h"
#include "screenshot.h"
#include "timeline_view.h"
#include "trainscope/core/gpu_user_file.h"
#include "trainscope/predictors/choice/hardware_choice.h"
#include "view_refresher.h"

using namespace ts::gui;
using ts::predictors::TrainingGoal;

namespace {

const char* kModel = "zoo:resnet18";  // small and quick to analyse

// A window drawn offscreen with `view` current and laid out, its plots replotted.
void showOffscreen(MainWindow& window, View view) {
    if (!window.isVisible()) {
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.show();
    }
    window.showView(view);
    QApplication::processEvents();
    for (QCustomPlot* plot : window.viewWidget(view)->findChildren<QCustomPlot*>()) plot->replot();
}

int selectedTreeOp(MainWindow& window) {
    auto* view = qobject_cast<ModuleTreeView*>(window.viewWidget(View::Modules));
    return view->tree()->currentIndex().data(ModuleTreeModel::OpRole).toInt();
}

// Leaves of the filtered tree, and whether each name contains `text`.
void collectLeaves(const QAbstractItemModel& model, const QModelIndex& parent, QStringList& leaves) {
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, 0, parent);
        if (model.rowCount(index) == 0)
            leaves << index.data().toString();
        else
            collectLeaves(model, index, leaves);
    }
}

int sourceLeavesMatching(const ModuleTreeModel& model, const QModelIndex& parent, const QString& text) {
    int n = 0;
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, 0, parent);
        if (model.rowCount(index) == 0)
            n += index.data().toString().contains(text, Qt::CaseInsensitive);
        else
            n += sourceLeavesMatching(model, index, text);
    }
    return n;
}

}  // namespace

class ViewsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void modelsPassModelChecks() {
        ExplorerState state;  // models first, data afterwards: the tester sees every change
        GpuTableModel gpus(state);
        ModuleTreeModel modules(state);
        QSortFilterProxyModel filtered;
        filtered.setSourceModel(&modules);
        filtered.setRecursiveFilteringEnabled(true);
        filtered.setSortRole(ModuleTreeModel::SortRole);
        using Tester = QAbstractItemModelTester;
        Tester t1(&gpus, Tester::FailureReportingMode::QtTest);
        Tester t2(&modules, Tester::FailureReportingMode::QtTest);
        Tester t3(&filtered, Tester::FailureReportingMode::QtTest);
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        gpus.refresh();
        modules.refresh();
        QCOMPARE(gpus.columnCount(), int(GpuTableModel::ColumnCount));
        filtered.setFilterFixedString("conv");
        filtered.sort(ModuleTreeModel::SharePercent, Qt::DescendingOrder);
        state.setBatch(8);
        state.setGoal({3, 50000});
        gpus.refresh();
        modules.refresh();
        // Every layer row has a bound, and the root's share of the iteration is its layers'.
        const QModelIndex root = modules.index(0, 0);
        QVERIFY(!modules.index(0, ModuleTreeModel::Bound).data().toString().isEmpty());
        const double share = modules.index(0, ModuleTreeModel::SharePercent).data(ModuleTreeModel::SortRole).toDouble();
        QVERIFY2(share > 50 && share <= 100.0001, qPrintable(QString::number(share)));
        QVERIFY(modules.rowCount(root) > 0);
        filtered.setFilterFixedString(QString());
        QVERIFY2(state.openModel("zoo:mobilenet_v2"), qPrintable(state.error()));
        gpus.refresh();
        modules.refresh();
        state.openModel("missing-model.onnx");
        gpus.refresh();
        modules.refresh();
        QCOMPARE(modules.rowCount(), 0);
        QCOMPARE(gpus.rowCount(), 0);
    }

    void selectionFollowsInEveryView() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        const ts::Graph& g = *state.graph();
        auto* modules = qobject_cast<ModuleTreeView*>(window.viewWidget(View::Modules));
        auto* roofline = qobject_cast<RooflineView*>(window.viewWidget(View::Roofline));
        auto* timeline = qobject_cast<TimelineView*>(window.viewWidget(View::Timeline));
        auto* overview = qobject_cast<OverviewView*>(window.viewWidget(View::Overview));
        QVERIFY(modules && roofline && timeline && overview);

        // Module tree -> state and roofline.
        showOffscreen(window, View::Modules);
        const QModelIndex source = modules->model()->indexOfOp(3);
        QVERIFY(source.isValid());
        modules->tree()->setCurrentIndex(modules->proxy()->mapFromSource(source));
        QCOMPARE(state.selectedOp(), 3);

        // Roofline click -> state -> module tree.
        showOffscreen(window, View::Roofline);
        QVERIFY(roofline->pointCount() > 5);
        int convOp = -1;
        for (size_t i = 0; i < g.ops.size() && convOp < 0; ++i)
            if (g.ops[i].type == "Conv" && int(i) != 3 && roofline->pointPixel(int(i)).x() >= 0) convOp = int(i);
        QVERIFY(convOp >= 0);
        const QPointF pixel = roofline->pointPixel(convOp);
        QCOMPARE(roofline->opAt(pixel), convOp);
        QTest::mouseClick(roofline->plot(), Qt::LeftButton, {}, pixel.toPoint());
        // Points may overlap: whichever layer is under the mouse is the one selected everywhere.
        const int clicked = roofline->opAt(pixel.toPoint());
        QVERIFY(clicked >= 0);
        QCOMPARE(state.selectedOp(), clicked);
        QCOMPARE(selectedTreeOp(window), clicked);

        // Timeline click on a backward block of the GPU stream -> state and module tree.
        showOffscreen(window, View::Timeline);
        IterationTimelineCanvas* canvas = timeline->canvas();
        const std::vector<TimelineBlock>& blocks = canvas->picture().blocks;
        const int gpuLane = canvas->laneOf(IterationLane::Gpu);
        const auto backward = std::find_if(blocks.begin(), blocks.end(), [&](const TimelineBlock& b) {
            return b.lane == gpuLane && b.color == passColor(IterationPass::Backward) && b.key >= 0 &&
                   b.key != clicked && canvas->blockRect(b).width() > 3;
        });
        QVERIFY(backward != blocks.end());
        const TimelineBlock block = *backward;  // the picture is redrawn when the state changes
        QTest::mouseClick(canvas, Qt::LeftButton, {}, canvas->blockRect(block).center().toPoint());
        QCOMPARE(state.selectedOp(), block.key);
        QCOMPARE(selectedTreeOp(window), block.key);
        // The wheel zooms in about the mouse: the block under it gets wider.
        const QPointF at = canvas->blockRect(block).center();
        const double widthBefore = canvas->blockRect(block).width();
        QWheelEvent wheel(at, canvas->mapToGlobal(at), {}, {0, 480}, Qt::NoButton, {}, Qt::NoScrollPhase, false);
        QApplication::sendEvent(canvas, &wheel);
        QVERIFY(canvas->blockRect(block).width() > 1.5 * widthBefore);
        QVERIFY(canvas->blockRect(block).contains(at));
        const int selectedByTimeline = block.key;

        // Overview module bar -> the module's first operation, shown (expanded) in the tree.
        showOffscreen(window, View::Overview);
        BreakdownBar* bar = overview->timeBar();
        int segment = -1;
        for (int i = 0; i < bar->segments().size() && segment < 0; ++i)
            if (bar->segments()[i].key >= 0 && bar->segments()[i].key != selectedByTimeline) segment = i;
        QVERIFY(segment >= 0);
        const int key = bar->segments()[segment].key;
        QTest::mouseClick(bar, Qt::LeftButton, {}, bar->segmentRect(segment).center().toPoint());
        QCOMPARE(state.selectedOp(), key);
        QCOMPARE(selectedTreeOp(window), key);
        const QModelIndex row = modules->proxy()->mapFromSource(modules->model()->indexOfOp(key));
        QVERIFY(modules->tree()->isExpanded(row.parent()));
        // Double-clicking opens the module tree.
        QTest::mouseDClick(bar, Qt::LeftButton, {}, bar->segmentRect(segment).center().toPoint());
        QCOMPARE(window.viewWidget(View::Modules)->isVisible(), true);
    }

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

    // The memory bar shows what is held at the peak: its segments add up to the peak marker (the
    // categories' totals exceed it when backward frees activations before the gradients peak), in
    // GiB like the capacity.
    void memorySegmentsAddUpToThePeak() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        for (int64_t batch : {1, 8, 32}) {
            state.setBatch(batch);
            showOffscreen(window, View::Overview);
            auto* overview = qobject_cast<OverviewView*>(window.viewWidget(View::Overview));
            BreakdownBar* memory = overview->memoryBar();
            double sum = 0;
            for (const BreakdownBar::Segment& s : memory->segments()) {
                sum += s.value;
                QVERIFY2(s.label.endsWith(" GiB"), qPrintable(s.label));
            }
            const double peak = state.current().peakMemoryBytes.value;
            QVERIFY2(std::abs(sum - peak) <= 1e-6 * peak, qPrintable(QString("%1 vs %2").arg(sum).arg(peak)));
            bool peakMarked = false;
            for (const BreakdownBar::Marker& m : memory->markers()) peakMarked |= m.value == peak;
            QVERIFY(peakMarked);
        }
    }

    // LoRA's adapters are another graph of the same model, its operations numbered anew: the Overview's
    // time bar still puts every layer under its top-level module (it kept the first graph's numbering,
    // and showed most of the encoder as "(other layers)").
    void overviewModulesFollowAnotherGraphOfTheModel() {
        ExplorerState state;
        QVERIFY2(state.openModel("zoo:bert_base?seq=64"), qPrintable(state.error()));
        MainWindow window(state);
        auto* overview = qobject_cast<OverviewView*>(window.viewWidget(View::Overview));
        for (int64_t rank : {0, 8}) {
            state.setLoraRank(rank);
            state.waitForPredictions();
            showOffscreen(window, View::Overview);
            QStringList labels;
            for (const BreakdownBar::Segment& s : overview->timeBar()->segments()) labels << s.label;
            QVERIFY2(!labels.join(" | ").contains("(other layers)"), qPrintable(labels.join(" | ")));
            QVERIFY2(labels.join(" | ").contains("encoder"), qPrintable(labels.join(" | ")));
        }
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

    // GPUs that cost about the same sit close together: their labels must not be drawn over each
    // other (nor over other points), and the target's label always shows.
    void scatterLabelsDoNotOverlap() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        state.setTargetGpu("a100-pcie-80gb");  // priced, so on the scatter
        state.waitForPredictions();            // predicted on the worker (a slow build shows the old target)
        GpuView view(state);
        view.resize(700, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        for (const QSize size : {QSize(700, 600), QSize(1400, 900)}) {
            view.resize(size);
            QCoreApplication::processEvents();
            view.scatter()->replot();
            const QVector<QCPItemText*>& labels = view.scatterLabels();
            QCOMPARE(labels.size(), view.scatterPoints());
            QVERIFY(labels.size() >= 3);
            QVector<QRectF> shown;
            for (QCPItemText* label : labels)
                if (label->visible())
                    shown << QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition()).normalized();
            QVERIFY(shown.size() >= 3);
            for (int i = 0; i < shown.size(); ++i)
                for (int j = i + 1; j < shown.size(); ++j)
                    QVERIFY2(!shown[i].intersects(shown[j]), qPrintable(QString("labels %1 and %2 overlap at %3x%4")
                                                                            .arg(i)
                                                                            .arg(j)
                                                                            .arg(size.width())
                                                                            .arg(size.height())));
            const QString target = QString::fromStdString(state.database().get(state.settings().gpuId).name);
            QVERIFY(labels.first()->visible());
            QVERIFY2(target.endsWith(labels.first()->text().trimmed()), qPrintable(labels.first()->text()));
            // Over a point, shown label or not, the tooltip names its GPU.
            for (QCPItemText* label : {labels.first(), labels.last()}) {
                QTest::mouseMove(view.scatter(), label->position->pixelPosition().toPoint());
                QVERIFY2(view.scatter()->toolTip().contains(label->text().trimmed()),
                         qPrintable(view.scatter()->toolTip()));
            }
        }
    }

    // The pass selector puts every layer's backward pass on the roofline: at its backward FLOPs
    // per backward DRAM byte, against the FLOP/s its predicted backward time gives.
    void rooflineShowsEitherPass() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        RooflineView view(state);
        view.resize(800, 600);
        view.plot()->replot();
        const int forwardPoints = view.pointCount();
        QVERIFY(forwardPoints > 5);
        view.passSelector()->setCurrentIndex(1);
        view.plot()->replot();
        const LayerFigureTable table = computeLayerFigures(*state.snapshot());
        int expected = 0, differing = 0;
        for (const LayerFigures& f : table.layers) {
            const PassFigures& b = f.backward;
            const bool shown = b.flops > 0 && b.bytes > 0 && b.achievedFlopsPerS > 0;
            QCOMPARE(view.pointPixel(f.op).x() >= 0, shown);
            if (!shown) continue;
            ++expected;
            QCOMPARE(b.achievedFlopsPerS, b.flops / (f.backwardMs * 1e-3));
            const QPointF pixel = view.pointPixel(f.op);
            QVERIFY(std::abs(pixel.x() - view.plot()->xAxis->coordToPixel(b.flops / b.bytes)) < 0.5);
            QVERIFY(std::abs(pixel.y() - view.plot()->yAxis->coordToPixel(b.achievedFlopsPerS)) < 0.5);
            if (std::abs(b.flops / b.bytes - f.intensity) > 1e-6 * f.intensity) ++differing;
        }
        QCOMPARE(view.pointCount(), expected);
        QVERIFY(expected > 5);
        QVERIFY(differing > 0);  // not the forward points again
        QVERIFY(view.plot()->xAxis->label().contains("backward"));
        view.passSelector()->setCurrentIndex(0);
        QCOMPARE(view.pointCount(), forwardPoints);
    }

    // The module tree's activations are the memory model's at the precision shown (the CLI's "activations"
    // without checkpointing), not the graph's fp32 tensors: halved, nearly, by a 16-bit precision.
    void moduleActivationsFollowThePrecision() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        ModuleTreeView view(state);
        view.show();  // a view not shown waits to refresh
        auto rootActivations = [&] {
            return view.model()->data(view.model()->index(0, ModuleTreeModel::ActivationMb), ModuleTreeModel::SortRole)
                .toDouble();
        };
        state.setPrecision(ts::predictors::TrainingPrecision::Fp32);
        state.waitForPredictions();
        QCoreApplication::processEvents();  // the tree refreshes on the snapshot's signal
        const double fp32 = rootActivations();
        QVERIFY(fp32 > 0);
        QVERIFY(std::abs(fp32 - state.snapshot()->current.memory.activations) <= 1e-9 * fp32);
        state.setPrecision(ts::predictors::TrainingPrecision::Bf16Params);
        state.waitForPredictions();
        QCoreApplication::processEvents();  // the tree refreshes on the snapshot's signal
        const double bf16 = rootActivations();
        QVERIFY2(
            std::abs(bf16 - state.snapshot()->current.memory.activations) <= 1e-9 * bf16,
            qPrintable(QString("%1 shown, %2 predicted").arg(bf16).arg(state.snapshot()->current.memory.activations)));
        QVERIFY2(bf16 < 0.6 * fp32 && bf16 > 0.4 * fp32, qPrintable(QString("%1 vs %2").arg(bf16).arg(fp32)));
    }

    void moduleFilterKeepsMatchingRows() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        ModuleTreeView view(state);
        view.filter()->setText("conv");
        QStringList leaves;
        collectLeaves(*view.proxy(), {}, leaves);
        QVERIFY(!leaves.isEmpty());
        for (const QString& leaf : leaves) QVERIFY2(leaf.contains("conv", Qt::CaseInsensitive), qPrintable(leaf));
        QCOMPARE(leaves.size(), sourceLeavesMatching(*view.model(), {}, "conv"));
        view.filter()->setText("no-such-layer");
        QCOMPARE(view.proxy()->rowCount(), 0);
        view.filter()->clear();
        QCOMPARE(view.proxy()->rowCount(), 1);
    }

    void backgroundViewsWaitUntilShown() {
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        showOffscreen(window, View::Overview);
        auto* roofline = window.viewWidget(View::Roofline);
        auto* refresher = roofline->findChild<ViewRefresher*>();
        QVERIFY(refresher);
        QVERIFY(!refresher->stale());
        state.setBatch(state.settings().batch * 2);
        QVERIFY(refresher->stale());  // hidden: no work yet
        showOffscreen(window, View::Roofline);
        QVERIFY(!refresher->stale());
    }

    void everyViewDraws_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"overview", "batch", "gpus", "modules", "roofline", "timeline"})
            QTest::newRow(name) << QString(name);
    }

    void everyViewDraws() {
        QFETCH(QString, name);
        ExplorerState state;
        QVERIFY2(state.openModel(kModel), qPrintable(state.error()));
        MainWindow window(state);
        const std::optional<View> view = parseView(name);
        QVERIFY(view);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString file = dir.filePath(name + ".png");
        QVERIFY(saveScreenshot(window, *view, file));
        QVERIFY(!QImage(file).isNull());
        for (QCustomPlot* plot : window.viewWidget(*view)->findChildren<QCustomPlot*>()) plot->replot();
        const QImage image = window.viewWidget(*view)->grab().toImage();
        QHash<QRgb, int> counts;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x) ++counts[image.pixel(x, y)];
        int background = 0;
        for (int n : counts) background = std::max(background, n);
        const double foreground = 1.0 - double(background) / (image.width() * image.height());
        QVERIFY2(counts.size() >= 6, qPrintable(QString("%1 colours").arg(counts.size())));
        QVERIFY2(foreground > 0.02, qPrintable(QString("%1 of the pixels drawn").arg(foreground)));
    }
};

QTEST_MAIN(ViewsTest)
#include "test_views.moc"
