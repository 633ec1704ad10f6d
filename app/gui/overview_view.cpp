#include "overview_view.h"

#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QScrollArea>
#include <QVBoxLayout>
#include <algorithm>
#include <map>

#include "breakdown_bar.h"
#include "explorer_state.h"
#include "prediction_snapshot.h"
#include "view_refresher.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

// The activations and transients live at the allocator's peak: the categories' sum exceeds the
// peak when backward has freed saved activations by the time the gradients and the largest
// transient are allocated, so the bar shows what is held at that moment.
struct PeakShares {
    double activations = 0, workspace = 0;
};
PeakShares peakShares(const MemoryBreakdown& m) {
    const double held = m.weights + m.castWeightCopies + m.gradients + m.optimizerState + m.inputs;
    const double transient = m.peakAllocated - held - m.activations;
    if (transient >= 0) return {m.activations, transient};
    return {std::max(0.0, m.activations + transient), 0};
}

QLabel* valueLabel(const char* objectName, QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setObjectName(objectName);  // tests find the figures by these names
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    return label;
}

QLabel* heading(const QString& text, QWidget* parent) {
    auto* label = new QLabel("<b>" + text + "</b>", parent);
    label->setTextFormat(Qt::RichText);
    return label;
}

QString ms(double v) {
    return QLocale().toString(v, 'f', v < 10 ? 2 : 1) + " ms";
}

// Neutral colours for the parts of an iteration or of memory that are not a module or category of
// their own: mid grey reads on light and dark backgrounds.
const QColor kOtherColor(150, 150, 150);

// Throughput in the unit its users count: tokens for a language model, else samples.
QString rateText(const PredictionSnapshot& s, const TrainingPrediction& p) {
    if (s.countsTokens())
        return formatInterval(p.tokensPerS, 0, QObject::tr(" tokens/s")) + ", " +
               QLocale().toString(p.samplesPerS.value, 'f', 1) + QObject::tr(" samples/s");
    return formatInterval(p.samplesPerS, 1, QObject::tr(" samples/s"));
}

}  // namespace

OverviewView::OverviewView(ExplorerState& state, QWidget* parent)
    : QWidget(parent), state_(state), snapshot_(state.snapshot()) {
    // The figures sit in a scroll area: their text changes with every batch, and a word-wrapped
    // label's new text re-lays out its layout up to the top. Inside a scroll area that stops at the
    // view; without it the whole window was laid out again on every slider move (the tab widget asks
    // every page's height for its width), a third of the Overview's time per move.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* content = new QWidget(scroll);
    auto* layout = new QVBoxLayout(content);
    title_ = new QLabel(this);
    title_->setObjectName("overviewTitle");
    title_->setTextFormat(Qt::RichText);
    title_->setWordWrap(true);
    layout->addWidget(title_);

    auto* form = new QFormLayout;
    throughput_ = valueLabel("throughputValue", this);
    iteration_ = valueLabel("iterationValue", this);
    memory_ = valueLabel("memoryValue", this);
    maxBatch_ = valueLabel("maxBatchValue", this);
    source_ = valueLabel("sourceValue", this);
    throughput_->setToolTip(
        tr("Training samples (for a language model tokens) per second over all GPUs: the predicted value, then its "
           "interval"));
    iteration_->setToolTip(
        tr("One training iteration (forward, backward, exposed all-reduce, optimizer step) on "
           "each GPU"));
    memory_->setToolTip(tr("Peak device memory of an iteration, CUDA context included, against the GPU's memory"));
    maxBatch_->setToolTip(tr("The largest batch per GPU whose predicted peak memory fits"));
    source_->setToolTip(
        tr("Where the figures come from: a measured profile, the shipped calibration or the "
           "datasheet roofline"));
    form->addRow(tr("Throughput:"), throughput_);
    form->addRow(tr("Iteration time:"), iteration_);
    form->addRow(tr("Peak memory:"), memory_);
    form->addRow(tr("Largest batch:"), maxBatch_);
    form->addRow(tr("Source:"), source_);
    notes_ = valueLabel("notesValue", this);
    notes_->setTextFormat(Qt::RichText);
    notes_->setToolTip(tr("What the prediction assumes or cannot charge, as the CLI's and the report's notes say"));
    form->addRow(tr("Notes:"), notes_);
    form->setRowVisible(notes_, false);
    figures_ = form;
    layout->addLayout(form);

    throughputBar_ = new BreakdownBar(this);
    throughputBar_->setObjectName("throughputBar");
    throughputBar_->setDraggable(true);
    throughputBar_->setToolTip(
        tr("Throughput at the current batch against the best over the batch sizes plotted. "
           "Drag along the bar to pick the batch size that reaches a throughput."));
    timeBar_ = new BreakdownBar(this);
    timeBar_->setObjectName("timeBar");
    memoryBar_ = new BreakdownBar(this);
    memoryBar_->setObjectName("memoryBar");
    memoryBar_->setDraggable(true);
    memoryBar_->setToolTip(
        tr("Memory by category, each at its largest during the iteration (they need not all be "
           "alive at once, so they can add up to more than the peak). Drag along the bar to pick "
           "the largest batch size whose peak stays under a memory."));
    layout->addWidget(heading(tr("Throughput (drag to set the batch size)"), this));
    layout->addWidget(throughputBar_);
    layout->addWidget(heading(tr("Iteration time by top-level module (click to select, double-click to open)"), this));
    layout->addWidget(timeBar_);
    layout->addWidget(heading(tr("Memory by category (drag to set the batch size)"), this));
    layout->addWidget(memoryBar_);
    layout->addStretch(1);
    scroll->setWidget(content);
    outer->addWidget(scroll);

    connect(throughputBar_, &BreakdownBar::dragged, this, &OverviewView::batchForThroughput);
    connect(memoryBar_, &BreakdownBar::dragged, this, &OverviewView::batchForMemory);
    connect(timeBar_, &BreakdownBar::segmentClicked, this, [this](int op) {
        if (op >= 0) state_.setSelectedOp(op);
    });
    connect(timeBar_, &BreakdownBar::segmentActivated, this, [this](int op) {
        if (op < 0) return;
        state_.setSelectedOp(op);
        Q_EMIT moduleActivated(op);
    });
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    connect(&state_, &ExplorerState::selectionChanged, this, &OverviewView::showSelection);
    refresh();
}

void OverviewView::refresh() {
    snapshot_ = state_.snapshot();
    const PredictionSnapshot& snap = *snapshot_;
    const QList<QLabel*> figures{throughput_, iteration_, memory_, maxBatch_, source_, notes_};
    figures_->setRowVisible(notes_, false);
    if (!snap.hasModel()) {
        title_->setText(snap.error.empty()
                            ? tr("<h2>No model</h2><p>Open a model, a profile or a trace (File &gt; Open).</p>")
                            : tr("<h2>No model</h2><p>Could not open the model: %1</p>")
                                  .arg(QString::fromStdString(snap.error).toHtmlEscaped()));
        for (QLabel* label : figures) label->clear();
        refreshBars();
        return;
    }
    const Graph& g = *snap.graph();
    const TrainingPrediction& p = snap.current;
    const ExplorerSettings& s = snap.settings;
    QLocale locale;
    const QString sequence = snap.countsTokens() ? tr(" · sequence %1").arg(snap.model->seq) : QString();
    // How the run is set up beyond the GPU count: sharding, accumulation, checkpointing.
    auto setUp = [](const ExplorerSettings& s) {
        QString more;
        if (s.tensorParallel > 1)
            more += (s.sequenceParallel ? tr(" in tensor- and sequence-parallel groups of %1")
                                        : tr(" in tensor-parallel groups of %1"))
                        .arg(s.tensorParallel);
        if (s.expertParallel > 1) more += tr(", the experts split over groups of %1").arg(s.expertParallel);
        if (s.zeroStage > 0) more += s.zeroStage == 3 ? tr(" · ZeRO-3 / FSDP") : tr(" · ZeRO-%1").arg(s.zeroStage);
        if (s.accumulation > 1) more += tr(" · accumulation × %1").arg(s.accumulation);
        if (s.loraRank > 0)
            more += s.loraDropout > 0 ? tr(" · LoRA rank %1, dropout %2").arg(s.loraRank).arg(s.loraDropout)
                                      : tr(" · LoRA rank %1").arg(s.loraRank);
        if (s.channelsLast) more += tr(" · channels-last");
        if (!s.masterWeights && s.precision == TrainingPrecision::Bf16Params) more += tr(" · no fp32 master weights");
        if (s.optimizerImplementation != OptimizerImplementation::Foreach && s.optimizer != Optimizer::Adam8bit)
            more += tr(" · %1 optimizer step").arg(optimizerImplementationName(s.optimizerImplementation));
        if (s.checkpointing != Checkpointing::None)
            more += " · " + QString::fromStdString(checkpointingPhrase(s.checkpointing));
        return more;
    };
    // A tensor- or expert-parallel shard's parameters and FLOPs are one GPU's.
    const QString count = locale.toString(qlonglong(g.parameterCount()));
    const QString flops = locale.toString(snap.costs.totals.forwardFlops / 1e9 / double(s.batch), 'f', 2);
    const bool shard = snap.model->tensorParallel > 1 || snap.model->expertParallel > 1;
    QString parameters = shard ? tr("%1 parameters per GPU").arg(count) : tr("%1 parameters").arg(count);
    // A mixture of experts: what one token's forward uses (of the whole model, for a shard).
    if (const int64_t active = g.modelActiveParameterCount(); active < g.modelParameterCount())
        parameters += (shard ? tr(" (the model's %1 active per token)") : tr(" (%1 active per token)"))
                          .arg(locale.toString(qlonglong(active)));
    title_->setText(tr("<h2>%1</h2><p>%2, %3%9 · %4 · batch %5 per GPU · %6 · %7 · %8</p>")
                        .arg(QString::fromStdString(g.name).toHtmlEscaped())
                        .arg(parameters)
                        .arg(shard ? tr("%1 GFLOP forward per sample on each GPU").arg(flops)
                                   : tr("%1 GFLOP forward per sample").arg(flops))
                        .arg(QString::fromStdString(p.gpuName).toHtmlEscaped())
                        .arg(s.batch)
                        .arg(trainingPrecisionName(s.precision), optimizerName(s.optimizer))
                        .arg(tr("%1 GPU(s)").arg(s.gpus) + setUp(s))  // the set-up after the count it follows
                        .arg(sequence));
    refreshBars();
    if (!p.supported) {
        for (QLabel* label : figures) label->clear();
        throughput_->setText(tr("not supported: %1").arg(QString::fromStdString(p.reason)));
        return;
    }
    const QString source = QString::fromUtf8(predictionSourceName(p.source));
    // A batch that does not fit never headlines a throughput as if it ran: the figure is what the
    // GPU would reach with the memory, said so, beside the largest batch that does fit.
    if (p.fits)
        throughput_->setText(rateText(snap, p) + " · " + source);
    else
        throughput_->setText(
            tr("<b>does not fit</b> (peak %1 of %2): would be %3 with the memory; the largest batch that fits is %4")
                .arg(formatBytes(p.peakMemoryBytes.value), formatBytes(p.capacityBytes), rateText(snap, p),
                     p.maxBatch.value < 1 ? tr("none") : QString::number(p.maxBatch.value, 'f', 0)));
    iteration_->setText(formatInterval(p.iterationMs, 2, tr(" ms")) + " · " + source);
    const Interval gb{p.peakMemoryBytes.value / kGiB, p.peakMemoryBytes.low / kGiB, p.peakMemoryBytes.high / kGiB};
    memory_->setText(tr("%1 of %2 (%3) · model of the allocator")
                         .arg(formatInterval(gb, 2, tr(" GiB")), formatBytes(p.capacityBytes),
                              p.fits ? tr("fits") : tr("does not fit")));
    maxBatch_->setText(p.maxBatch.value < 1 ? tr("none: batch 1 does not fit")
                                            : formatInterval(p.maxBatch, 0, QString()) + tr(" per GPU"));
    QString detail = QString::fromStdString(p.sourceDetail);
    if (!snap.model->profileProblem.empty())
        detail += tr("; the profile is not used: %1").arg(QString::fromStdString(snap.model->profileProblem));
    source_->setText(detail);
    QStringList notes;
    for (const std::string& n : p.notes) notes << "• " + QString::fromStdString(n).toHtmlEscaped();
    notes_->setText(notes.join("<br>"));
    figures_->setRowVisible(notes_, !notes.isEmpty());
}

void OverviewView::updateModuleMap() {
    // Keyed by the graph, not the model's generation: another LoRA rank or tensor-parallel shard is
    // another graph of the same model, whose operations are numbered anew.
    // Held, so that no other graph can take its address.
    std::shared_ptr<const Graph> graph = snapshot_->model ? snapshot_->model->graph : nullptr;
    if (mappedGraph_ == graph && graph) return;
    mappedGraph_ = std::move(graph);
    moduleKeyOfOp_.clear();
    moduleNameOfKey_.clear();
    if (!snapshot_->hasModel()) return;
    const ModelCosts& costs = snapshot_->costs;
    const size_t ops = snapshot_->graph()->ops.size();
    moduleKeyOfOp_.assign(ops, -1);
    moduleNameOfKey_.assign(ops, QString());
    if (costs.modules.empty()) return;
    // Each top-level module's operations, and the model's own (outside any module) as one more group.
    auto collect = [&](auto&& self, int module, std::vector<int>& out) -> void {
        const ModuleCost& m = costs.modules[size_t(module)];
        for (int layer : m.layers)
            if (layer >= 0 && size_t(layer) < costs.layers.size()) out.push_back(costs.layers[size_t(layer)].op);
        for (int child : m.children)
            if (child > module && size_t(child) < costs.modules.size()) self(self, child, out);
    };
    std::vector<std::pair<QString, std::vector<int>>> groups;
    for (int child : costs.modules[0].children) {
        if (child <= 0 || size_t(child) >= costs.modules.size()) continue;
        groups.push_back({QString::fromStdString(costs.modules[size_t(child)].name), {}});
        collect(collect, child, groups.back().second);
    }
    groups.push_back({tr("(model)"), {}});
    for (int layer : costs.modules[0].layers)
        if (layer >= 0 && size_t(layer) < costs.layers.size())
            groups.back().second.push_back(costs.layers[size_t(layer)].op);
    for (const auto& [name, members] : groups) {
        if (members.empty()) continue;
        const int key = *std::min_element(members.begin(), members.end());
        if (key < 0 || size_t(key) >= ops) continue;
        moduleNameOfKey_[size_t(key)] = name;
        for (int op : members)
            if (op >= 0 && size_t(op) < ops) moduleKeyOfOp_[size_t(op)] = key;
    }
}

void OverviewView::refreshBars() {
    updateModuleMap();
    const PredictionSnapshot& snap = *snapshot_;
    const TrainingPrediction& p = snap.current;
    if (!snap.hasModel() || !p.supported) {
        for (BreakdownBar* bar : {throughputBar_, timeBar_, memoryBar_}) {
            bar->setSegments({}, 1);
            bar->setMarkers({});
        }
        return;
    }
    QLocale locale;

    // Throughput against the best of the batch sweep, in tokens for a language model.
    const double scale = snap.countsTokens() ? double(snap.model->seq) : 1;
    const QString unit = snap.countsTokens() ? tr("tokens/s") : tr("samples/s");
    const double rate = p.samplesPerS.value * scale;
    double best = rate;
    for (const SweepPoint& point : snap.sweep.points) best = std::max(best, point.samplesPerS.value * scale);
    throughputBar_->setSegments(
        {{tr("%1 %2 at batch %3").arg(locale.toString(rate, 'f', scale > 1 ? 0 : 1), unit).arg(snap.settings.batch),
          rate, categoryColor(0), tr("Predicted throughput; its interval is %1").arg(rateText(snap, p)), -1}},
        best * 1.05);
    throughputBar_->setMarkers({{best, tr("best %1").arg(locale.toString(best, 'f', 0))}});

    // Iteration time: top-level modules in graph order, then what is not a layer.
    std::map<int, double> byModule;  // key (first op) -> forward + backward ms
    for (const LayerTime& t : p.layers) {
        const int key = t.op >= 0 && size_t(t.op) < moduleKeyOfOp_.size() ? moduleKeyOfOp_[size_t(t.op)] : -1;
        byModule[key] += t.forwardMs.value + t.backwardMs.value;
    }
    QVector<BreakdownBar::Segment> time;
    int colour = 0;
    for (const auto& [key, total] : byModule) {
        const QString name = key >= 0 ? moduleNameOfKey_[size_t(key)] : tr("(other layers)");
        time.push_back({name + " " + ms(total), total, categoryColor(colour++),
                        tr("%1: forward and backward %2, %3% of the iteration")
                            .arg(name, ms(total), locale.toString(100 * total / p.iterationMs.value, 'f', 1)),
                        key});
    }
    const struct {
        QString name;
        double value;
        QString tip;
    } extra[] = {
        {tr("recompute"), p.recomputeMs.value, tr("Checkpointing's second forward")},
        {tr("all-reduce"), p.communicationMs.value, tr("Gradient all-reduce not hidden under backward")},
        {tr("slowest GPU"), p.slowestGpuWaitMs.value,
         tr("Every step waits for the slowest of the data-parallel GPUs (step times vary from GPU to GPU)")},
        {tr("optimizer step"), p.optimizerMs.value, tr("The optimizer's update of every parameter")},
        {tr("other"), p.otherMs.value, tr("Measured iteration time outside the layers")},
        {tr("waiting for the host"), p.hostBoundMs.value,
         tr("The GPU idle while eager PyTorch dispatches operators faster kernels have already finished")},
    };
    int shade = 0;
    for (const auto& e : extra)
        if (e.value > 0)
            time.push_back({e.name + " " + ms(e.value), e.value, kOtherColor.darker(100 + 25 * shade++), e.tip, -1});
    timeBar_->setSegments(time, p.iterationMs.value);
    timeBar_->setMarkers({});
    showSelection(state_.selectedOp());  // the selection is not a prediction: the state's

    // Memory at the peak by category against the capacity: the segments add up to the peak marker.
    const MemoryBreakdown& m = p.memory;
    const PeakShares live = peakShares(m);
    const struct {
        QString name;
        double bytes;
        QString tip;
    } categories[] = {
        {tr("weights"), m.weights + m.castWeightCopies, tr("Parameters and buffers, with autocast's 16-bit copies")},
        {tr("gradients"), m.gradients, tr("One gradient per parameter (DDP: its bucket buffers too)")},
        {tr("optimizer state"), m.optimizerState, tr("Momentum and variance buffers of the optimizer")},
        {tr("activations"), live.activations,
         live.activations < m.activations
             ? tr("Tensors saved for backward still held at the peak: %1 of the %2 saved (backward frees them as "
                  "the gradients grow; checkpointing keeps fewer)")
                   .arg(formatBytes(live.activations), formatBytes(m.activations))
             : tr("Tensors saved for backward (checkpointing keeps fewer)")},
        {tr("inputs"), m.inputs, tr("The batch")},
        {tr("workspace"), live.workspace,
         tr("cuBLAS workspaces and transient tensors live at the peak (the largest transient: %1)")
             .arg(formatBytes(m.workspace))},
        {tr("fragmentation"), m.fragmentation, tr("Reserved but unallocated in the caching allocator (estimate)")},
        {tr("context"), m.cudaContext, tr("CUDA context and library kernels, outside the allocator (estimate)")},
    };
    QVector<BreakdownBar::Segment> memory;
    int index = 0;
    for (const auto& c : categories) {
        const QColor color = categoryColor(index++);
        if (c.bytes <= 0) continue;
        memory.push_back({c.name + " " + formatBytes(c.bytes), c.bytes, color,
                          c.name + ": " + formatBytes(c.bytes) + "\n" + c.tip, -1});
    }
    double sum = 0;
    for (const auto& s : memory) sum += s.value;
    memoryBar_->setSegments(memory, std::max({p.capacityBytes, p.peakMemoryBytes.value, sum}) * 1.05);
    memoryBar_->setMarkers({{p.capacityBytes, tr("capacity %1").arg(formatBytes(p.capacityBytes))},
                            {p.peakMemoryBytes.value, tr("peak %1").arg(formatBytes(p.peakMemoryBytes.value))}});
}

void OverviewView::showSelection(int op) {
    const int key = op >= 0 && size_t(op) < moduleKeyOfOp_.size() ? moduleKeyOfOp_[size_t(op)] : -1;
    timeBar_->setHighlightedKey(key);
}

void OverviewView::batchForThroughput(double rate) {
    // The smallest batch that reaches the throughput (in the bar's unit); the fastest one when none does.
    if (!snapshot_->hasModel()) return;
    const double samplesPerS = rate / (snapshot_->countsTokens() ? double(snapshot_->model->seq) : 1);
    const std::vector<SweepPoint>& points = snapshot_->sweep.points;
    if (points.empty()) return;
    const SweepPoint* fastest = &points.front();
    for (const SweepPoint& point : points) {
        if (point.samplesPerS.value >= samplesPerS) return state_.setBatch(point.batch);
        if (point.samplesPerS.value > fastest->samplesPerS.value) fastest = &point;
    }
    state_.setBatch(fastest->batch);
}

void OverviewView::batchForMemory(double bytes) {
    // The largest batch whose predicted peak stays under the memory; batch 1 when none does.
    const std::vector<SweepPoint>& points = snapshot_->sweep.points;
    if (points.empty()) return;
    int64_t batch = points.front().batch;
    for (const SweepPoint& point : points)
        if (point.peakMemoryBytes.value <= bytes) batch = point.batch;
    state_.setBatch(batch);
}

}  // namespace ts::gui
