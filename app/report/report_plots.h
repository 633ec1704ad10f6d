#pragma once
// The report's plots, drawn with QCustomPlot offscreen (a QApplication must exist; the offscreen
// platform is enough): throughput against the batch size on the GPUs of the cost-time frontier,
// and cost against time to train on every priced GPU with a recommendation, the frontier drawn and
// every point named; for a trace, cost per 1,000 steps against the step time.
#include <QImage>

#include "trainscope/predictors/choice/hardware_choice.h"
#include "trainscope/predictors/choice/trace_choice.h"

namespace ts::report {

struct ReportPlots {
    QImage throughput;  // samples/s vs batch size, up to kPlottedGpus lines, recommendation marked
    QImage costVsTime;  // $ to train vs hours to train, with both ranges; null when no GPU is priced
};

inline constexpr int kPlottedGpus = 6;

// "NVIDIA GeForce RTX 4090" -> "RTX 4090", "NVIDIA Tesla V100 16GB SXM2" -> "V100 16GB SXM2": the
// name without the vendor and brand words, short enough to sit beside a point.
QString shortGpuName(const std::string& name);

ReportPlots renderReportPlots(const predictors::HardwareChoice& choice, int width = 900, int height = 480);

// A recorded job's choice: US$ per 1,000 steps against the predicted step time on every priced GPU
// that was predicted, the recorded GPU marked; null when none is.
QImage renderTracePlot(const predictors::TraceChoice& choice, int width = 900, int height = 480);

}  // namespace ts::report
