#include "timeline_view.h"

#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "breakdown_bar.h"
#include "explorer_state.h"
#include "view_refresher.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

constexpr int kMargin = 8;
constexpr int kRowHeight = 34;

QColor kindColor(TimelineView::Kind kind) {
    switch (kind) {
        case TimelineView::Kind::Forward:
            return categoryColor(0);
        case TimelineView::Kind::Recompute:
            return categoryColor(3);
        case TimelineView::Kind::Backward:
            return categoryColor(1);
        case TimelineView::Kind::Communication:
            return categoryColor(6);
        case TimelineView::Kind::Optimizer:
            return categoryColor(4);
        case TimelineView::Kind::Other:
            return categoryColor(9);
        case TimelineView::Kind::Kernel:
            return categoryColor(5);
    }
    return categoryColor(9);
}

QString kindName(TimelineView::Kind kind) {
    switch (kind) {
        case TimelineView::Kind::Forward:
            return TimelineView::tr("forward");
        case TimelineView::Kind::Recompute:
            return TimelineView::tr("recompute (checkpointing)");
        case TimelineView::Kind::Backward:
            return TimelineView::tr("backward");
        case TimelineView::Kind::Communication:
            return TimelineView::tr("all-reduce (exposed)");
        case TimelineView::Kind::Optimizer:
            return TimelineView::tr("optimizer step");
        case TimelineView::Kind::Other:
            return TimelineView::tr("other (measured, outside the layers)");
        case TimelineView::Kind::Kernel:
            return TimelineView::tr("kernel");
    }
    return {};
}

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

}  // namespace

TimelineView::TimelineView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    setObjectName("timeline");
    setMouseTracking(true);
    setMinimumHeight(4 * kRowHeight);
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    connect(&state_, &ExplorerState::selectionChanged, this, qOverload<>(&QWidget::update));
    refresh();
}

void TimelineView::refresh() {
    spans_.clear();
    kernels_.clear();
    totalMs_ = 0;
    kernelSource_.clear();
    message_.clear();
    const TrainingPrediction& p = state_.current();
    if (!state_.hasModel())
        message_ = tr("No model: %1").arg(state_.error());
    else if (!p.supported)
        message_ = tr("No prediction: %1").arg(QString::fromStdString(p.reason));
    if (!message_.isEmpty()) return update();

    const Graph& g = *state_.graph();
    double t = 0;
    auto add = [&](double ms, int op, Kind kind, const QString& label) {
        if (ms <= 0) return;
        spans_.push_back({t, ms, op, kind, label});
        t += ms;
    };
    // "layer1.0.conv1/Conv" -> "conv1": what fits in a bar; the tooltip has the whole name.
    auto opName = [&](int op) {
        if (op < 0 || size_t(op) >= g.ops.size()) return QString();
        QString name = QString::fromStdString(g.ops[size_t(op)].name).section('/', 0, 0);
        return name.section('.', -1);
    };
    for (const LayerTime& layer : p.layers) add(layer.forwardMs.value, layer.op, Kind::Forward, opName(layer.op));
    add(p.recomputeMs.value, -1, Kind::Recompute, kindName(Kind::Recompute));
    for (auto it = p.layers.rbegin(); it != p.layers.rend(); ++it)
        add(it->backwardMs.value, it->op, Kind::Backward, opName(it->op));
    add(p.communicationMs.value, -1, Kind::Communication, kindName(Kind::Communication));
    add(p.optimizerMs.value, -1, Kind::Optimizer, kindName(Kind::Optimizer));
    add(p.otherMs.value, -1, Kind::Other, kindName(Kind::Other));
    add(p.hostBoundMs.value, -1, Kind::Other, tr("waiting for the host"));
    totalMs_ = t;
    viewStartMs_ = std::clamp(viewStartMs_, 0.0, totalMs_ - viewMs());

    if (const ProfileRun* run = kernelRun(state_)) {
        std::vector<const LayerProfile*> byOp(g.ops.size(), nullptr);
        for (const LayerProfile& l : run->layers)
            if (l.op >= 0 && size_t(l.op) < byOp.size()) byOp[size_t(l.op)] = &l;
        for (const Span& span : spans_) {
            if (span.op < 0 || !byOp[size_t(span.op)]) continue;
            const LayerProfile& l = *byOp[size_t(span.op)];
            const std::vector<KernelRecord>& ks = span.kind == Kind::Backward ? l.backwardKernels : l.forwardKernels;
            double sum = 0;
            for (const KernelRecord& k : ks) sum += k.durationUs;
            if (sum <= 0) continue;
            double start = span.startMs;
            for (const KernelRecord& k : ks) {
                const double ms = span.ms * k.durationUs / sum;  // the measured share of the predicted bar
                QString label = QString::fromStdString(k.name);
                if (k.launches > 1) label += tr(" ×%1").arg(k.launches);
                if (k.tensorCore) label += tr(" (tensor cores)");
                kernels_.push_back({start, ms, span.op, Kind::Kernel, label});
                start += ms;
            }
        }
        kernelSource_ = tr("kernels measured on %1 at batch %2, each its measured share of the layer's predicted time")
                            .arg(QString::fromStdString(state_.profile()->environment.deviceName))
                            .arg(run->batch);
    }
    update();
}

QRectF TimelineView::rowRect(int row) const {
    const int top = fontMetrics().height() * 2 + 8;  // the title and the time axis
    return QRectF(kMargin, top + row * (kRowHeight + 6), width() - 2 * kMargin, kRowHeight);
}

QRectF TimelineView::spanRect(const Span& span, int row) const {
    const QRectF r = rowRect(row);
    const double scale = viewMs() > 0 ? r.width() / viewMs() : 0;
    return QRectF(r.left() + (span.startMs - viewStartMs_) * scale, r.top(), std::max(span.ms * scale, 1.0),
                  r.height());
}

double TimelineView::viewMs() const {
    return totalMs_ / zoom_;
}

void TimelineView::wheelEvent(QWheelEvent* event) {
    // Zoom about the time under the mouse; the whole iteration at zoom 1.
    const QRectF r = rowRect(0);
    if (totalMs_ <= 0 || r.width() <= 0) return;
    const double fraction = std::clamp((event->position().x() - r.left()) / r.width(), 0.0, 1.0);
    const double atMouse = viewStartMs_ + fraction * viewMs();
    zoom_ = std::clamp(zoom_ * std::pow(1.0015, event->angleDelta().y()), 1.0, 1000.0);
    viewStartMs_ = std::clamp(atMouse - fraction * viewMs(), 0.0, totalMs_ - viewMs());
    update();
    event->accept();
}

int TimelineView::spanAt(const QPointF& pos) const {
    if (!rowRect(0).contains(pos)) return -1;
    for (int i = 0; i < spans_.size(); ++i)
        if (spanRect(spans_[i], 0).contains(pos)) return i;
    return -1;
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QPalette& pal = palette();
    const QFontMetrics fm = fontMetrics();
    painter.fillRect(rect(), pal.color(QPalette::Base));
    painter.setPen(pal.color(QPalette::Text));
    if (!message_.isEmpty()) {
        painter.drawText(rect().adjusted(kMargin, kMargin, -kMargin, -kMargin), Qt::TextWordWrap, message_);
        return;
    }
    QLocale locale;
    painter.drawText(
        QPointF(kMargin, fm.ascent() + 2),
        tr("One iteration on %1: %2 ms predicted (forward, backward in reverse, optimizer step); wheel to zoom")
            .arg(QString::fromStdString(state_.current().gpuName), locale.toString(totalMs_, 'f', 2)));

    // Time axis: about one tick per 100 pixels at a round step.
    const QRectF row0 = rowRect(0);
    const double axisY = row0.top() - 4;
    painter.setPen(QPen(pal.color(QPalette::Mid), 1));
    painter.drawLine(QPointF(row0.left(), axisY), QPointF(row0.right(), axisY));
    if (viewMs() > 0) {
        const double raw = viewMs() / std::max(row0.width() / 100.0, 1.0);
        const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
        const double step = raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
        painter.setPen(pal.color(QPalette::Text));
        for (double ms = std::ceil(viewStartMs_ / step) * step; ms <= viewStartMs_ + viewMs() + 1e-9; ms += step) {
            const double x = row0.left() + (ms - viewStartMs_) / viewMs() * row0.width();
            painter.drawLine(QPointF(x, axisY - 3), QPointF(x, axisY));
            painter.drawText(QPointF(std::min(x + 2, row0.right() - fm.horizontalAdvance("0000 ms")), axisY - 4),
                             locale.toString(ms, 'g', 4) + " ms");
        }
    }

    const int selected = state_.selectedOp();
    painter.save();
    painter.setClipRect(QRectF(row0.left(), row0.top() - 3, row0.width(), rowRect(1).bottom() - row0.top() + 6));
    auto drawRow = [&](const QVector<Span>& spans, int row) {
        for (int i = 0; i < spans.size(); ++i) {
            const Span& s = spans[i];
            const QRectF r = spanRect(s, row);
            QColor color = kindColor(s.kind);
            if (i % 2) color = color.lighter(115);  // neighbours stay apart without borders
            const bool isSelected = selected >= 0 && s.op == selected;
            painter.fillRect(r, isSelected ? pal.color(QPalette::Highlight) : color);
            if (r.right() < row0.left() || r.left() > row0.right()) continue;
            if (r.width() > fm.horizontalAdvance("conv1")) {
                painter.setPen(isSelected ? pal.color(QPalette::HighlightedText) : QColor(Qt::black));
                painter.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                                 fm.elidedText(s.label, Qt::ElideRight, int(r.width()) - 5));
            }
        }
        // The selection on top, so that a thin bar still shows.
        for (const Span& s : spans)
            if (selected >= 0 && s.op == selected) {
                painter.setPen(QPen(pal.color(QPalette::Highlight), 3));
                painter.setBrush(Qt::NoBrush);
                painter.drawRect(spanRect(s, row).adjusted(-1, -2, 1, 2));
            }
    };
    drawRow(spans_, 0);
    drawRow(kernels_, 1);
    painter.restore();

    // Legend and the kernels' source under the rows.
    double y = rowRect(kernels_.isEmpty() ? 1 : 2).top() + fm.height();
    double x = kMargin;
    painter.setPen(pal.color(QPalette::Text));
    for (Kind kind :
         {Kind::Forward, Kind::Recompute, Kind::Backward, Kind::Communication, Kind::Optimizer, Kind::Other}) {
        const QString name = kindName(kind);
        painter.fillRect(QRectF(x, y - fm.ascent() + 2, fm.ascent() - 2, fm.ascent() - 2), kindColor(kind));
        painter.drawText(QPointF(x + fm.ascent() + 2, y), name);
        x += fm.ascent() + 2 + fm.horizontalAdvance(name) + 16;
    }
    y += fm.height() + 4;
    painter.drawText(QPointF(kMargin, y), kernelSource_.isEmpty()
                                              ? tr("No kernels: load a profile recorded with CUPTI at this precision "
                                                   "to see each layer's kernels")
                                              : kernelSource_);
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
    QPointF pos = event->position();
    // A click on a kernel selects its layer: look it up in the layer row above.
    if (rowRect(1).contains(pos) && !kernels_.isEmpty()) pos.setY(rowRect(0).center().y());
    const int i = spanAt(pos);
    if (i >= 0 && spans_[i].op >= 0) state_.setSelectedOp(spans_[i].op);
}

bool TimelineView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QPointF pos = help->pos();
        QLocale locale;
        auto tip = [&](const Span& s) {
            return tr("%1\n%2: %3 ms, from %4 ms")
                .arg(s.label, kindName(s.kind), locale.toString(s.ms, 'f', 3), locale.toString(s.startMs, 'f', 3));
        };
        if (const int i = spanAt(pos); i >= 0) {
            QToolTip::showText(help->globalPos(), tip(spans_[i]), this);
            return true;
        }
        if (rowRect(1).contains(pos))
            for (const Span& k : kernels_)
                if (spanRect(k, 1).contains(pos)) {
                    QToolTip::showText(help->globalPos(), tip(k), this);
                    return true;
                }
        QToolTip::showText(help->globalPos(),
                           tr("One training iteration as predicted: bar lengths are predicted times. Click a layer "
                              "to select it in every view."),
                           this);
        return true;
    }
    return QWidget::event(event);
}

}  // namespace ts::gui
