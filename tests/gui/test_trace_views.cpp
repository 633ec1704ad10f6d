// The explorer's views of a PyTorch profiler trace, on a hand-built trace whose figures are counted
// by hand (tests/data/traces/gpu_tiny_two_streams.json: an A100, three ProfilerSteps of 120, 100 and
// 80 us, kernels on streams 7 and 13, a copy, a set and an all-reduce): the Timeline's rows and
// bars at the file's times, the idle and host-bound stretches, every step's figures, the operators
// and module scopes, the predictions on every GPU, and the views that have nothing for a trace
// saying why.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>
#include <fstream>

#include "batch_plot_view.h"
#include "breakdown_bar.h"
#include "explorer_state.h"
#include "file_read_progress.h"
#include "main_window.h"
#include "offscreen_window.h"
#include "trace_gpu_view.h"
#include "trace_modules_view.h"
#include "trace_overview_view.h"
#include "trace_style.h"
#include "trace_timeline_canvas.h"
#include "trace_timeline_view.h"

using namespace ts::gui;
using guitest::showOffscreen;

namespace {

const char* kTinyGpuTrace = TRAINSCOPE_TEST_DATA_DIR "/traces/gpu_tiny_two_streams.json";
const char* kCpuTrace = TRAINSCOPE_TEST_DATA_DIR "/traces/cpu_cnn_stack.json.gz";
constexpr double kEps = 1e-9;

// The row of `model` (under `parent`) whose first column reads `name`.
int rowNamed(const QAbstractItemModel& model, const QString& name, const QModelIndex& parent = {}) {
    for (int row = 0; row < model.rowCount(parent); ++row)
        if (model.index(row, 0, parent).data().toString().startsWith(name)) return row;
    return -1;
}

double figure(const QAbstractItemModel& model, int row, int column, const QModelIndex& parent = {}) {
    return model.index(row, column, parent).data(kSortRole).toDouble();
}

}  // namespace

class TraceViewTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void timelineShowsTheMedianStepAtTheFilesTimes() {
        ExplorerState state;
        QVERIFY2(state.openModel(kTinyGpuTrace), qPrintable(state.error()));
        QVERIFY(state.hasTrace());
        QVERIFY(!state.hasModel());
        MainWindow window(state);
        showOffscreen(window, View::Timeline);
        auto* view = qobject_cast<TraceTimelineView*>(window.viewWidget(View::Timeline));
        QVERIFY(view);
        // Steps of 120, 100 and 80 us: the median is the second, ProfilerStep#2.
        QCOMPARE(view->stepSelector()->count(), 3);
        QCOMPARE(view->stepSelector()->currentIndex(), 1);
        const TraceTimeline& t = view->canvas()->timeline();
        QCOMPARE(t.number, int64_t(2));
        QCOMPARE(int(t.rows.size()), 3);
        QCOMPARE(QString::fromStdString(t.rows[0].label), QString("thread 1"));
        QCOMPARE(QString::fromStdString(t.rows[1].label), QString("GPU stream 7"));
        QCOMPARE(QString::fromStdString(t.rows[2].label), QString("GPU stream 13"));
        // From the step's start (1120 us): mm 1130+20, allreduce_ 1160+10, add_ 1180+10 on the host;
        // the GEMM 1135+30 and the add 1185+10 on stream 7, the all-reduce 1170+40 on stream 13.
        const double expected[][3] = {{0, 0.010, 0.020}, {0, 0.040, 0.010}, {0, 0.060, 0.010},
                                      {1, 0.015, 0.030}, {1, 0.065, 0.010}, {2, 0.050, 0.040}};
        QCOMPARE(int(t.bars.size()), 6);
        for (size_t i = 0; i < t.bars.size(); ++i) {
            QCOMPARE(t.bars[i].row, int(expected[i][0]));
            QVERIFY(std::abs(t.bars[i].startMs - expected[i][1]) < kEps);
            QVERIFY(std::abs(t.bars[i].ms - expected[i][2]) < kEps);
        }
        QVERIFY(std::abs(t.spanMs - 0.100) < kEps);
        // Busy 15-45 and 50-90 us: idle 0-15, 45-50 and 90-100; the first and the last waited for
        // the host (the GEMM was launched at 12 us; nothing follows the all-reduce), the middle
        // one did not (the all-reduce had been launched at 42 us).
        const double idle[][2] = {{0, 0.015}, {0.045, 0.005}, {0.090, 0.010}};
        QCOMPARE(int(t.idle.size()), 3);
        for (size_t i = 0; i < 3; ++i) {
            QVERIFY(std::abs(t.idle[i].startMs - idle[i][0]) < kEps);
            QVERIFY(std::abs(t.idle[i].ms - idle[i][1]) < kEps);
        }
        QCOMPARE(int(t.hostBound.size()), 2);
        QVERIFY(std::abs(t.hostBound[0].startMs - 0) < kEps && std::abs(t.hostBound[0].ms - 0.015) < kEps);
        QVERIFY(std::abs(t.hostBound[1].startMs - 0.090) < kEps && std::abs(t.hostBound[1].ms - 0.010) < kEps);

        // Hovering the GEMM tells its name, duration, launch and operator.
        TraceTimelineCanvas* canvas = view->canvas();
        const QString tip = canvas->toolTipAt(canvas->barRect(t.bars[3]).center());
        for (const char* part : {"ampere_sgemm_64x32_sliced1x4_nn", "gemm on stream 7", "30.0 µs", "grid 8×2×1",
                                 "block 256×1×1", "90 registers", "launched by aten::mm in backward"})
            QVERIFY2(tip.contains(QString::fromUtf8(part)), qPrintable(tip));
        QVERIFY(canvas->toolTipAt(QPointF(canvas->barRect(t.bars[5]).left() - 2, canvas->rowRect(-1).center().y()))
                    .contains("GPU idle"));

        // The wheel zooms about the mouse.
        const double whole = canvas->viewMs();
        QWheelEvent wheel(canvas->barRect(t.bars[3]).center(), canvas->mapToGlobal(QPoint(100, 60)), QPoint(),
                          QPoint(0, 480), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(canvas, &wheel);
        QVERIFY(canvas->viewMs() < whole / 1.5);

        // Another step: ProfilerStep#1, its copy on stream 13 and 70 us host-bound (0-30, 80-120).
        view->stepSelector()->setCurrentIndex(0);
        const TraceTimeline& first = view->canvas()->timeline();
        QCOMPARE(first.number, int64_t(1));
        QCOMPARE(int(first.bars.size()), 6);
        QVERIFY(std::abs(first.spanMs - 0.120) < kEps);
        QCOMPARE(int(first.hostBound.size()), 2);
        QVERIFY(std::abs(first.hostBound[0].ms + first.hostBound[1].ms - 0.070) < kEps);
        QCOMPARE(canvas->viewMs(), first.spanMs);  // a new step starts unzoomed
    }

    void overviewShowsEveryStepsFiguresAndTheOperators() {
        ExplorerState state;
        QVERIFY(state.openModel(kTinyGpuTrace));
        MainWindow window(state);
        showOffscreen(window, View::Overview);
        auto* view = qobject_cast<TraceOverviewView*>(window.viewWidget(View::Overview));
        QVERIFY(view);
        QVERIFY2(view->title().contains("NVIDIA A100-SXM4-80GB") && view->title().contains("a100-sxm4-80gb"),
                 qPrintable(view->title()));
        const QStandardItemModel& steps = *view->stepModel();
        QCOMPARE(steps.rowCount(), 3);
        // host, window, busy, idle, communication, exposed, host-bound (ms) and activities, by hand.
        const double expected[][8] = {{0.120, 0.120, 0.040, 0.080, 0, 0, 0.070, 3},
                                      {0.100, 0.100, 0.070, 0.030, 0.040, 0.030, 0.025, 3},
                                      {0.080, 0.080, 0.005, 0.075, 0, 0, 0.075, 1}};
        for (int row = 0; row < 3; ++row)
            for (int c = 0; c < 8; ++c)
                QVERIFY2(std::abs(figure(steps, row, c + 1) - expected[row][c]) < kEps,
                         qPrintable(QString("step %1, column %2").arg(row + 1).arg(c + 1)));
        QVERIFY(steps.item(1, 0)->text().contains("median"));

        // The median step's bar: compute 0.070 - 0.030 exposed, exposed 0.030, host-bound 0.025, other idle 0.005.
        const QVector<BreakdownBar::Segment>& bar = view->stepBar()->segments();
        QCOMPARE(bar.size(), 4);
        const double parts[] = {0.040, 0.030, 0.025, 0.005};
        for (int i = 0; i < 4; ++i) QVERIFY(std::abs(bar[i].value - parts[i]) < kEps);
        // GPU time per step by class: gemm (20 + 30 us) / 3 first, then nccl 40 / 3; five classes.
        const QVector<BreakdownBar::Segment>& classes = view->classBar()->segments();
        QCOMPARE(classes.size(), 5);
        QVERIFY(classes[0].label.startsWith("gemm") && std::abs(classes[0].value - 0.050 / 3) < kEps);
        QVERIFY(classes[1].label.startsWith("nccl") && std::abs(classes[1].value - 0.040 / 3) < kEps);

        const QStandardItemModel& ops = *view->operatorModel();
        const int mm = rowNamed(ops, "aten::mm");
        QVERIFY(mm >= 0);
        QVERIFY(std::abs(figure(ops, mm, TraceOverviewView::GpuMs) - 0.030 / 3) < kEps);
        QVERIFY(std::abs(figure(ops, mm, TraceOverviewView::CpuMs) - 0.020 / 3) < kEps);
        const int allreduce = rowNamed(ops, "c10d::allreduce_");
        QVERIFY(std::abs(figure(ops, allreduce, TraceOverviewView::GpuMs) - 0.040 / 3) < kEps);
    }

    void modulesShowTheScopesWithTheirOperators() {
        ExplorerState state;
        MainWindow window(state);
        auto* page = qobject_cast<QStackedWidget*>(window.viewWidget(View::Modules)->parentWidget());
        QVERIFY(page);
        auto* view = qobject_cast<TraceModulesView*>(page->widget(1));
        QVERIFY(view);
        QAbstractItemModelTester tester(view->tree()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(state.openModel(kTinyGpuTrace));
        showOffscreen(window, View::Modules);
        QCOMPARE(window.viewWidget(View::Modules), static_cast<QWidget*>(view));
        const QStandardItemModel& m = *view->model();
        // Top level: the scopes forward and backward, and aten::zero_ outside every scope.
        QCOMPARE(m.rowCount(), 3);
        const int forward = rowNamed(m, "forward"), backward = rowNamed(m, "backward");
        QVERIFY(forward >= 0 && backward >= 0 && rowNamed(m, "aten::zero_") >= 0);
        const QModelIndex fwd = m.index(forward, 0);
        // forward: the Linear_0 scope (aten::linear, whose addmm launched the 20 us GEMM), relu, copy_.
        QCOMPARE(m.rowCount(fwd), 3);
        QVERIFY(std::abs(figure(m, forward, TraceModulesView::GpuMs) - (0.020 + 0.010 + 0.015) / 3) < kEps);
        const int linearScope = rowNamed(m, "Linear_0", fwd);
        QVERIFY(linearScope >= 0);
        const QModelIndex linear = m.index(linearScope, 0, fwd);
        QCOMPARE(m.index(0, 0, linear).data().toString(), QString("aten::linear"));
        QVERIFY(std::abs(figure(m, 0, TraceModulesView::GpuMs, linear) - 0.020 / 3) < kEps);
        QVERIFY(std::abs(figure(m, 0, TraceModulesView::CpuMs, linear) - 0.030 / 3) < kEps);
        QVERIFY(std::abs(figure(m, backward, TraceModulesView::GpuMs) - (0.030 + 0.040 + 0.010) / 3) < kEps);
        QVERIFY(std::abs(figure(m, backward, TraceModulesView::Calls) - 1.0) < kEps);  // 3 operators in 3 steps
        // The filter keeps the matching operator and the scopes above it.
        view->filter()->setText("addmm");
        QCOMPARE(view->tree()->model()->rowCount(), 0);  // addmm is inside linear: not a top-level row
        view->filter()->setText("relu");
        QCOMPARE(view->tree()->model()->rowCount(), 1);
    }

    void gpusListThePredictedMedianStepOnEveryGpu() {
        ExplorerState state;
        QVERIFY(state.openModel(kTinyGpuTrace));
        QVERIFY(state.tracePredictions() && state.tracePredictions()->complete);
        MainWindow window(state);
        state.setTargetGpu("a100-sxm4-80gb");
        state.waitForPredictions();
        showOffscreen(window, View::Gpus);
        auto* view = qobject_cast<TraceGpuView*>(window.viewWidget(View::Gpus));
        QVERIFY(view);
        const QStandardItemModel& gpus = *view->gpuModel();
        QCOMPARE(gpus.rowCount(), int(state.database().gpus().size()));
        // On its own GPU the replay gives back the measured steps: 120, 100 and 80 us, median 100.
        int own = -1;
        for (int row = 0; row < gpus.rowCount(); ++row)
            if (gpus.index(row, 0).data(TraceGpuView::kGpuIdRole).toString() == "a100-sxm4-80gb") own = row;
        QVERIFY(own >= 0);
        QVERIFY(std::abs(figure(gpus, own, TraceGpuView::PredictedMs) - 0.100) < 1e-6);
        QVERIFY(std::abs(figure(gpus, own, TraceGpuView::SpeedUp) - 1.0) < 1e-6);
        QVERIFY(view->caption().contains(QString::fromUtf8("measured on NVIDIA A100-SXM4-80GB: 100 µs")));
        // The target's kernel classes, measured per step: gemm (20 + 30) / 3 us, nccl 40 / 3.
        const QStandardItemModel& classes = *view->classModel();
        QCOMPARE(classes.rowCount(), 5);
        const int gemm = rowNamed(classes, "gemm");
        QVERIFY(std::abs(figure(classes, gemm, TraceGpuView::MeasuredMs) - 0.050 / 3) < 1e-6);
        QVERIFY(std::abs(figure(classes, gemm, TraceGpuView::ClassPredictedMs) - 0.050 / 3) < 1e-6);
        // A faster GPU predicts a shorter GEMM time; a click on its row makes it the target.
        auto* table = view->findChild<QTreeView*>("traceGpuTable");
        QVERIFY(table);
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            const QModelIndex index = table->model()->index(row, 0);
            if (index.data(TraceGpuView::kGpuIdRole).toString() == "h100-sxm") Q_EMIT table->clicked(index);
        }
        QCOMPARE(state.settings().gpuId, std::string("h100-sxm"));
        const int h100Gemm = rowNamed(*view->classModel(), "gemm");
        QVERIFY(figure(*view->classModel(), h100Gemm, TraceGpuView::ClassPredictedMs) < 0.050 / 3);
    }

    void viewsWithNothingForATraceSayWhyAndAModelBringsThemBack() {
        ExplorerState state;
        QVERIFY(state.openModel(kTinyGpuTrace));
        MainWindow window(state);
        showOffscreen(window, View::BatchPlot);
        auto* batch = window.viewWidget(View::BatchPlot)->findChild<QLabel*>("traceMessage");
        QVERIFY(batch && batch->text().contains("records one batch size"));
        showOffscreen(window, View::Roofline);
        auto* roofline = window.viewWidget(View::Roofline)->findChild<QLabel*>("traceMessage");
        QVERIFY(roofline && roofline->text().contains("holds no model graph"));
        QVERIFY(state.openModel("zoo:resnet18"));
        QVERIFY(!state.hasTrace());
        QVERIFY(qobject_cast<BatchPlotView*>(window.viewWidget(View::BatchPlot)));
        QVERIFY(window.batchSpin()->isEnabled());
    }

    // The linear's input [4, 8] gives the batch, 4: the batch control shows it and, set to 8, the
    // trace is predicted again at 8 on every GPU; fp8 cannot be asked of a trace, and every GPU says
    // why. A CPU-only trace (nothing to predict) keeps both controls off.
    void batchAndPrecisionControlsPredictATraceAgainWhereItRecordedShapes() {
        ExplorerState state;
        QVERIFY(state.openModel(kTinyGpuTrace));
        MainWindow window(state);
        showOffscreen(window, View::Gpus);
        QVERIFY(window.batchSpin()->isEnabled());
        QCOMPARE(window.batchSpin()->value(), 4);
        QVERIFY(window.batchSpin()->statusTip().contains("batch 4"));
        QCOMPARE(state.settings().precision, ts::predictors::TrainingPrecision::Fp32);
        window.batchSpin()->setValue(8);
        QTRY_VERIFY_WITH_TIMEOUT(state.tracePredictions() && state.tracePredictions()->complete &&
                                     state.tracePredictions()->change.batch == 8,
                                 30000);
        auto* view = qobject_cast<TraceGpuView*>(window.viewWidget(View::Gpus));
        QTRY_VERIFY(view->caption().contains("at batch 8 instead of its 4"));
        QVERIFY(view->caption().contains("samples per second"));
        state.setPrecision(ts::predictors::TrainingPrecision::Fp8);
        QTRY_VERIFY(state.tracePredictions() && !state.tracePredictions()->changeProblem.empty());
        QTRY_VERIFY2(view->caption().contains("Transformer Engine"), qPrintable(view->caption()));
        window.batchSpin()->setValue(4);
        state.setPrecision(ts::predictors::TrainingPrecision::Fp32);  // as recorded again
        QTRY_VERIFY_WITH_TIMEOUT(state.tracePredictions() && state.tracePredictions()->complete &&
                                     state.tracePredictions()->change == ts::predictors::TraceChange{} &&
                                     state.tracePredictions()->changeProblem.empty(),
                                 30000);

        QVERIFY2(state.openModel(kCpuTrace), qPrintable(state.error()));
        QVERIFY(!window.batchSpin()->isEnabled());
    }

    void aCpuOnlyTraceShowsItsOperatorsAndSaysWhatItLacks() {
        ExplorerState state;
        QVERIFY2(state.openModel(kCpuTrace), qPrintable(state.error()));
        MainWindow window(state);
        showOffscreen(window, View::Timeline);
        auto* timeline = qobject_cast<TraceTimelineView*>(window.viewWidget(View::Timeline));
        const TraceTimeline& t = timeline->canvas()->timeline();
        QVERIFY(!t.rows.empty());
        for (const TraceTimelineRow& row : t.rows) QVERIFY(!row.gpu);
        QVERIFY(timeline->headline().contains("no GPU activity"));
        showOffscreen(window, View::Gpus);
        auto* gpus = qobject_cast<TraceGpuView*>(window.viewWidget(View::Gpus));
        QVERIFY2(gpus->caption().contains("cannot be predicted"), qPrintable(gpus->caption()));
        QCOMPARE(gpus->gpuModel()->rowCount(), 0);
    }

    // The trace reader reports no progress; the window reads it from how far into the file it is.
    void fileReadProgressFollowsTheReader() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("big.bin").toStdString();
        {
            std::ofstream out(path, std::ios::binary);
            out << std::string(1 << 20, 'x');
        }
        FileReadProgress progress(path);
        QCOMPARE(progress.fileBytes(), int64_t(1 << 20));
        QVERIFY(progress.fraction() < 0);  // not open yet
        std::ifstream in(path, std::ios::binary);
        std::string chunk(1 << 18, '\0');
        in.read(chunk.data(), std::streamsize(chunk.size()));
        const double f = progress.fraction();
        QVERIFY2(f >= 0.25 && f < 0.35, qPrintable(QString::number(f)));
        in.read(chunk.data(), std::streamsize(chunk.size()));
        QVERIFY(progress.fraction() >= 0.5);
    }
};

QTEST_MAIN(TraceViewTest)
#include "test_trace_views.moc"
