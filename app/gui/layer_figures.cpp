#include "layer_figures.h"

#include <QCoreApplication>
#include <algorithm>

#include "prediction_snapshot.h"
#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::gui {

using namespace ts::predictors;

QString boundName(PassBound b) {
    return QString::fromUtf8(predictors::passBoundName(b));
}

QString tensorCoreName(TensorCoreUse t) {
    switch (t) {
        case TensorCoreUse::No:
            return {};
        case TensorCoreUse::Predicted:
            return QCoreApplication::translate("LayerFigures", "yes (predicted)");
        case TensorCoreUse::Measured:
            return QCoreApplication::translate("LayerFigures", "yes (measured)");
        case TensorCoreUse::MeasuredNone:
            return QCoreApplication::translate("LayerFigures", "no (measured)");
    }
    return {};
}

namespace {

ComputePrecision computePrecisionOf(TrainingPrecision p) {
    switch (p) {
        case TrainingPrecision::Fp32:
        case TrainingPrecision::Fp32Strict:
            return ComputePrecision::Fp32;
        case TrainingPrecision::Tf32:
            return ComputePrecision::Tf32;
        case TrainingPrecision::AmpFp16:
        case TrainingPrecision::Fp16Params:
            return ComputePrecision::Fp16;
        case TrainingPrecision::AmpBf16:
        case TrainingPrecision::Bf16Params:
            return ComputePrecision::Bf16;
        case TrainingPrecision::Fp8:
            return ComputePrecision::Fp8;
    }
    return ComputePrecision::Fp32;
}

double peakFlops(const GpuSpec& gpu, ComputePrecision p) {
    const Figure f = gpu.peakTflops(p);
    return f.known() ? *f * 1e12 : 0;
}

// The measured run nearest the current batch size (kernels are recorded per run), when the profile
// ran at the precision shown: its kernels say nothing about another precision's.
const ProfileRun* nearestRun(const Profile* profile, TrainingPrecision precision, int64_t batch) {
    if (!profile || !profile->kernelsRecorded) return nullptr;
    if (parseTrainingPrecision(profile->scenario.precision) != precision) return nullptr;
    const ProfileRun* best = nullptr;
    for (const ProfileRun& run : profile->runs)
        if (!run.layers.empty() && (!best || std::llabs(run.batch - batch) < std::llabs(best->batch - batch)))
            best = &run;
    return best;
}

}  // namespace

LayerFigureTable computeLayerFigures(const PredictionSnapshot& snapshot) {
    LayerFigureTable table;
    const TrainingPrediction& p = snapshot.current;
    const GpuSpec* gpu = snapshot.targetGpu();
    if (!snapshot.hasModel() || !p.supported || !gpu) return table;
    const ModelAnalysis& analysis = snapshot.model->predictor->analysis();
    const TrainingPrecision precision = snapshot.settings.precision;
    const double n = double(snapshot.settings.batch);

    table.iterationMs = p.iterationMs.value;
    table.fp32PeakFlopsPerS = peakFlops(*gpu, ComputePrecision::Fp32);
    table.peakFlopsPerS = std::max(peakFlops(*gpu, computePrecisionOf(precision)), table.fp32PeakFlopsPerS);
    table.bandwidthBytesPerS = gpu->memoryBandwidthGBs.known() ? *gpu->memoryBandwidthGBs * 1e9 : 0;

    // What bounds each pass and whether it runs on tensor cores: the predictor's rule.
    std::vector<const LayerBound*> bound(analysis.ops.size(), nullptr);
    std::vector<LayerBound> bounds;
    if (snapshot.bounds) bounds = snapshot.bounds->at(n);
    for (const LayerBound& b : bounds)
        if (b.op >= 0 && size_t(b.op) < bound.size()) bound[size_t(b.op)] = &b;

    // Measured kernels say whether tensor cores ran where a profile used here recorded them.
    std::vector<const LayerProfile*> measured(analysis.ops.size(), nullptr);
    if (snapshot.model->usesProfile())
        if (const ProfileRun* run = nearestRun(snapshot.model->profile.get(), precision, snapshot.settings.batch))
            for (const LayerProfile& l : run->layers)
                if (l.op >= 0 && size_t(l.op) < measured.size()) measured[size_t(l.op)] = &l;

    // What each layer keeps for backward at this precision, as the memory model counts it.
    std::vector<double> savedOfOp(analysis.ops.size(), 0.0);
    for (const SavedActivation& s : analysis.memoryFor(precision).saved)
        if (s.freedAfter >= 0 && size_t(s.freedAfter) < savedOfOp.size())
            savedOfOp[size_t(s.freedAfter)] += s.bytes.at(n);

    table.rowOfOp.assign(analysis.ops.size(), -1);
    table.layers.reserve(p.layers.size());
    for (const LayerTime& t : p.layers) {
        if (t.op < 0 || size_t(t.op) >= analysis.ops.size()) continue;
        const AnalyzedOp& op = analysis.ops[size_t(t.op)];
        const OpBytes& bytes = analysis.bytes(op, precision);
        const LayerBound* b = bound[size_t(t.op)];
        LayerFigures f;
        f.op = t.op;
        f.forwardMs = t.forwardMs.value;
        f.backwardMs = t.backwardMs.value;
        f.share = table.iterationMs > 0 ? f.totalMs() / table.iterationMs : 0;
        f.savedBytes = savedOfOp[size_t(t.op)];
        f.forwardFlops = op.forwardFlops.at(n);
        f.backwardFlops = op.backward ? op.backwardFlops.at(n) : 0;
        auto pass = [&](double flops, double bytes, double ms, PassBound bound) {
            PassFigures pf;
            pf.flops = flops;
            pf.bytes = bytes;
            pf.intensity = bytes > 0 ? flops / bytes : 0;
            pf.achievedFlopsPerS = ms > 0 ? flops / (ms * 1e-3) : 0;
            pf.bound = bound;
            return pf;
        };
        const PassFigures forward =
            pass(f.forwardFlops, bytes.read.at(n) + bytes.write.at(n), f.forwardMs, b ? b->forward : PassBound::Memory);
        f.forwardBytes = forward.bytes;
        f.intensity = forward.intensity;
        f.achievedFlopsPerS = forward.achievedFlopsPerS;
        f.bound = forward.bound;
        if (op.backward)
            f.backward = pass(f.backwardFlops, backwardBytes(op, bytes).at(n), f.backwardMs,
                              b && b->hasBackward ? b->backward : PassBound::Memory);

        f.tensorCores = b && b->tensorCores ? TensorCoreUse::Predicted : TensorCoreUse::No;
        if (const LayerProfile* l = measured[size_t(t.op)]) {
            const auto tc = [](const KernelRecord& k) { return k.tensorCore; };
            const bool any = std::any_of(l->forwardKernels.begin(), l->forwardKernels.end(), tc) ||
                             std::any_of(l->backwardKernels.begin(), l->backwardKernels.end(), tc);
            if (!l->forwardKernels.empty() || !l->backwardKernels.empty())
                f.tensorCores = any ? TensorCoreUse::Measured : TensorCoreUse::MeasuredNone;
        }
        table.rowOfOp[size_t(t.op)] = int(table.layers.size());
        table.layers.push_back(f);
    }
    return table;
}

}  // namespace ts::gui
