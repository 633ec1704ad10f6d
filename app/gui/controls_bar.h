#pragma once
// The controls every view follows, above the views: batch size per GPU (a log-scale slider and a
// spin box), precision, optimizer, sequence length (sequence models), target GPU, number of GPUs,
// interconnect and activation checkpointing, and a note while predictions are being made. They
// write the state's settings and show them back without writing them again.
#include <QWidget>
#include <cstdint>

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QDoubleSpinBox;

namespace ts::gui {

class ExplorerState;

// The batch slider's log scale: position 0..kSliderSteps <-> batch 1..ExplorerState::kMaxBatch.
inline constexpr int kSliderSteps = 1000;
int64_t batchAtSlider(int position);
int sliderAtBatch(int64_t batch);

class ControlsBar : public QWidget {
    Q_OBJECT
public:
    explicit ControlsBar(ExplorerState& state, QWidget* parent = nullptr);
    // The settings changed: every control shows them (a trace disables those it does not take).
    void follow();

    QSlider* batchSlider() const { return batchSlider_; }
    QSpinBox* batchSpin() const { return batchSpin_; }
    QComboBox* optimizerBox() const { return optimizer_; }
    QComboBox* optimizerImplementationBox() const { return optimizerImplementation_; }
    QSpinBox* sequenceSpin() const { return seq_; }
    QComboBox* checkpointingBox() const { return checkpointing_; }
    QComboBox* shardingBox() const { return sharding_; }
    QSpinBox* accumulationSpin() const { return accumulation_; }
    QSpinBox* loraSpin() const { return lora_; }
    QDoubleSpinBox* loraDropoutSpin() const { return loraDropout_; }
    QCheckBox* channelsLastBox() const { return channelsLast_; }
    QCheckBox* masterWeightsBox() const { return masterWeights_; }
    QLabel* predictingLabel() const { return predicting_; }

private:
    ExplorerState& state_;
    QSlider* batchSlider_ = nullptr;
    QSpinBox* batchSpin_ = nullptr;
    QComboBox* precision_ = nullptr;
    QComboBox* optimizer_ = nullptr;
    QComboBox* optimizerImplementation_ = nullptr;
    QSpinBox* seq_ = nullptr;
    QLabel* seqLabel_ = nullptr;
    QComboBox* gpu_ = nullptr;
    QSpinBox* gpuCount_ = nullptr;
    QLabel* tensorParallelLabel_ = nullptr;
    QSpinBox* tensorParallel_ = nullptr;
    QLabel* expertParallelLabel_ = nullptr;
    QSpinBox* expertParallel_ = nullptr;
    QCheckBox* sequenceParallel_ = nullptr;
    QComboBox* interconnect_ = nullptr;
    QComboBox* checkpointing_ = nullptr;
    QComboBox* sharding_ = nullptr;
    QSpinBox* accumulation_ = nullptr;
    QSpinBox* lora_ = nullptr;
    QDoubleSpinBox* loraDropout_ = nullptr;
    QCheckBox* channelsLast_ = nullptr;
    QCheckBox* masterWeights_ = nullptr;
    QLabel* predicting_ = nullptr;
};

}  // namespace ts::gui
