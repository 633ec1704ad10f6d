#include "timeline_view.h"

#include <QLocale>
#include <QScrollArea>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "breakdown_bar.h"
#include "explorer_state.h"
#include "trace_style.h"
#include "view_refresher.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

// The measured run nearest the current batch, at the precision shown, when kernels were recorded.
const ProfileRun* kernelRun(const ExplorerState& state) {
    const Profile* profile = state.profile();
    const ExplorerSettings& shown = state.snapshot()->settings;  // what the predictions are of
    if (!profile || !profile->kernelsRecorded) return nullptr;
    if (parseTrainingPrecision(profile->scenario.precision) != shown.precision) return nullptr;
    const ProfileRun* best = nullptr;
    for (const ProfileRun& run : profile->runs)
        if (!run.layers.empty() &&
            (!best || std::llabs(run.batch - shown.batch) < std::llabs(best->batch - shown.batch)))
            best = &run;
    return best;
}

const QColor kTensorCoreKernel = categoryColor(8);

QString laneName(IterationLane lane) {
    switch (lane) {
        case IterationLane::Host:
            return TimelineView::tr("host (dispatch)");
        case IterationLane::Passes:
            return TimelineView::tr("GPU: passes");
        case IterationLane::Modules:
            return TimelineView::tr("GPU: modules");
        case IterationLane::Blocks:
            return TimelineView::tr("GPU: blocks");
        case IterationLane::Gpu:
            return TimelineView::tr("GPU: layers");
        case IterationLane::Kernels:
            return TimelineView::tr("kernels (measured)");
        case IterationLane::Communication:
            return TimelineView::tr("communication");
    }
    return {};
}

}  // namespace

QColor passColor(IterationPass pass) {
    switch (pass) {
        case IterationPass::Forward:
            return categoryColor(0);
        case IterationPass::Recompute:
            return categoryColor(3);
        case IterationPass::Backward:
            return categoryColor(1);
        case IterationPass::Optimizer:
            return categoryColor(4);
        case IterationPass::Communication:
            return categoryColor(6);
        case IterationPass::Other:
            return categoryColor(9);
        case IterationPass::Kernel:
            return categoryColor(5);
    }
    return categoryColor(9);
}

QString passName(IterationPass pass) {
    switch (pass) {
        case IterationPass::Forward:
            return TimelineView::tr("forward");
        case IterationPass::Recompute:
            return TimelineView::tr("recomputation (checkpointing)");
        case IterationPass::Backward:
            return TimelineView::tr("backward");
        case IterationPass::Optimizer:
            return TimelineView::tr("optimizer step");
        case IterationPass::Communication:
            return TimelineView::tr("all-reduce");
        case IterationPass::Other:
            return TimelineView::tr("other (measured, outside the layers)");
        case IterationPass::Kernel:
            return TimelineView::tr("kernel");
    }
    return {};
}

IterationTimelineCanvas::IterationTimelineCanvas(QWidget* parent) : TimelineCanvas(parent) {
    setObjectName("timelineCanvas");
    std::fill(std::begin(lanes_), std::end(lanes_), -1);
}

int IterationTimelineCanvas::laneOf(IterationLane lane) const {
    return lanes_[int(lane)];
}

void IterationTimelineCanvas::setIteration(IterationTimeline iteration, const Graph* graph, bool keepView) {
    iteration_ = std::move(iteration);
    graph_ = graph;
    TimelinePicture picture;
    picture.spanMs = iteration_.endMs;
    std::fill(std::begin(lanes_), std::end(lanes_), -1);
    auto addLane = [&](IterationLane lane) {
        lanes_[int(lane)] = int(picture.lanes.size());
        picture.lanes.push_back(
            {laneName(lane), false, lane == IterationLane::Modules || lane == IterationLane::Blocks});
    };
    addLane(IterationLane::Host);
    strip_ = int(picture.lanes.size());
    picture.lanes.push_back({tr("GPU idle"), true});
    addLane(IterationLane::Passes);
    if (iteration_.moduleLane) addLane(IterationLane::Modules);
    if (iteration_.blockLane) addLane(IterationLane::Blocks);
    addLane(IterationLane::Gpu);
    if (iteration_.kernels) addLane(IterationLane::Kernels);
    if (iteration_.communication) addLane(IterationLane::Communication);

    for (const IterationBlock& b : iteration_.blocks) {
        QColor color = passColor(b.pass);
        QString label = QString::fromStdString(b.label);
        switch (b.lane) {
            case IterationLane::Host:
                color = color.lighter(130);  // dispatch: the pass, paler
                break;
            case IterationLane::Passes:  // the groups darker the wider they are
                color = color.darker(130);
                label += QString::fromUtf8(" \u00b7 ") + formatDurationMs(b.ms);
                break;
            case IterationLane::Modules:
                color = color.darker(118);
                break;
            case IterationLane::Blocks:
                color = color.darker(106);
                break;
            default:
                break;
        }
        if (b.pass == IterationPass::Kernel && label.endsWith("(tensor cores)")) color = kTensorCoreKernel;
        picture.blocks.push_back({laneOf(b.lane), b.startMs, b.ms, color, label, b.op});
    }
    const int lastLane = int(picture.lanes.size()) - 1;
    const QColor waitColor = passColor(IterationPass::Communication);
    for (const IterationStretch& s : iteration_.hostBound) {
        picture.bands.push_back({s.startMs, s.ms, kHostBoundColor, true, strip_, laneOf(IterationLane::Gpu)});
        picture.blocks.push_back({strip_, s.startMs, s.ms, kHostBoundColor, {}});
    }
    for (const IterationStretch& s : iteration_.commWaits) {
        picture.bands.push_back({s.startMs, s.ms, waitColor, false, strip_, lastLane});
        picture.blocks.push_back({strip_, s.startMs, s.ms, waitColor, {}});
    }
    bool present[int(IterationPass::Kernel) + 1] = {};
    for (const IterationBlock& b : iteration_.blocks) present[int(b.pass)] = true;
    for (IterationPass pass : {IterationPass::Forward, IterationPass::Recompute, IterationPass::Backward,
                               IterationPass::Optimizer, IterationPass::Communication, IterationPass::Other})
        if (present[int(pass)]) picture.legend.push_back({passName(pass), passColor(pass)});
    picture.legend.push_back({tr("host dispatch (paler)"), passColor(IterationPass::Forward).lighter(130)});
    if (!iteration_.hostBound.empty()) picture.legend.push_back({tr("GPU waits for the host"), kHostBoundColor});
    if (!iteration_.commWaits.empty()) picture.legend.push_back({tr("GPU waits for a collective"), waitColor});
    if (iteration_.kernels) {
        picture.legend.push_back({tr("kernel"), passColor(IterationPass::Kernel)});
        picture.legend.push_back({tr("kernel on tensor cores"), kTensorCoreKernel});
    }
    setPicture(std::move(picture), keepView);
}

QString IterationTimelineCanvas::toolTipAt(const QPointF& pos) const {
    const int i = blockAt(pos);
    QLocale locale;
    if (i >= 0 && size_t(i) < iteration_.blocks.size()) {
        const IterationBlock& b = iteration_.blocks[size_t(i)];
        QString what = QString::fromStdString(b.label);
        const bool group =
            b.lane == IterationLane::Passes || b.lane == IterationLane::Modules || b.lane == IterationLane::Blocks;
        if (b.lane == IterationLane::Modules || b.lane == IterationLane::Blocks) what = tr("module %1").arg(what);
        if (!group && graph_ && b.op >= 0 && size_t(b.op) < graph_->ops.size()) {
            const Operation& op = graph_->ops[size_t(b.op)];
            what = QString::fromStdString(op.name) + " (" + QString::fromStdString(op.type) + ")";
        }
        QString kind = passName(b.pass);
        if (b.lane == IterationLane::Host) kind = tr("host dispatch of the %1").arg(passName(b.pass));
        if (b.lane == IterationLane::Kernels)
            kind = tr("measured kernel, drawn at its share of the layer's predicted time");
        QString tip =
            tr("%1\n%2: %3, from %4 ms").arg(what, kind, formatDurationMs(b.ms), locale.toString(b.startMs, 'f', 3));
        if (b.lane == IterationLane::Kernels) tip = QString::fromStdString(b.label) + "\n" + tip;
        return tip;
    }
    if (laneRect(strip_).adjusted(0, -2, 0, 2).contains(pos)) {
        const double at = msAt(pos.x());
        for (const IterationStretch& s : iteration_.hostBound)
            if (at >= s.startMs && at <= s.startMs + s.ms)
                return tr("The GPU waits %1 for the host to dispatch its next work").arg(formatDurationMs(s.ms));
        for (const IterationStretch& s : iteration_.commWaits)
            if (at >= s.startMs && at <= s.startMs + s.ms)
                return tr("The GPU waits %1 for the gradients' collective before the optimizer step (exposed "
                          "communication)")
                    .arg(formatDurationMs(s.ms));
    }
    return {};
}

TimelineView::TimelineView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    setObjectName("timeline");
    auto* layout = new QVBoxLayout(this);
    canvas_ = new IterationTimelineCanvas(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(canvas_);
    layout->addWidget(scroll, 1);
    connect(canvas_, &TimelineCanvas::blockClicked, this, [this](int i) {
        const TimelineBlock& b = canvas_->picture().blocks[size_t(i)];
        if (b.key >= 0) state_.setSelectedOp(b.key);
    });
    connect(&state_, &ExplorerState::selectionChanged, canvas_, &TimelineCanvas::setHighlightedKey);
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    refresh();
}

void TimelineView::refresh() {
    const TrainingPrediction& p = state_.current();
    QString message;
    if (!state_.hasModel())
        message = tr("No model: %1").arg(state_.error());
    else if (!p.supported)
        message = tr("No prediction: %1").arg(QString::fromStdString(p.reason));
    if (!message.isEmpty()) {
        canvas_->setCaption(message);
        canvas_->setIteration({}, nullptr, false);
        return;
    }
    const ProfileRun* run = kernelRun(state_);
    const predictors::CheckpointPlan& plan = state_.predictor()->analysis().plan(p.scenario.checkpointing);
    IterationTimeline iteration = layOutIteration(p, *state_.graph(), plan.spanStart, plan.recomputed, run);
    QLocale locale;
    const ExplorerSettings& s = state_.snapshot()->settings;  // what the prediction is of
    QString text = tr("One iteration on %1 at batch %2 per GPU, %3: %4 predicted")
                       .arg(QString::fromStdString(p.gpuName))
                       .arg(s.batch)
                       .arg(trainingPrecisionName(s.precision), formatDurationMs(p.iterationMs.value));
    // The iteration model sums stretches of layers; laid out layer by layer the host's dispatch
    // can leave the GPU a little more idle. Say so where it shows.
    if (std::abs(iteration.endMs - p.iterationMs.value) > 0.005 * p.iterationMs.value)
        text += tr(" (laid out layer by layer: %1)").arg(formatDurationMs(iteration.endMs));
    if (p.hostBoundMs.value > 0)
        text += tr("; the GPU waits %1 for the host").arg(formatDurationMs(p.hostBoundMs.value));
    if (p.communicationMs.value > 0)
        text += tr("; %1 of communication exposed").arg(formatDurationMs(p.communicationMs.value));
    text += ". ";
    text += run ? tr("Kernels measured on %1 at batch %2, each its measured share of its layer's predicted time.")
                      .arg(QString::fromStdString(state_.profile()->environment.deviceName))
                      .arg(run->batch)
                : tr("Load a profile recorded with CUPTI at this precision to see each layer's kernels.");
    text += tr(" Wheel to zoom, drag to pan, hover for figures, click to select a layer.");
    canvas_->setCaption(text);
    // The same model redrawn (another batch size, GPU or precision) keeps the zoom and pan.
    const bool sameModel = shownGeneration_ == state_.modelGeneration();
    shownGeneration_ = state_.modelGeneration();
    canvas_->setIteration(std::move(iteration), state_.graph(), sameModel);
    canvas_->setHighlightedKey(state_.selectedOp());
}

QString TimelineView::headline() const {
    return canvas_->caption();
}

}  // namespace ts::gui
