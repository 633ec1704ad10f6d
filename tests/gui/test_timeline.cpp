// The Timeline of a model's iteration: the layout worked by hand on a three-layer prediction (the
// host's dispatch, the GPU waiting for it, checkpointing's recomputation, the gradient buckets'
// all-reduces and the step waiting for the last, measured kernels under their layer), and the view
// on a real model: labelled blocks of every pass, each lane, tooltips, zoom, pan and selection.
#include <QSet>
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "explorer_state.h"
#include "iteration_timeline.h"
#include "main_window.h"
#include "timeline_view.h"

using namespace ts;
using namespace ts::gui;
using namespace ts::predictors;

namespace {

constexpr double kEps = 1e-9;

// Three layers "enc.a", "enc.b", "head.c": GPU forward 0.5, 2 and 0.5 ms, each dispatched in 1 ms;
// backward 1 ms each on the GPU, 0.2 ms on the host; the step 0.3 ms on the GPU, 0.1 on the host.
struct ThreeLayers {
    Graph graph;
    TrainingPrediction p;
    ThreeLayers() {
        for (const char* name : {"enc.a/Gemm", "enc.b/Gemm", "head.c/Gemm"}) {
            Operation op;
            op.type = "Gemm";
            op.name = name;
            op.modulePath = std::string(name).substr(0, std::string(name).find('/'));
            graph.ops.push_back(op);
        }
        const double forward[] = {0.5, 2, 0.5};
        for (int i = 0; i < 3; ++i) {
            LayerTime l;
            l.op = i;
            l.forwardMs = Interval::exact(forward[i]);
            l.backwardMs = Interval::exact(1);
            l.hostForwardMs = 1;
            l.hostBackwardMs = 0.2;
            p.layers.push_back(l);
        }
        p.optimizerMs = Interval::exact(0.3);
        p.layout.optimizerHostMs = 0.1;
    }
};

// The blocks of one lane, in time order.
std::vector<IterationBlock> lane(const IterationTimeline& t, IterationLane which) {
    std::vector<IterationBlock> out;
    for (const IterationBlock& b : t.blocks)
        if (b.lane == which) out.push_back(b);
    return out;
}

void expectBlocks(const std::vector<IterationBlock>& blocks,
                  const std::vector<std::tuple<IterationPass, std::string, double, double>>& expected) {
    QCOMPARE(blocks.size(), expected.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
        const auto& [pass, label, start, end] = expected[i];
        QVERIFY2(blocks[i].pass == pass && blocks[i].label == label && std::abs(blocks[i].startMs - start) < kEps &&
                     std::abs(blocks[i].startMs + blocks[i].ms - end) < kEps,
                 qPrintable(QString("block %1: %2 %3-%4")
                                .arg(i)
                                .arg(QString::fromStdString(blocks[i].label))
                                .arg(blocks[i].startMs)
                                .arg(blocks[i].startMs + blocks[i].ms)));
    }
}

using P = IterationPass;

}  // namespace

class TimelineTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // By hand: the host dispatches a, b, c at 0, 1, 2 ms; the GPU runs a 0-0.5, waits for b's
    // dispatch (0.5-1: host-bound), runs b 1-3 and c 3-3.5. Backward is dispatched at 3, 3.2, 3.4
    // and runs 3.5-4.5, 4.5-5.5, 5.5-6.5; the step, dispatched at 3.6, runs 6.5-6.8.
    void layOutFollowsTheHostAndTheGpu() {
        ThreeLayers m;
        const IterationTimeline t = layOutIteration(m.p, m.graph, {0}, {}, nullptr);
        expectBlocks(lane(t, IterationLane::Host), {{P::Forward, "a", 0, 1},
                                                    {P::Forward, "b", 1, 2},
                                                    {P::Forward, "c", 2, 3},
                                                    {P::Backward, "c", 3, 3.2},
                                                    {P::Backward, "b", 3.2, 3.4},
                                                    {P::Backward, "a", 3.4, 3.6},
                                                    {P::Optimizer, "optimizer step", 3.6, 3.7}});
        expectBlocks(lane(t, IterationLane::Gpu), {{P::Forward, "a", 0, 0.5},
                                                   {P::Forward, "b", 1, 3},
                                                   {P::Forward, "c", 3, 3.5},
                                                   {P::Backward, "c", 3.5, 4.5},
                                                   {P::Backward, "b", 4.5, 5.5},
                                                   {P::Backward, "a", 5.5, 6.5},
                                                   {P::Optimizer, "optimizer step", 6.5, 6.8}});
        QCOMPARE(t.hostBound.size(), size_t(1));
        QVERIFY(std::abs(t.hostBound[0].startMs - 0.5) < kEps && std::abs(t.hostBound[0].ms - 0.5) < kEps);
        QVERIFY(t.commWaits.empty());
        QVERIFY(std::abs(t.endMs - 6.8) < kEps);
        QVERIFY(!t.kernels && !t.communication);
        // Grouped as a trace viewer nests scopes: the passes; the modules "enc" and "head" (the first
        // depth that splits the model). A lane of "enc.a", "enc.b", "head.c" would repeat the layers
        // one run per operation: there is none.
        expectBlocks(lane(t, IterationLane::Passes), {{P::Forward, "forward", 0, 3.5},
                                                      {P::Backward, "backward", 3.5, 6.5},
                                                      {P::Optimizer, "optimizer step", 6.5, 6.8}});
        expectBlocks(lane(t, IterationLane::Modules), {{P::Forward, "enc", 0, 3},
                                                       {P::Forward, "head", 3, 3.5},
                                                       {P::Backward, "head", 3.5, 4.5},
                                                       {P::Backward, "enc", 4.5, 6.5}});
        QVERIFY(lane(t, IterationLane::Blocks).empty());
        QVERIFY(t.moduleLane && !t.blockLane);
    }

    // Checkpointing in two segments, {a, b} and {c}: c's backward first (3.5-4.5), then a and b run
    // forward again (dispatched at 3.2 and 4.2: 4.5-5 and 5-7), then b's and a's backward (7-8,
    // 8-9) and the step (9-9.3).
    void checkpointingRecomputesASegmentBeforeItsBackward() {
        ThreeLayers m;
        m.p.scenario.checkpointing = Checkpointing::Sqrt;
        const IterationTimeline t = layOutIteration(m.p, m.graph, {0, 2}, {1, 1, 0}, nullptr);
        expectBlocks(lane(t, IterationLane::Gpu), {{P::Forward, "a", 0, 0.5},
                                                   {P::Forward, "b", 1, 3},
                                                   {P::Forward, "c", 3, 3.5},
                                                   {P::Backward, "c", 3.5, 4.5},
                                                   {P::Recompute, "a", 4.5, 5},
                                                   {P::Recompute, "b", 5, 7},
                                                   {P::Backward, "b", 7, 8},
                                                   {P::Backward, "a", 8, 9},
                                                   {P::Optimizer, "optimizer step", 9, 9.3}});
        QVERIFY(std::abs(t.endMs - 9.3) < kEps);
    }

    // Two buckets: {c} (0.8 ms) ready when c's backward ends at 4.5, all-reduced 4.5-5.3; {a, b}
    // (0.5 ms) ready at 6.5, all-reduced 6.5-7; the step waits for it: 7-7.3.
    void theStepWaitsForTheLastBucketsAllReduce() {
        ThreeLayers m;
        m.p.scenario.dataParallel.gpus = 2;
        m.p.layout.buckets = {{2, 0.8}, {0, 0.5}};
        m.p.communicationMs = Interval::exact(0.5);  // the exposed part, as the model predicts it
        const IterationTimeline t = layOutIteration(m.p, m.graph, {0}, {}, nullptr);
        QVERIFY(t.communication);
        expectBlocks(lane(t, IterationLane::Communication),
                     {{P::Communication, "all-reduce 1/2", 4.5, 5.3}, {P::Communication, "all-reduce 2/2", 6.5, 7}});
        const std::vector<IterationBlock> gpu = lane(t, IterationLane::Gpu);
        QCOMPARE(gpu.back().pass, P::Optimizer);
        QVERIFY(std::abs(gpu.back().startMs - 7) < kEps);
        QCOMPARE(t.commWaits.size(), size_t(1));
        QVERIFY(std::abs(t.commWaits[0].startMs - 6.5) < kEps && std::abs(t.commWaits[0].ms - 0.5) < kEps);
        QVERIFY(std::abs(t.endMs - 7.3) < kEps);
    }

    // The same with the wait for the slowest GPU (0.4 ms): the iteration's last block, after the step.
    void theSlowestGpusWaitEndsTheIteration() {
        ThreeLayers m;
        m.p.scenario.dataParallel.gpus = 2;
        m.p.layout.buckets = {{2, 0.8}, {0, 0.5}};
        m.p.communicationMs = Interval::exact(0.5);
        m.p.slowestGpuWaitMs = Interval::exact(0.4);
        const IterationTimeline t = layOutIteration(m.p, m.graph, {0}, {}, nullptr);
        expectBlocks(lane(t, IterationLane::Communication), {{P::Communication, "all-reduce 1/2", 4.5, 5.3},
                                                              {P::Communication, "all-reduce 2/2", 6.5, 7},
                                                              {P::Communication, "waiting for the slowest GPU", 7.3, 7.7}});
        QVERIFY(std::abs(t.endMs - 7.7) < kEps);
    }

    // b's forward measured as two kernels of 30 and 10 us: they fill its 1-3 ms block 3:1.
    void measuredKernelsSitUnderTheirLayer() {
        ThreeLayers m;
        ProfileRun run;
        LayerProfile b;
        b.op = 1;
        KernelRecord k1, k2;
        k1.name = "sgemm";
        k1.durationUs = 30;
        k1.tensorCore = true;
        k2.name = "bias_add";
        k2.durationUs = 10;
        k2.launches = 2;
        b.forwardKernels = {k1, k2};
        run.layers = {b};
        const IterationTimeline t = layOutIteration(m.p, m.graph, {0}, {}, &run);
        QVERIFY(t.kernels);
        expectBlocks(lane(t, IterationLane::Kernels),
                     {{P::Kernel, "sgemm (tensor cores)", 1, 2.5}, {P::Kernel, "bias_add \u00d72", 2.5, 3}});
        for (const IterationBlock& k : lane(t, IterationLane::Kernels)) QCOMPARE(k.op, 1);
    }

    // On ResNet-18: the GPU lane holds every layer's forward and backward, named, and the step; the
    // host lane their dispatch; the GPU blocks' forward time is the predictor's; checkpointing adds
    // recomputation, two GPUs a communication lane of all-reduces.
    void theViewShowsLabelledBlocksForEveryPass() {
        ExplorerState state;
        QVERIFY2(state.openModel("zoo:resnet18"), qPrintable(state.error()));
        MainWindow window(state);
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.resize(1400, 900);
        window.show();
        window.showView(View::Timeline);
        QApplication::processEvents();
        auto* view = qobject_cast<TimelineView*>(window.viewWidget(View::Timeline));
        QVERIFY(view);
        IterationTimelineCanvas* canvas = view->canvas();
        auto passes = [&](IterationLane which) {
            QSet<int> seen;
            for (const IterationBlock& b : canvas->iteration().blocks)
                if (b.lane == which) seen.insert(int(b.pass));
            return seen;
        };
        QCOMPARE(passes(IterationLane::Gpu), (QSet<int>{int(P::Forward), int(P::Backward), int(P::Optimizer)}));
        QCOMPARE(passes(IterationLane::Host), passes(IterationLane::Gpu));
        const TrainingPrediction& p = state.current();
        double forward = 0, backward = 0;
        int named = 0;
        for (const IterationBlock& b : canvas->iteration().blocks) {
            if (b.lane != IterationLane::Gpu) continue;
            if (b.pass == P::Forward) forward += b.ms;
            if (b.pass == P::Backward) backward += b.ms;
            if (b.op >= 0) {
                QCOMPARE(b.label, shortOpName(*state.graph(), b.op));
                named += !b.label.empty();
            }
        }
        QVERIFY(std::abs(forward - p.forwardMs.value) < 1e-6 * p.forwardMs.value);
        QVERIFY(std::abs(backward - p.backwardMs.value) < 1e-6 * p.backwardMs.value);
        QVERIFY(named > 40);
        // Every block of the picture is the iteration's, coloured by its pass.
        const std::vector<TimelineBlock>& blocks = canvas->picture().blocks;
        const int gpuLane = canvas->laneOf(IterationLane::Gpu);
        QVERIFY(std::any_of(blocks.begin(), blocks.end(), [&](const TimelineBlock& b) {
            return b.lane == gpuLane && b.label == "conv1" && b.color == passColor(P::Forward);
        }));
        QVERIFY(view->headline().contains(QString::fromStdString(p.gpuName)));

        // A block's tooltip gives the operation's whole name, its pass and time.
        const auto conv = std::find_if(blocks.begin(), blocks.end(),
                                       [&](const TimelineBlock& b) { return b.lane == gpuLane && b.label == "conv1"; });
        const QString tip = canvas->toolTipAt(canvas->blockRect(*conv).center());
        QVERIFY2(
            tip.contains(QString::fromStdString(state.graph()->ops[size_t(conv->key)].name)) && tip.contains("forward"),
            qPrintable(tip));

        // Dragging pans (after a zoom) and selects nothing.
        const QPointF at = canvas->blockRect(*conv).center();
        QWheelEvent wheel(at, canvas->mapToGlobal(at), {}, {0, 960}, Qt::NoButton, {}, Qt::NoScrollPhase, false);
        QApplication::sendEvent(canvas, &wheel);
        const double start = canvas->viewStartMs();
        const QPoint from = canvas->rect().center();
        QTest::mousePress(canvas, Qt::LeftButton, {}, from);
        QMouseEvent move(QEvent::MouseMove, QPointF(from - QPoint(200, 0)), canvas->mapToGlobal(QPointF(from)),
                         Qt::NoButton, Qt::LeftButton, {});
        QApplication::sendEvent(canvas, &move);
        QTest::mouseRelease(canvas, Qt::LeftButton, {}, from - QPoint(200, 0));
        QVERIFY(canvas->viewStartMs() > start);
        QCOMPARE(state.selectedOp(), -1);

        // Checkpointing: recomputation on the GPU. Two GPUs: all-reduces on their own lane.
        state.setCheckpointing(Checkpointing::SelectiveOps);
        state.waitForPredictions();  // predicted on the worker; the view follows the published snapshot
        QApplication::processEvents();
        QVERIFY(passes(IterationLane::Gpu).contains(int(P::Recompute)));
        state.setGpuCount(2);
        state.waitForPredictions();
        QApplication::processEvents();
        QVERIFY(canvas->laneOf(IterationLane::Communication) >= 0);
        const std::vector<IterationBlock> comm = [&] {
            std::vector<IterationBlock> out;
            for (const IterationBlock& b : canvas->iteration().blocks)
                if (b.lane == IterationLane::Communication) out.push_back(b);
            return out;
        }();
        QVERIFY(!comm.empty());
        QVERIFY(QString::fromStdString(comm.front().label).startsWith("all-reduce"));
    }
};

QTEST_MAIN(TimelineTest)
#include "test_timeline.moc"
