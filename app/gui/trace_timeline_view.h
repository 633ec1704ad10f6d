#pragma once
// The Timeline for an open trace: a step chosen from the trace's ProfilerSteps (the median one
// first) drawn on its measured clock by TraceTimelineCanvas, with a line of what the step did.
#include <QWidget>
#include <memory>

class QComboBox;
class QLabel;

namespace ts::gui {

class ExplorerState;
class TraceTimelineCanvas;
class ViewRefresher;
struct TraceDocument;

class TraceTimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TraceTimelineView(ExplorerState& state, QWidget* parent = nullptr);
    QComboBox* stepSelector() const { return steps_; }
    TraceTimelineCanvas* canvas() const { return canvas_; }
    QString headline() const;

private:
    void refresh();
    void showStep(int index);

    ExplorerState& state_;
    ViewRefresher* refresher_ = nullptr;
    QComboBox* steps_ = nullptr;
    QLabel* headline_ = nullptr;
    TraceTimelineCanvas* canvas_ = nullptr;
    std::shared_ptr<const TraceDocument> shown_;  // the document the selector lists
};

}  // namespace ts::gui
