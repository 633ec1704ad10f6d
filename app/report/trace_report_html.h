#pragma once
// The hardware-choice report of a recorded job (a PyTorch profiler trace) as well-formed XHTML:
// the recorded job, a summary naming the cheapest and the fastest GPU, the ranking (predicted step,
// speed against the recorded GPU, cost per 1,000 steps, price per GPU-hour), the GPU time per step
// by kernel class on the recorded GPU and the recommended ones, the plot, the notes and the
// assumptions. The same text is the PDF's source (QTextDocument reads it).
#include <QString>

#include "report_tables.h"
#include "trainscope/predictors/choice/trace_choice.h"

namespace ts::report {

// `plot`: the cost-against-step-time plot's source (a data: URI, or a resource name for the PDF;
// empty: none), shown `width` pixels wide. `generated` is shown in the header. `pages`: where the
// PDF breaks its tables (report_tables.h); null for the HTML file.
QString traceReportHtml(const predictors::TraceChoice& choice, const QString& plot, int width, const QString& generated,
                        TablePages* pages = nullptr);

}  // namespace ts::report
