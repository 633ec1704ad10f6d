#include "trace_overview_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "breakdown_bar.h"
#include "explorer_state.h"
#include "trace_style.h"
#include "view_refresher.h"

namespace ts::gui {

namespace {

QLabel* sectionLabel(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    QFont bold = label->font();
    bold.setBold(true);
    label->setFont(bold);
    return label;
}

QStandardItem* toolTipped(QStandardItem* item) {
    item->setToolTip(item->text());  // names longer than the column
    return item;
}

// Per-step averages: the totals cover every step.
double stepCount(const TraceDocument& doc) {
    return double(std::max<size_t>(doc.summary.steps.size(), 1));
}

}  // namespace

TraceOverviewView::TraceOverviewView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    setObjectName("traceOverview");
    auto* layout = new QVBoxLayout(this);
    title_ = new QLabel(this);
    title_->setObjectName("traceTitle");
    title_->setWordWrap(true);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(title_);
    layout->addWidget(sectionLabel(tr("The median step's GPU time"), this));
    stepBar_ = new BreakdownBar(this);
    layout->addWidget(stepBar_);
    layout->addWidget(sectionLabel(tr("GPU time per step by kernel class"), this));
    classBar_ = new BreakdownBar(this);
    layout->addWidget(classBar_);

    steps_ = new QStandardItemModel(this);
    // Short headers: nine columns share half the window; the section title gives the unit.
    steps_->setHorizontalHeaderLabels({tr("Step"), tr("Host"), tr("GPU window"), tr("Busy"), tr("Idle"), tr("Comm."),
                                       tr("Exposed"), tr("Host-bound"), tr("Activities")});
    operators_ = new QStandardItemModel(this);
    operators_->setHorizontalHeaderLabels(
        {tr("Operator (launching)"), tr("Calls/step"), tr("GPU ms/step"), tr("CPU ms/step"), tr("Kernels/step")});
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    auto* stepsBox = new QWidget(splitter);
    auto* stepsLayout = new QVBoxLayout(stepsBox);
    stepsLayout->setContentsMargins(0, 0, 0, 0);
    stepsLayout->addWidget(sectionLabel(tr("Steps (ms)"), stepsBox));
    stepTable_ = makeTraceTable(steps_, StepNumber, stepsBox);
    stepTable_->sortByColumn(StepNumber, Qt::AscendingOrder);
    stepTable_->setRootIsDecorated(false);
    stepsLayout->addWidget(stepTable_);
    auto* opsBox = new QWidget(splitter);
    auto* opsLayout = new QVBoxLayout(opsBox);
    opsLayout->setContentsMargins(0, 0, 0, 0);
    opsLayout->addWidget(sectionLabel(tr("Operators by the GPU time they launched"), opsBox));
    operatorTable_ = makeTraceTable(operators_, GpuMs, opsBox);
    operatorTable_->setRootIsDecorated(false);
    opsLayout->addWidget(operatorTable_);
    splitter->addWidget(stepsBox);
    splitter->addWidget(opsBox);
    splitter->setStretchFactor(0, 3);  // the steps' nine columns need the room
    splitter->setStretchFactor(1, 2);
    layout->addWidget(splitter, 1);
    notes_ = new QLabel(this);
    notes_->setWordWrap(true);
    layout->addWidget(notes_);

    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    refresh();
}

QString TraceOverviewView::title() const {
    return title_->text();
}

void TraceOverviewView::refresh() {
    std::shared_ptr<const TraceDocument> doc = state_.traceDocument();
    if (doc == shown_) return;  // nothing here follows the controls
    shown_ = doc;
    if (!doc) {
        title_->clear();
        notes_->clear();
        stepBar_->setSegments({}, 1);
        classBar_->setSegments({}, 1);
        steps_->removeRows(0, steps_->rowCount());
        operators_->removeRows(0, operators_->rowCount());
        return;
    }
    const TraceSummary& s = doc->summary;
    const QString gpu =
        s.gpuName.empty()
            ? tr("no GPU (a CPU-only trace)")
            : QString::fromStdString(s.gpuName) +
                  (s.gpuId.empty() ? tr(" (%1)").arg(QString::fromStdString(s.gpuMatch))
                                   : tr(" (%1, matched %2)")
                                         .arg(QString::fromStdString(s.gpuId), QString::fromStdString(s.gpuMatch)));
    const QString steps = doc->bySteps() ? tr("%n ProfilerStep(s)", "", int(s.steps.size())) : tr("no ProfilerStep");
    QString recorded = s.recordShapes ? tr("input shapes recorded") : tr("no input shapes");
    if (s.withStack) recorded += tr(", module scopes recorded");
    title_->setText(tr("<b>%1</b>: a PyTorch profiler trace on %2; %3, median step %4 on the host; %5 operators, "
                       "%6 GPU activities; %7.")
                        .arg(QString::fromStdString(displayName(doc->spec)).toHtmlEscaped(), gpu.toHtmlEscaped(), steps,
                             formatDurationMs(s.medianStepMs))
                        .arg(s.operators)
                        .arg(s.gpuActivities)
                        .arg(recorded));
    QStringList notes;
    for (const std::string& note : s.notes) notes << QString::fromStdString(note);
    notes_->setText(notes.join(" "));
    notes_->setVisible(!notes.isEmpty());
    fillBars(*doc);
    fillTables(*doc);
}

void TraceOverviewView::fillBars(const TraceDocument& doc) {
    const TraceSummary& s = doc.summary;
    if (s.steps.empty() || s.gpuActivities == 0) {
        stepBar_->setSegments({}, 1);
        classBar_->setSegments({}, 1);
        stepBar_->setToolTip(tr("The trace holds no GPU activity"));
        return;
    }
    const TraceStepSummary& m = s.steps[doc.medianStep];
    const double compute = std::max(0.0, m.busyMs - m.exposedCommunicationMs);
    const double otherIdle = std::max(0.0, m.idleMs - m.hostBoundMs);
    auto segment = [](const QString& label, double ms, QColor color, const QString& tip) {
        return BreakdownBar::Segment{label + " " + formatDurationMs(ms), ms, color, tip, -1};
    };
    stepBar_->setSegments(
        {segment(tr("compute"), compute, categoryColor(0),
                 tr("Busy: some activity of the step runs on the GPU (communication that overlaps compute included)")),
         segment(tr("exposed communication"), m.exposedCommunicationMs, kernelClassColor(KernelClass::Communication),
                 tr("NCCL collectives while nothing else of the step runs")),
         segment(tr("host-bound"), m.hostBoundMs, kHostBoundColor,
                 tr("Idle until the host launched the next work: the GPU waited for Python, dispatch or a "
                    "synchronisation")),
         segment(tr("other idle"), otherIdle, QColor(186, 176, 172),
                 tr("Idle with the next work already launched: waiting on another stream, an event or a copy"))},
        m.gpuWindowMs);
    stepBar_->setToolTip(tr("ProfilerStep#%1's GPU window: %2").arg(m.number).arg(formatDurationMs(m.gpuWindowMs)));

    QVector<BreakdownBar::Segment> classes;
    double sum = 0;
    for (const TraceClassTotal& c : s.classes) {
        const double ms = c.gpuMs / stepCount(doc);
        classes.push_back({kernelClassLabel(c.kind) + " " + formatDurationMs(ms), ms, kernelClassColor(c.kind),
                           tr("%n activities per step", "", int(std::lround(double(c.calls) / stepCount(doc)))), -1});
        sum += ms;
    }
    classBar_->setSegments(classes, std::max(sum, 1e-9));
}

void TraceOverviewView::fillTables(const TraceDocument& doc) {
    const TraceSummary& s = doc.summary;
    steps_->removeRows(0, steps_->rowCount());
    for (size_t i = 0; i < s.steps.size(); ++i) {
        const TraceStepSummary& st = s.steps[i];
        QStandardItem* name = textItem(st.number >= 0 ? tr("#%1").arg(st.number) : tr("whole trace"));
        name->setData(double(st.number), kSortRole);
        if (i == doc.medianStep) {
            name->setText(name->text() + tr(" (median)"));
            QFont bold = name->font();
            bold.setBold(true);
            name->setFont(bold);
        }
        steps_->appendRow({name, numberItem(st.cpuMs, 3), numberItem(st.gpuWindowMs, 3), numberItem(st.busyMs, 3),
                           numberItem(st.idleMs, 3), numberItem(st.communicationMs, 3),
                           numberItem(st.exposedCommunicationMs, 3), numberItem(st.hostBoundMs, 3),
                           numberItem(st.kernels, 0)});
    }
    operators_->removeRows(0, operators_->rowCount());
    const double n = stepCount(doc);
    for (const TraceOperatorTotal& op : s.topOperators)
        operators_->appendRow({toolTipped(textItem(QString::fromStdString(op.name))),
                               numberItem(double(op.calls) / n, 1), numberItem(op.gpuMs / n, 3),
                               numberItem(op.cpuMs / n, 3), numberItem(double(op.kernels) / n, 1)});
    fitColumns(stepTable_);
    fitColumns(operatorTable_, 240);  // the figures stay in view; the tooltip has the whole name
}

}  // namespace ts::gui
