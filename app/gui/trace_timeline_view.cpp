#include "trace_timeline_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <algorithm>

#include "explorer_state.h"
#include "trace_style.h"
#include "trace_timeline_canvas.h"
#include "view_refresher.h"

namespace ts::gui {

TraceTimelineView::TraceTimelineView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    setObjectName("traceTimeline");
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    steps_ = new QComboBox(this);
    steps_->setObjectName("traceStep");
    steps_->setToolTip(tr("The ProfilerStep shown; the median one is chosen first"));
    top->addWidget(new QLabel(tr("Step:"), this));
    top->addWidget(steps_);
    headline_ = new QLabel(this);
    headline_->setWordWrap(true);
    top->addWidget(headline_, 1);
    layout->addLayout(top);
    canvas_ = new TraceTimelineCanvas(this);
    // Many streams or threads make a tall picture: it scrolls vertically, the width stays the view's.
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(canvas_);
    layout->addWidget(scroll, 1);
    connect(steps_, &QComboBox::currentIndexChanged, this, &TraceTimelineView::showStep);
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    refresh();
}

void TraceTimelineView::refresh() {
    std::shared_ptr<const TraceDocument> doc = state_.traceDocument();
    if (doc == shown_) return;  // the trace's timeline depends on nothing but the trace and the step
    shown_ = doc;
    const QSignalBlocker blocker(steps_);
    steps_->clear();
    if (!doc) return canvas_->setTimeline(nullptr, {});
    QLocale locale;
    for (size_t i = 0; i < doc->summary.steps.size(); ++i) {
        const TraceStepSummary& s = doc->summary.steps[i];
        QString label = s.number >= 0 ? tr("ProfilerStep#%1").arg(s.number) : tr("the whole trace");
        label += tr(" (%1)").arg(formatDurationMs(s.cpuMs));
        if (i == doc->medianStep && doc->summary.steps.size() > 1) label += tr(", median");
        steps_->addItem(label);
    }
    steps_->setCurrentIndex(int(doc->medianStep));
    steps_->setEnabled(doc->summary.steps.size() > 1);
    showStep(int(doc->medianStep));
}

void TraceTimelineView::showStep(int index) {
    if (!shown_ || index < 0) return;
    TraceTimeline timeline = buildTraceTimeline(*shown_, size_t(index));
    const TraceStepSummary& s = shown_->summary.steps[timeline.step];
    const QString gpu = QString::fromStdString(shown_->summary.gpuName);
    QString text;
    if (s.kernels == 0) {
        text = tr("%1 on the host; the trace holds no GPU activity").arg(formatDurationMs(s.cpuMs));
    } else {
        const double window = std::max(s.gpuWindowMs, 1e-9);
        text = tr("%1 on the host; %2: busy %3 (%4%), idle %5, of which host-bound %6")
                   .arg(formatDurationMs(s.cpuMs), gpu.isEmpty() ? tr("the GPU") : gpu, formatDurationMs(s.busyMs))
                   .arg(100 * s.busyMs / window, 0, 'f', 0)
                   .arg(formatDurationMs(s.idleMs), formatDurationMs(s.hostBoundMs));
        if (s.communicationMs > 0)
            text += tr("; communication %1, %2 exposed")
                        .arg(formatDurationMs(s.communicationMs), formatDurationMs(s.exposedCommunicationMs));
        if (timeline.otherDeviceActivities > 0)
            text += tr("; %n activities of other GPUs not drawn", "", timeline.otherDeviceActivities);
    }
    headline_->setText(text + tr(". Measured times; wheel to zoom, drag to pan, hover for details."));
    canvas_->setTimeline(shown_, std::move(timeline));
}

QString TraceTimelineView::headline() const {
    return headline_->text();
}

}  // namespace ts::gui
