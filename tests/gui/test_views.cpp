// The explorer's views: their item models pass Qt's model checks, a layer selected in one view is
// selected in the others, the memory bar adds up to the peak, the module map follows another graph of
// the model, scatter labels do not overlap, the roofline shows either pass, the module filter keeps
// what matches, views in background tabs wait until shown, and every view draws. What the views set
// (the batch by dragging, the goal, prices) is test_view_controls.cpp's.
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

#include "breakdown_bar.h"
#include "explorer_state.h"
#include "gpu_table_model.h"
#include "gpu_view.h"
#include "layer_figures.h"
#include "main_window.h"
#include "module_tree_model.h"
#include "module_tree_view.h"
#include "offscreen_window.h"
#include "overview_view.h"
#include "roofline_view.h"
#include "screenshot.h"
#include "timeline_view.h"
#include "view_refresher.h"

using namespace ts::gui;
using guitest::showOffscreen;

namespace {

const char* kModel = "zoo:resnet18";  // small and quick to analyse

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
                // The move sent to the plot itself: QTest::mouseMove goes through the window system,
                // whose idea of the window under the cursor an earlier test's offscreen window can hold.
                const QPointF at = label->position->pixelPosition();
                QMouseEvent move(QEvent::MouseMove, at, view.scatter()->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                                 Qt::NoModifier);
                QApplication::sendEvent(view.scatter(), &move);
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
