#include "trace_gpu_view.h"

#include <QLabel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>

#include "explorer_state.h"
#include "trace_style.h"
#include "view_refresher.h"

namespace ts::gui {

TraceGpuView::TraceGpuView(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    setObjectName("traceGpus");
    auto* layout = new QVBoxLayout(this);
    caption_ = new QLabel(this);
    caption_->setWordWrap(true);
    layout->addWidget(caption_);
    gpus_ = new QStandardItemModel(this);
    classes_ = new QStandardItemModel(this);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    gpuTable_ = makeTraceTable(gpus_, SpeedUp, splitter);
    gpuTable_->setObjectName("traceGpuTable");
    gpuTable_->setRootIsDecorated(false);
    auto* classBox = new QWidget(splitter);
    auto* classLayout = new QVBoxLayout(classBox);
    classLayout->setContentsMargins(0, 0, 0, 0);
    classCaption_ = new QLabel(classBox);
    classCaption_->setWordWrap(true);
    classLayout->addWidget(classCaption_);
    classTable_ = makeTraceTable(classes_, MeasuredMs, classBox);
    classTable_->setRootIsDecorated(false);
    classLayout->addWidget(classTable_);
    splitter->addWidget(gpuTable_);
    splitter->addWidget(classBox);
    layout->addWidget(splitter, 1);
    connect(gpuTable_, &QTreeView::clicked, this, [this](const QModelIndex& index) {
        const QString id = index.siblingAtColumn(Gpu).data(kGpuIdRole).toString();
        if (!id.isEmpty()) state_.setTargetGpu(id.toStdString());
    });
    refresher_ = new ViewRefresher(this, [this] { refresh(); });
    connect(&state_, &ExplorerState::changed, refresher_, &ViewRefresher::request);
    refresh();
}

QString TraceGpuView::caption() const {
    return caption_->text();
}

void TraceGpuView::refresh() {
    gpus_->clear();
    gpus_->setHorizontalHeaderLabels({tr("GPU"), tr("Predicted step ms"), tr("Speed-up"), tr("Note")});
    const TraceDocument* doc = state_.trace();
    if (!doc) return caption_->clear();
    if (!doc->predictionProblem.empty()) {
        caption_->setText(tr("This trace cannot be predicted on other GPUs: %1.")
                              .arg(QString::fromStdString(doc->predictionProblem)));
        fillClasses();
        return;
    }
    const TracePredictions* predictions = state_.tracePredictions();
    const size_t total = state_.database().gpus().size();
    double measured = 0;
    // At another batch size the speed-up compares samples per second.
    const ts::predictors::TraceChange change = predictions ? predictions->change : ts::predictors::TraceChange{};
    const double samples =
        change.batch > 0 && doc->batch.batch > 0 ? double(change.batch) / double(doc->batch.batch) : 1;
    if (predictions)
        for (const TraceGpuPrediction& g : predictions->gpus) {
            QStandardItem* name = textItem(QString::fromStdString(g.gpuName));
            name->setData(QString::fromStdString(g.gpuId), kGpuIdRole);
            name->setToolTip(QString::fromStdString(g.gpuId));
            const bool target = g.gpuId == state_.settings().gpuId;
            if (target || (doc->origin && g.gpuId == doc->origin->id)) {
                QFont font = name->font();
                font.setBold(target);
                font.setItalic(doc->origin && g.gpuId == doc->origin->id);
                name->setFont(font);
            }
            if (!g.supported) {
                gpus_->appendRow(
                    {name, textItem(QString()), textItem(QString()), textItem(QString::fromStdString(g.problem))});
                continue;
            }
            const ts::predictors::TraceReplay& r = g.prediction.replay;
            measured = r.measuredMedianMs;
            const double speedUp = r.predictedMedianMs > 0 ? samples * r.measuredMedianMs / r.predictedMedianMs : 0;
            QStandardItem* speed = numberItem(speedUp, 2);
            speed->setText(speed->text() + "×");
            QString note = doc->origin && g.gpuId == doc->origin->id ? tr("the traced GPU") : QString();
            gpus_->appendRow({name, numberItem(r.predictedMedianMs, 2), speed, textItem(note)});
        }
    // The batch size and precision the predictions are at: the recorded ones unless the controls
    // changed them (TraceRepredictor).
    QString at = change.batch > 0       ? tr("at batch %1 instead of its %2").arg(change.batch).arg(doc->batch.batch)
                 : doc->batch.batch > 0 ? tr("at its batch of %1").arg(doc->batch.batch)
                                        : tr("at its batch size");
    const ts::predictors::TrainingPrecision precision =
        ts::predictors::changedPrecision(change, doc->precision.precision);
    at += precision != doc->precision.precision
              ? tr(", in %1 instead of %2")
                    .arg(ts::predictors::trainingPrecisionName(precision),
                         ts::predictors::trainingPrecisionName(doc->precision.precision))
              : tr(", in %1 as recorded").arg(ts::predictors::trainingPrecisionName(doc->precision.precision));
    QString text =
        tr("The median step of %1 predicted on each GPU %2 (kernels moved by their launch and shapes, host "
           "time kept as measured); measured on %3: %4. Speed-up: %5. Click a GPU to see its kernel "
           "classes.")
            .arg(QString::fromStdString(displayName(doc->spec)), at, QString::fromStdString(doc->summary.gpuName),
                 formatDurationMs(measured),
                 change.batch > 0 ? tr("samples per second over the measured job's") : tr("measured / predicted"));
    if (predictions && !predictions->changeProblem.empty())
        text = tr("%1 cannot be predicted at these settings: %2.")
                   .arg(QString::fromStdString(displayName(doc->spec)),
                        QString::fromStdString(predictions->changeProblem));
    if (!predictions || !predictions->complete)
        text +=
            " " + tr("Predicted on %1 of %2 GPUs so far.").arg(predictions ? predictions->gpus.size() : 0).arg(total);
    caption_->setText(text);
    fitColumns(gpuTable_);
    fillClasses();
}

void TraceGpuView::fillClasses() {
    classes_->clear();
    classes_->setHorizontalHeaderLabels(
        {tr("Kernel class"), tr("Activities/step"), tr("Measured ms/step"), tr("Predicted ms/step"), tr("Ratio")});
    const TracePredictions* predictions = state_.tracePredictions();
    const TraceGpuPrediction* g = predictions ? predictions->find(state_.settings().gpuId) : nullptr;
    if (!g || !g->supported) {
        classCaption_->setText(
            g ? tr("%1: %2").arg(QString::fromStdString(g->gpuName), QString::fromStdString(g->problem))
              : tr("No prediction for the target GPU yet."));
        return;
    }
    const ts::predictors::TracePrediction& p = g->prediction;
    const double steps = double(std::max<size_t>(p.replay.steps.size(), 1));
    for (const ts::predictors::TraceClassTime& c : p.classes) {
        QStandardItem* name = textItem(kernelClassLabel(c.kind));
        name->setData(kernelClassColor(c.kind), Qt::DecorationRole);
        QStandardItem* ratio = numberItem(c.measuredMs > 0 ? c.predictedMs / c.measuredMs : 0, 2);
        ratio->setText(ratio->text() + "×");
        classes_->appendRow({name, numberItem(double(c.activities) / steps, 1), numberItem(c.measuredMs, 3),
                             numberItem(c.predictedMs, 3), ratio});
    }
    QStringList notes;
    for (const std::string& note : p.notes) notes << "• " + QString::fromStdString(note).toHtmlEscaped();
    classCaption_->setText(tr("<b>%1</b>: the median step %2 (measured %3); GPU time per step by kernel class.")
                               .arg(QString::fromStdString(g->gpuName).toHtmlEscaped(),
                                    formatDurationMs(p.replay.predictedMedianMs),
                                    formatDurationMs(p.replay.measuredMedianMs)) +
                           (notes.isEmpty() ? QString() : "<br>" + notes.join("<br>")));
    fitColumns(classTable_);
}

}  // namespace ts::gui
