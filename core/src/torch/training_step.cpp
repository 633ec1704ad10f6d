#include "training_step.h"

#include <ATen/autocast_mode.h>
#include <torch/optim.h>

#include "trainscope/core/errors.h"

namespace ts::torchexec {

// ---- precision ----

PrecisionScope::PrecisionScope(TrainingPrecision p, const at::Device& device) : precision_(p), deviceType_(device.type()) {
    auto& ctx = at::globalContext();
    prevTf32Cublas_ = ctx.allowTF32CuBLAS();
    prevTf32Cudnn_ = ctx.allowTF32CuDNN();
    // fp32 is PyTorch's default (FP32 GEMMs, TF32 convolutions); fp32-strict is true FP32 for both;
    // tf32 lets cuBLAS and cuDNN both use TF32 tensor cores.
    ctx.setAllowTF32CuBLAS(p == TrainingPrecision::Tf32);
    ctx.setAllowTF32CuDNN(p == TrainingPrecision::Tf32 || p == TrainingPrecision::Fp32);
    prevEnabled_ = at::autocast::is_autocast_enabled(deviceType_);
    prevDtype_ = at::autocast::get_autocast_dtype(deviceType_);
    if (p == TrainingPrecision::AmpFp16 || p == TrainingPrecision::AmpBf16) {
        at::autocast::set_autocast_dtype(deviceType_, p == TrainingPrecision::AmpFp16 ? at::kHalf : at::kBFloat16);
        at::autocast::set_autocast_enabled(deviceType_, true);
        at::autocast::increment_nesting();
    }
}

PrecisionScope::~PrecisionScope() {
    if (precision_ == TrainingPrecision::AmpFp16 || precision_ == TrainingPrecision::AmpBf16) {
        // Leaving the outermost autocast region frees its cache of 16-bit weight copies, as in PyTorch.
        if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
        at::autocast::set_autocast_enabled(deviceType_, prevEnabled_);
        at::autocast::set_autocast_dtype(deviceType_, prevDtype_);
    }
    auto& ctx = at::globalContext();
    ctx.setAllowTF32CuBLAS(prevTf32Cublas_);
    ctx.setAllowTF32CuDNN(prevTf32Cudnn_);
}

// ---- loss ----

LossFunction::LossFunction(const Graph& g, int64_t batch, int64_t seq, const at::Device& device, at::Generator& gen) {
    for (int v : g.outputs)
        if (isFloating(g.values[static_cast<size_t>(v)].dtype)) {
            output_ = v;
            break;
        }
    if (output_ < 0) throw ExecutionError(g.source + ": the model has no floating-point output to train on");
    std::vector<int64_t> shape = evalShape(g.values[static_cast<size_t>(output_)].shape, batch, seq);
    // Class scores: [N, C] or [N, S, C] (token logits). Images ([N, C, H, W]) and single values get a
    // mean-square loss instead.
    bool scores = (shape.size() == 2 || shape.size() == 3) && shape.back() >= 2;
    if (scores) {
        crossEntropy_ = true;
        int64_t classes = shape.back();
        std::vector<int64_t> labelShape(shape.begin(), shape.end() - 1);
        labels_ = at::randint(classes, labelShape, gen, at::TensorOptions().dtype(at::kLong)).to(device);
        description_ = "cross-entropy over " + std::to_string(classes) + " classes on random labels";
    } else {
        description_ = "mean square of the output";
    }
    description_ += " (output '" + g.values[static_cast<size_t>(output_)].name + "')";
}

at::Tensor LossFunction::operator()(const GraphExecutor& ex) const {
    const at::Tensor& out = ex.value(output_);
    if (!crossEntropy_) return out.to(at::kFloat).pow(2).mean();
    int64_t classes = out.size(-1);
    // Autocast runs losses in fp32; casting first keeps that explicit for every device.
    return at::cross_entropy_loss(out.reshape({-1, classes}).to(at::kFloat), labels_.reshape({-1}));
}

// ---- optimizer and loss scaling ----

struct TrainingStep::Impl {
    std::vector<at::Tensor> params;
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    bool scaleLoss = false;
    at::Tensor scale, growthTracker;
};

TrainingStep::TrainingStep(GraphExecutor& ex, Optimizer kind, TrainingPrecision precision) : impl_(std::make_unique<Impl>()) {
    impl_->params = ex.parameters();
    auto& p = impl_->params;
    // Learning rates are ordinary defaults: profiling measures cost, not convergence.
    switch (kind) {
        case Optimizer::Sgd:
            impl_->optimizer = std::make_unique<torch::optim::SGD>(p, torch::optim::SGDOptions(0.01));
            break;
        case Optimizer::SgdMomentum:
            impl_->optimizer = std::make_unique<torch::optim::SGD>(p, torch::optim::SGDOptions(0.01).momentum(0.9));
            break;
        case Optimizer::Adam:
            impl_->optimizer = std::make_unique<torch::optim::Adam>(p, torch::optim::AdamOptions(1e-3));
            break;
        case Optimizer::AdamW:
            impl_->optimizer =
                std::make_unique<torch::optim::AdamW>(p, torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
            break;
        case Optimizer::Adam8bit:
            throw ExecutionError("the profiler cannot run adam8bit (bitsandbytes is not part of LibTorch)");
    }
    if (precision == TrainingPrecision::AmpFp16) {
        // torch.amp.GradScaler's defaults: initial scale 2^16, growth 2 every 2000 good steps, backoff 0.5.
        impl_->scaleLoss = true;
        auto opts = at::TensorOptions().device(ex.device());
        impl_->scale = at::full({1}, 65536.0, opts.dtype(at::kFloat));
        impl_->growthTracker = at::zeros({1}, opts.dtype(at::kInt));
    }
}

TrainingStep::~TrainingStep() = default;

void TrainingStep::zeroGrad() { impl_->optimizer->zero_grad(/*set_to_none=*/true); }

void TrainingStep::backward(const at::Tensor& loss) {
    if (impl_->scaleLoss) (loss * impl_->scale).backward();
    else loss.backward();
}

void TrainingStep::step() {
    skipped_ = false;
    if (impl_->scaleLoss) {
        std::vector<at::Tensor> grads;
        for (auto& p : impl_->params)
            if (p.grad().defined()) grads.push_back(p.grad());
        at::Tensor foundInf = at::zeros({1}, impl_->scale.options());
        at::Tensor invScale = impl_->scale.to(at::kDouble).reciprocal().to(at::kFloat);
        at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, invScale);
        skipped_ = foundInf.item<float>() != 0.0f;
        if (!skipped_) impl_->optimizer->step();
        at::_amp_update_scale_(impl_->scale, impl_->growthTracker, foundInf, 2.0, 0.5, 2000);
        return;
    }
    impl_->optimizer->step();
}

double TrainingStep::gradientBytes() const {
    double bytes = 0;
    for (auto& p : impl_->params)
        if (p.grad().defined()) bytes += static_cast<double>(p.grad().nbytes());
    return bytes;
}

double TrainingStep::optimizerStateBytes() const {
    double bytes = 0;
    auto add = [&](const at::Tensor& t) {
        if (t.defined()) bytes += static_cast<double>(t.nbytes());
    };
    for (auto& [key, state] : impl_->optimizer->state()) {
        (void)key;
        if (auto* s = dynamic_cast<torch::optim::SGDParamState*>(state.get())) add(s->momentum_buffer());
        else if (auto* a = dynamic_cast<torch::optim::AdamParamState*>(state.get())) {
            add(a->exp_avg());
            add(a->exp_avg_sq());
            add(a->max_exp_avg_sq());
        } else if (auto* w = dynamic_cast<torch::optim::AdamWParamState*>(state.get())) {
            add(w->exp_avg());
            add(w->exp_avg_sq());
            add(w->max_exp_avg_sq());
        }
    }
    return bytes;
}

}  // namespace ts::torchexec
