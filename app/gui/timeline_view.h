#pragma once
// The Timeline of a model: one training iteration on the target GPU as predicted, drawn as a trace
// viewer draws a step (timeline_canvas.h, shared with the Timeline of a PyTorch trace): a lane for
// the host's dispatch, a strip of the stretches the GPU idles (waiting for the host, or for a
// collective), the GPU stream with each layer's forward, recomputation, backward and the optimizer
// step in pass colours and named where the name fits, the layers' measured kernels under them when a
// loaded profile recorded kernels, and with several GPUs the communication stream's collectives
// (iteration_timeline.h lays it out). Wheel to zoom, drag to pan, hover for a block's figures; a
// click selects the layer in every view, and the selected layer is outlined.
#include <QWidget>

#include "iteration_timeline.h"
#include "timeline_canvas.h"

namespace ts::gui {

class ExplorerState;
class ViewRefresher;

// The canvas of one predicted iteration: blocks are the iteration's, lane by lane.
class IterationTimelineCanvas : public TimelineCanvas {
    Q_OBJECT
public:
    explicit IterationTimelineCanvas(QWidget* parent = nullptr);
    // `graph` names the blocks' operations in tooltips; it must outlive the picture.
    void setIteration(IterationTimeline iteration, const Graph* graph, bool keepView);
    const IterationTimeline& iteration() const { return iteration_; }
    // The picture's lane of each of the iteration's lanes (-1: not drawn).
    int laneOf(IterationLane lane) const;
    QString toolTipAt(const QPointF& pos) const override;

private:
    IterationTimeline iteration_;
    const Graph* graph_ = nullptr;
    int lanes_[int(IterationLane::Communication) + 1] = {};
    int strip_ = -1;
};

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(ExplorerState& state, QWidget* parent = nullptr);
    IterationTimelineCanvas* canvas() const { return canvas_; }
    QString headline() const;

private:
    void refresh();

    ExplorerState& state_;
    ViewRefresher* refresher_ = nullptr;
    IterationTimelineCanvas* canvas_ = nullptr;
    int shownGeneration_ = -1;  // the model shown: another one starts unzoomed
};

// Pass colours, the same in the legend, the blocks and the tests.
QColor passColor(IterationPass pass);
QString passName(IterationPass pass);

}  // namespace ts::gui
