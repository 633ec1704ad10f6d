#include "overview_view.h"

#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

#include "explorer_state.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

QLabel* valueLabel(const char* objectName, QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setObjectName(objectName);  // tests find the figures by these names
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    return label;
}

}  // namespace

OverviewView::OverviewView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    auto* layout = new QVBoxLayout(this);
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
    form->addRow(tr("Throughput:"), throughput_);
    form->addRow(tr("Iteration time:"), iteration_);
    form->addRow(tr("Peak memory:"), memory_);
    form->addRow(tr("Largest batch:"), maxBatch_);
    form->addRow(tr("Source:"), source_);
    layout->addLayout(form);
    layout->addStretch(1);
    refresh();
}

void OverviewView::refresh() {
    const QList<QLabel*> figures{throughput_, iteration_, memory_, maxBatch_, source_};
    if (!state_.hasModel()) {
        title_->setText(tr("<h2>No model</h2><p>Could not open the model: %1</p>").arg(state_.error().toHtmlEscaped()));
        for (QLabel* label : figures) label->clear();
        return;
    }
    const Graph& g = *state_.graph();
    const TrainingPrediction& p = state_.current();
    const ExplorerSettings& s = state_.settings();
    QLocale locale;
    title_->setText(tr("<h2>%1</h2><p>%2 parameters, %3 GFLOP forward per sample · %4 · batch %5 per GPU · %6 · "
                       "%7 · %8 GPU(s)</p>")
                        .arg(QString::fromStdString(g.name).toHtmlEscaped())
                        .arg(locale.toString(qlonglong(g.parameterCount())))
                        .arg(state_.costs().totals.forwardFlops / 1e9 / double(s.batch), 0, 'f', 2)
                        .arg(QString::fromStdString(p.gpuName).toHtmlEscaped())
                        .arg(s.batch)
                        .arg(trainingPrecisionName(s.precision), optimizerName(s.optimizer))
                        .arg(s.gpus));
    if (!p.supported) {
        for (QLabel* label : figures) label->clear();
        throughput_->setText(tr("not supported: %1").arg(QString::fromStdString(p.reason)));
        return;
    }
    const QString source = QString::fromUtf8(predictionSourceName(p.source));
    throughput_->setText(formatInterval(p.samplesPerS, 1, tr(" samples/s")) + " · " + source);
    iteration_->setText(formatInterval(p.iterationMs, 2, tr(" ms")) + " · " + source);
    const Interval gb{p.peakMemoryBytes.value / 1e9, p.peakMemoryBytes.low / 1e9, p.peakMemoryBytes.high / 1e9};
    memory_->setText(tr("%1 of %2 (%3) · model of the allocator")
                         .arg(formatInterval(gb, 2, tr(" GB")), formatBytes(p.capacityBytes),
                              p.fits ? tr("fits") : tr("does not fit")));
    maxBatch_->setText(p.maxBatch.value < 1 ? tr("none: batch 1 does not fit")
                                            : formatInterval(p.maxBatch, 0, QString()) + tr(" per GPU"));
    source_->setText(QString::fromStdString(p.sourceDetail));
}

}  // namespace ts::gui
