// Slider-to-repaint latency of the explorer (issue 6: under 16 ms for a 1,000-operation model).
// For each view: move the batch slider, let the state answer from its prepared plans and every
// view refresh, and repaint the window synchronously; prints the median and 90th percentile wall
// time per view, and the median CPU time of the GUI thread (what the move costs there, whatever
// else the machine runs: on a shared machine wall time waits for other processes). "(precision)"
// times a change of precision: every GPU predicted anew on the worker thread, while the GUI
// thread's CPU time shows what it spent meanwhile.
// Offscreen (no display needed); no pass/fail: `trainscope_bench_gui [--views=overview,batch] [MODEL...]`.
#include <time.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "explorer_state.h"
#include "main_window.h"

using namespace ts::gui;

namespace {

struct Latency {
    double medianMs = 0, p90Ms = 0, cpuMedianMs = 0;
};

// CPU time of the calling thread, in ms.
double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

Latency summary(std::vector<double> ms, std::vector<double> cpu) {
    std::sort(ms.begin(), ms.end());
    std::sort(cpu.begin(), cpu.end());
    return {ms[ms.size() / 2], ms[ms.size() * 9 / 10], cpu[cpu.size() / 2]};
}

Latency measure(MainWindow& window, int moves) {
    QSlider* slider = window.batchSlider();
    std::vector<double> ms, cpu;
    const int from = sliderAtBatch(8), to = sliderAtBatch(256);
    for (int i = 0; i < moves; ++i) {
        // A drag: consecutive positions, each a different batch size.
        const int position = from + (i * 7) % (to - from);
        QElapsedTimer clock;
        clock.start();
        const double cpu0 = threadCpuMs();
        slider->setValue(position);
        window.repaint();
        QApplication::processEvents();  // anything a view posted (deferred updates) is drawn too
        ms.push_back(double(clock.nsecsElapsed()) / 1e6);
        cpu.push_back(threadCpuMs() - cpu0);
    }
    return summary(std::move(ms), std::move(cpu));
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QStringList models = app.arguments().mid(1);
    // --views=a,b times only those views (to profile one of them); every view by default.
    QStringList views{"overview", "batch", "gpus", "modules", "roofline", "timeline"};
    for (const QString& arg : QStringList(models))
        if (arg.startsWith("--views=")) {
            views = arg.mid(8).split(',', Qt::SkipEmptyParts);
            models.removeAll(arg);
        }
    if (models.isEmpty()) models = {"zoo:gpt2_large", "zoo:bert_large", "zoo:resnet50"};
    std::printf(
        "%-18s %-10s %8s %8s %8s   (ms from slider move to repainted window: wall median, p90; GUI "
        "thread CPU median)\n",
        "model", "view", "median", "p90", "cpu");
    for (const QString& model : models) {
        ExplorerState state;
        if (!state.openModel(model.toStdString())) {
            std::fprintf(stderr, "%s: %s\n", qPrintable(model), qPrintable(state.error()));
            return 2;
        }
        {
            // The predictions alone (no view listening): what every move costs before drawing.
            std::vector<double> ms, cpu;
            for (int i = 0; i < 60; ++i) {
                QElapsedTimer clock;
                clock.start();
                const double cpu0 = threadCpuMs();
                state.setBatch(8 + (i * 7) % 248);
                ms.push_back(double(clock.nsecsElapsed()) / 1e6);
                cpu.push_back(threadCpuMs() - cpu0);
            }
            const Latency l = summary(std::move(ms), std::move(cpu));
            std::printf("%-18s %-10s %8.2f %8.2f %8.2f\n", qPrintable(model), "(predict)", l.medianMs, l.p90Ms,
                        l.cpuMedianMs);
        }
        {
            // Another precision: every GPU predicted in full, on the worker. Wall time until the new
            // snapshot is published; the GUI thread's CPU time meanwhile (it only waits).
            std::vector<double> ms, cpu;
            const ts::predictors::TrainingPrecision precisions[] = {ts::predictors::TrainingPrecision::AmpBf16,
                                                                    ts::predictors::TrainingPrecision::Fp32};
            for (int i = 0; i < 6; ++i) {
                QElapsedTimer clock;
                clock.start();
                const double cpu0 = threadCpuMs();
                state.setPrecision(precisions[i % 2]);
                state.waitForPredictions();
                ms.push_back(double(clock.nsecsElapsed()) / 1e6);
                cpu.push_back(threadCpuMs() - cpu0);
            }
            const Latency l = summary(std::move(ms), std::move(cpu));
            std::printf("%-18s %-10s %8.2f %8.2f %8.2f\n", qPrintable(model), "(precision)", l.medianMs, l.p90Ms,
                        l.cpuMedianMs);
        }
        MainWindow window(state);
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.resize(1280, 800);
        window.show();
        QApplication::processEvents();
        for (const QString& name : views) {
            const std::optional<View> view = parseView(name);
            if (!view) {
                std::fprintf(stderr, "no view named %s\n", qPrintable(name));
                return 2;
            }
            window.showView(*view);
            QApplication::processEvents();
            measure(window, 5);  // warm-up: first paints build caches
            const Latency l = measure(window, 60);
            std::printf("%-18s %-10s %8.2f %8.2f %8.2f\n", qPrintable(model), qPrintable(name), l.medianMs, l.p90Ms,
                        l.cpuMedianMs);
        }
    }
    return 0;
}
