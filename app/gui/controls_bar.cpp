#include "controls_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "explorer_state.h"
#include "trace_document.h"

namespace ts::gui {

using namespace ts::predictors;

int64_t batchAtSlider(int position) {
    const double fraction = double(std::clamp(position, 0, kSliderSteps)) / kSliderSteps;
    return std::clamp<int64_t>(std::llround(std::pow(double(ExplorerState::kMaxBatch), fraction)), 1,
                               ExplorerState::kMaxBatch);
}

int sliderAtBatch(int64_t batch) {
    batch = std::clamp<int64_t>(batch, 1, ExplorerState::kMaxBatch);
    return int(std::lround(kSliderSteps * std::log(double(batch)) / std::log(double(ExplorerState::kMaxBatch))));
}

ControlsBar::ControlsBar(ExplorerState& state, QWidget* parent) : QWidget(parent), state_(state) {
    // Two rows: the batch slider gets the whole width, the other settings share the second.
    auto* rows = new QVBoxLayout(this);
    rows->setContentsMargins(0, 0, 0, 0);
    auto* batchRow = new QHBoxLayout;
    auto* row = new QHBoxLayout;
    rows->addLayout(batchRow);
    rows->addLayout(row);

    // The spin box holds the batch size; the slider moves over it on a log scale (1 to kMaxBatch),
    // so that small batches get as much of its travel as large ones. Each follows the other.
    batchSlider_ = new QSlider(Qt::Horizontal, this);
    batchSlider_->setObjectName("batchSlider");
    batchSlider_->setRange(0, kSliderSteps);
    batchSpin_ = new QSpinBox(this);
    batchSpin_->setObjectName("batchSpin");
    batchSpin_->setRange(1, int(ExplorerState::kMaxBatch));
    connect(batchSlider_, &QSlider::valueChanged, this, [this](int position) {
        const QSignalBlocker blocker(batchSpin_);
        batchSpin_->setValue(int(batchAtSlider(position)));
        state_.setBatch(batchSpin_->value());
    });
    connect(batchSpin_, &QSpinBox::valueChanged, this, [this](int batch) {
        const QSignalBlocker blocker(batchSlider_);
        batchSlider_->setValue(sliderAtBatch(batch));
        state_.setBatch(batch);
    });

    precision_ = new QComboBox(this);
    for (TrainingPrecision p : kAllTrainingPrecisions) precision_->addItem(trainingPrecisionName(p), int(p));
    connect(precision_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setPrecision(TrainingPrecision(precision_->currentData().toInt())); });

    optimizer_ = new QComboBox(this);
    optimizer_->setObjectName("optimizer");
    optimizer_->setToolTip(
        tr("A model opens with its kind's optimizer (language models AdamW, vision models SGD with momentum) or the "
           "one you last chose for that kind"));
    for (Optimizer o : kAllOptimizers) optimizer_->addItem(optimizerName(o), int(o));
    connect(optimizer_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setOptimizer(Optimizer(optimizer_->currentData().toInt())); });
    optimizerImplementation_ = new QComboBox(this);
    optimizerImplementation_->setObjectName("optimizerImplementation");
    optimizerImplementation_->setToolTip(
        tr("How the optimizer's update runs: foreach (PyTorch's default: a kernel per operation over every tensor; "
           "Adam keeps a parameter-sized temporary), for-loop (foreach=False, Hugging Face's adamw_hf: kernels per "
           "tensor, each issued from Python) or fused (fused=True, apex's FusedAdam: one pass, no temporary)"));
    for (OptimizerImplementation i : kAllOptimizerImplementations)
        optimizerImplementation_->addItem(optimizerImplementationName(i), int(i));
    connect(optimizerImplementation_, &QComboBox::currentIndexChanged, this, [this](int) {
        state_.setOptimizerImplementation(OptimizerImplementation(optimizerImplementation_->currentData().toInt()));
    });

    // Another length is another analysis of the model, made off the GUI thread: only when the
    // value is entered (Enter, the arrows, leaving the box), not at every key.
    seq_ = new QSpinBox(this);
    seq_->setObjectName("sequenceLength");
    seq_->setRange(1, 1 << 20);
    seq_->setKeyboardTracking(false);
    seq_->setToolTip(
        tr("Sequence length of a sequence model (tokens per sample): its activations, FLOPs and tokens/s follow. "
           "A model's position embeddings may not reach beyond its own maximum; the prediction does not check."));
    connect(seq_, &QSpinBox::valueChanged, this, [this](int seq) { state_.setSequenceLength(seq); });
    seqLabel_ = new QLabel(tr("Sequence:"), this);

    gpu_ = new QComboBox(this);
    for (const GpuSpec& gpu : state_.database().gpus()) gpu_->addItem(gpuLabel(gpu), QString::fromStdString(gpu.id));
    connect(gpu_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setTargetGpu(gpu_->currentData().toString().toStdString()); });

    gpuCount_ = new QSpinBox(this);
    gpuCount_->setObjectName("gpuCount");
    gpuCount_->setRange(1, 1024);
    connect(gpuCount_, &QSpinBox::valueChanged, this, [this](int v) { state_.setGpuCount(v); });

    // Another group is another shard of the model, built off the GUI thread: only when entered.
    tensorParallelLabel_ = new QLabel(tr("Tensor parallel:"), this);
    tensorParallel_ = new QSpinBox(this);
    tensorParallel_->setObjectName("tensorParallel");
    tensorParallel_->setRange(1, 64);
    tensorParallel_->setKeyboardTracking(false);
    tensorParallel_->setToolTip(
        tr("GPUs of a tensor-parallel group inside one node (Megatron-LM's, PyTorch's ColwiseParallel and "
           "RowwiseParallel): each holds whole attention heads and a slice of every MLP width and of the "
           "vocabulary, and each block all-reduces twice forward and twice backward. The GPU count is all "
           "GPUs, in whole groups; the figures are per GPU. For a model built from a Hugging Face config.json"));
    connect(tensorParallel_, &QSpinBox::valueChanged, this, [this](int t) { state_.setTensorParallel(t); });
    sequenceParallel_ = new QCheckBox(tr("Sequence parallel"), this);
    sequenceParallel_->setObjectName("sequenceParallel");
    sequenceParallel_->setToolTip(
        tr("Megatron-LM's sequence parallelism (torchtitan's tensor parallelism always has it): the norms, "
           "dropouts and residual adds between the group's layers each run on a share of the tokens, their "
           "activations split too; all-gathers and reduce-scatters replace the all-reduces"));
    connect(sequenceParallel_, &QCheckBox::toggled, this, [this](bool on) { state_.setSequenceParallel(on); });
    expertParallelLabel_ = new QLabel(tr("Expert parallel:"), this);
    expertParallel_ = new QSpinBox(this);
    expertParallel_->setObjectName("expertParallel");
    expertParallel_->setRange(1, 64);
    expertParallel_->setKeyboardTracking(false);
    expertParallel_->setToolTip(
        tr("GPUs of an expert-parallel group inside one node (torchtitan's, Megatron-LM's): each holds a share "
           "of every sparse layer's routed experts, and each such layer sends its tokens to their experts' GPUs "
           "and back (two all-to-alls forward, two backward); the group's GPUs are data-parallel for the rest "
           "of the model. The GPU count is all GPUs, in whole groups; the figures are per GPU. For a "
           "mixture-of-experts model built from a Hugging Face config.json"));
    connect(expertParallel_, &QSpinBox::valueChanged, this, [this](int e) { state_.setExpertParallel(e); });

    interconnect_ = new QComboBox(this);
    interconnect_->setToolTip(tr("How the data-parallel GPUs exchange gradients"));
    for (InterconnectKind kind : {InterconnectKind::NvLink, InterconnectKind::Pcie, InterconnectKind::InfiniBand})
        interconnect_->addItem(interconnectName(kind), int(kind));
    connect(interconnect_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setInterconnect(InterconnectKind(interconnect_->currentData().toInt())); });

    checkpointing_ = new QComboBox(this);
    checkpointing_->setObjectName("checkpointing");
    checkpointing_->setToolTip(
        tr("Activation checkpointing: less memory for recomputing forward work in backward. Every block: Hugging "
           "Face's gradient_checkpointing, torchtitan's full AC. Every other block and selective (attention and "
           "every other linear output kept): torchtitan's selective layer and op AC. A model without numbered "
           "blocks is checkpointed in sqrt(L) segments."));
    const std::pair<Checkpointing, QString> policies[] = {
        {Checkpointing::None, tr("No checkpointing")},
        {Checkpointing::Blocks, tr("Checkpoint every block")},
        {Checkpointing::EveryOtherBlock, tr("Checkpoint every other block")},
        {Checkpointing::SelectiveOps, tr("Selective checkpointing")},
        {Checkpointing::Sqrt, tr("Checkpoint sqrt(L) segments")}};
    for (const auto& [policy, label] : policies) checkpointing_->addItem(label, int(policy));
    connect(checkpointing_, &QComboBox::currentIndexChanged, this, [this](int) {
        state_.setCheckpointing(Checkpointing(checkpointing_->currentData().toInt()));
    });

    sharding_ = new QComboBox(this);
    sharding_->setObjectName("sharding");
    sharding_->setToolTip(
        tr("How the data-parallel GPUs hold the model: DDP replicates it; ZeRO stage 1 shards the optimizer states, "
           "2 also the gradients, 3 (PyTorch FSDP's full sharding) also the parameters, gathered block by block"));
    const std::pair<int, QString> stages[] = {
        {0, tr("DDP (replicated)")}, {1, tr("ZeRO-1")}, {2, tr("ZeRO-2")}, {3, tr("ZeRO-3 / FSDP")}};
    for (const auto& [stage, label] : stages) sharding_->addItem(label, stage);
    connect(sharding_, &QComboBox::currentIndexChanged, this,
            [this](int) { state_.setZeroStage(sharding_->currentData().toInt()); });

    accumulation_ = new QSpinBox(this);
    accumulation_->setObjectName("accumulation");
    accumulation_->setRange(1, 1024);
    accumulation_->setPrefix(tr("× "));
    accumulation_->setKeyboardTracking(false);
    accumulation_->setToolTip(tr("Gradient accumulation: micro-batches of the batch size above per optimizer step "
                                 "(global batch = batch × accumulation × GPUs)"));
    connect(accumulation_, &QSpinBox::valueChanged, this, [this](int k) { state_.setAccumulation(k); });

    // Another rank is another analysis of the model, made off the GUI thread: only when the value is
    // entered, as for the sequence length.
    lora_ = new QSpinBox(this);
    lora_->setObjectName("loraRank");
    lora_->setRange(0, 4096);
    lora_->setSpecialValueText(tr("off"));
    lora_->setKeyboardTracking(false);
    lora_->setToolTip(tr("LoRA: adapters of this rank beside every linear layer of the numbered blocks (PEFT's "
                         "all-linear), the base weights frozen: no gradients or optimizer state for them. Off: "
                         "every parameter trains"));
    connect(lora_, &QSpinBox::valueChanged, this, [this](int rank) { state_.setLoraRank(rank); });
    loraDropout_ = new QDoubleSpinBox(this);
    loraDropout_->setObjectName("loraDropout");
    loraDropout_->setRange(0, ExplorerState::kMaxLoraDropout);
    loraDropout_->setSingleStep(0.05);
    loraDropout_->setDecimals(2);
    loraDropout_->setPrefix(tr("dropout "));
    loraDropout_->setKeyboardTracking(false);
    loraDropout_->setToolTip(
        tr("PEFT's lora_dropout: each adapter's input through a dropout of its own, which "
           "keeps a one-byte mask and the dropped input for backward (0, PEFT's default: "
           "none; recipes often use 0.05 or 0.1)"));
    connect(loraDropout_, &QDoubleSpinBox::valueChanged, this, [this](double p) { state_.setLoraDropout(p); });

    channelsLast_ = new QCheckBox(tr("Channels-last"), this);
    channelsLast_->setObjectName("channelsLast");
    channelsLast_->setToolTip(
        tr("Activations in the channels-last memory format (model.to(memory_format=torch.channels_last)). "
           "Tensor-core convolutions (TF32, FP16, BF16) read channels-last tensors; on PyTorch's default "
           "channels-first ones cuDNN transposes around each of them"));
    connect(channelsLast_, &QCheckBox::toggled, this, [this](bool on) { state_.setChannelsLast(on); });

    masterWeights_ = new QCheckBox(tr("FP32 master weights"), this);
    masterWeights_->setObjectName("masterWeights");
    masterWeights_->setToolTip(
        tr("With the model in bf16: an fp32 copy of the weights takes the optimizer's updates, with fp32 states "
           "(FSDP's mixed precision, Megatron-LM, DeepSpeed). Off: the optimizer updates the bf16 parameters "
           "themselves, with bf16 states (a model loaded in bf16 and trained as it is, as Hugging Face's "
           "Trainer does); LoRA adapters stay fp32, as PEFT creates them"));
    connect(masterWeights_, &QCheckBox::toggled, this, [this](bool on) { state_.setMasterWeights(on); });

    // The views keep the last predictions until the new ones are made (explorer_state.h).
    predicting_ = new QLabel(tr("predicting…"), this);
    predicting_->setObjectName("predictingLabel");
    predicting_->setToolTip(tr("The views show the last predictions until those at the new settings are ready"));
    predicting_->setVisible(state_.predicting());
    connect(&state_, &ExplorerState::predictingChanged, predicting_, &QWidget::setVisible);

    batchRow->addWidget(new QLabel(tr("Batch size per GPU:"), this));
    batchRow->addWidget(batchSlider_, 1);
    batchRow->addWidget(batchSpin_);
    batchRow->addWidget(new QLabel(tr("Accumulation:"), this));
    batchRow->addWidget(accumulation_);
    batchRow->addWidget(new QLabel(tr("LoRA rank:"), this));
    batchRow->addWidget(lora_);
    batchRow->addWidget(loraDropout_);
    batchRow->addWidget(channelsLast_);
    row->addWidget(new QLabel(tr("Precision:"), this));
    row->addWidget(precision_);
    row->addWidget(masterWeights_);
    row->addWidget(new QLabel(tr("Optimizer:"), this));
    row->addWidget(optimizer_);
    row->addWidget(optimizerImplementation_);
    row->addWidget(seqLabel_);
    row->addWidget(seq_);
    row->addWidget(new QLabel(tr("GPU:"), this));
    row->addWidget(gpu_);
    row->addWidget(new QLabel(tr("GPUs:"), this));
    row->addWidget(gpuCount_);
    row->addWidget(tensorParallelLabel_);
    row->addWidget(tensorParallel_);
    row->addWidget(sequenceParallel_);
    row->addWidget(expertParallelLabel_);
    row->addWidget(expertParallel_);
    row->addWidget(interconnect_);
    row->addWidget(sharding_);
    row->addWidget(checkpointing_);
    row->addWidget(predicting_);
    row->addStretch(1);

    connect(&state_, &ExplorerState::settingsChanged, this, &ControlsBar::follow);
    follow();
}

void ControlsBar::follow() {
    const ExplorerSettings& s = state_.settings();
    const int64_t modelSeq = state_.modelSequenceLength();
    {
        // The controls show the state without writing it back.
        const QSignalBlocker b1(batchSlider_), b2(batchSpin_), b3(precision_), b4(optimizer_), b5(gpu_), b6(gpuCount_),
            b7(interconnect_), b8(checkpointing_), b9(seq_), b10(sharding_), b11(accumulation_), b12(lora_),
            b13(channelsLast_), b14(optimizerImplementation_), b15(masterWeights_), b16(tensorParallel_),
            b17(sequenceParallel_), b18(loraDropout_), b19(expertParallel_);
        batchSlider_->setValue(sliderAtBatch(s.batch));
        batchSpin_->setValue(int(s.batch));
        precision_->setCurrentIndex(precision_->findData(int(s.precision)));
        optimizer_->setCurrentIndex(optimizer_->findData(int(s.optimizer)));
        optimizerImplementation_->setCurrentIndex(optimizerImplementation_->findData(int(s.optimizerImplementation)));
        gpu_->setCurrentIndex(gpu_->findData(QString::fromStdString(s.gpuId)));
        // Whole groups of GPUs: the count steps by the group.
        const int group = s.tensorParallel * s.expertParallel;
        gpuCount_->setSingleStep(group);
        gpuCount_->setMinimum(group);
        gpuCount_->setValue(s.gpus);
        tensorParallel_->setValue(s.tensorParallel);
        expertParallel_->setValue(s.expertParallel);
        sequenceParallel_->setChecked(s.sequenceParallel);
        interconnect_->setCurrentIndex(interconnect_->findData(int(s.interconnect)));
        checkpointing_->setCurrentIndex(checkpointing_->findData(int(s.checkpointing)));
        sharding_->setCurrentIndex(sharding_->findData(s.zeroStage));
        accumulation_->setValue(int(s.accumulation));
        lora_->setValue(int(s.loraRank));
        loraDropout_->setValue(s.loraDropout);
        channelsLast_->setChecked(s.channelsLast);
        masterWeights_->setChecked(s.masterWeights);
        seq_->setValue(int(s.seq > 0 ? s.seq : std::max<int64_t>(modelSeq, 1)));
    }
    // Only a model with a sequence dimension has a length to set, only one with convolutions a
    // memory format.
    channelsLast_->setVisible(state_.modelHasConvolutions());
    // Only adapters have a dropout.
    loraDropout_->setVisible(s.loraRank > 0);
    // Only a model in bf16 has a choice of where its optimizer's updates go.
    masterWeights_->setVisible(s.precision == TrainingPrecision::Bf16Params);
    // bitsandbytes' 8-bit Adam is its own fused kernel whatever the choice.
    optimizerImplementation_->setVisible(s.optimizer != Optimizer::Adam8bit);
    seq_->setVisible(modelSeq > 0);
    seqLabel_->setVisible(modelSeq > 0);
    // Only a model built from a Hugging Face config can be built as a shard.
    tensorParallel_->setVisible(state_.modelShardable());
    tensorParallelLabel_->setVisible(state_.modelShardable());
    sequenceParallel_->setVisible(state_.modelShardable() && s.tensorParallel > 1);
    // Only a mixture of experts has experts to split.
    expertParallel_->setVisible(state_.modelHasExperts());
    expertParallelLabel_->setVisible(state_.modelHasExperts());
    // A trace ran at its own optimizer and GPU count; its batch size and precision change where its
    // recorded shapes allow (TraceRepredictor predicts it again), and the target GPU applies.
    const TraceDocument* trace = state_.trace();
    const QString recorded = trace ? tr("A trace runs as it was recorded") : QString();
    for (QWidget* control : std::initializer_list<QWidget*>{
             optimizer_, optimizerImplementation_, gpuCount_, interconnect_, checkpointing_, seq_, sharding_,
             accumulation_, lora_, loraDropout_, channelsLast_, masterWeights_}) {
        control->setEnabled(!trace);
        control->setStatusTip(recorded);
    }
    const bool predictable = trace && trace->predictionProblem.empty();
    const bool batch = !trace || (predictable && trace->batch.batch > 0);
    const bool precision = !trace || (predictable && trace->trace.recordShapes && !trace->precision.halfWeights);
    const QString batchTip =
        !trace ? QString()
        : batch
            ? QString::fromStdString(trace->batch.how)
            : tr("The batch size stays as recorded: the trace %1").arg(QString::fromStdString(trace->batch.problem));
    const QString precisionTip = !trace ? QString()
                                 : precision
                                     ? tr("Recorded in %1").arg(QString::fromStdString(trace->precision.how))
                                     : tr("The precision stays as recorded (the trace has no input shapes and types)");
    for (QWidget* control : std::initializer_list<QWidget*>{batchSlider_, batchSpin_}) {
        control->setEnabled(batch);
        control->setStatusTip(batchTip);
        control->setToolTip(batchTip);
    }
    precision_->setEnabled(precision);
    precision_->setStatusTip(precisionTip);
    precision_->setToolTip(precisionTip);
}

}  // namespace ts::gui
