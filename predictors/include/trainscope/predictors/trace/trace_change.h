#pragma once
// A recorded job at another batch size or precision (issue 24, deliverable 3), from the shapes and
// types a trace recorded with record_shapes=True; without them a change is refused with the reason.
//
// Batch size. The batch is the size found as the leading dimension of the most activation inputs
// (tensor inputs that are not shaped like a parameter, the inputs of AccumulateGrad) among the
// sizes of the step's first input (the data). Each operator's inputs are rewritten at the new
// batch: a dimension equal to the batch, or to batch x a size of the data (flattened tokens, for
// a [batch, sequence] input), or a leading multiple of the batch in a tensor of two or more
// dimensions (batch x heads, the global batch of model-parallel embeddings) scales; parameter-shaped
// inputs keep theirs. All-to-all and send/receive collectives carry activations: their messages
// scale with the batch; all-reduces (gradients) and the rest keep theirs. The kernels of operators whose inputs carry
// the batch then move with the work of the new shapes (operatorWork: FLOPs and bytes; grids scale with the output, so
// waves quantise as they do); weight-only work (optimizer steps, weight casts, collectives of parameters) keeps its
// time, and the host keeps its measured time per operator.
//
// Precision. Autocast's lists (autocastRuleOf, the model analysis' own) say per operator what
// fp32 <-> amp-fp16 / amp-bf16 changes: operators on its lower-precision list run their GEMM,
// convolution and attention kernels on the target's 16-bit tensor cores and read 16-bit inputs;
// those on its fp32 list keep 32-bit bytes; the rest follow the precision of the tensors they are
// given (approximated by the last listed operator before them on their thread). Turning autocast
// on adds its cast kernels (each fp32 input of a lower-precision operator that is a parameter or
// arrives in fp32, and each 16-bit input of an fp32-list operator: read 4 + write 2 bytes per
// element) and the grad scaler's unscale (8 bytes per parameter, one pass), with the host time of
// each cast (the stream model's hostCastUs, hostOptimizerPassUs); turning it off removes the
// recorded casts and grad-scaler kernels and their host time.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_scenario.h"
#include "trainscope/predictors/trace/trace_kernels.h"

namespace ts::predictors {

// The batch size the trace's steps ran, as its recorded shapes show it.
struct TraceBatch {
    int64_t batch = 0;                // 0: not found (`problem` says why)
    std::vector<int64_t> tokenSizes;  // batch x a size of a [batch, sequence] data input: flattened tokens
    std::string how;                  // how it was found, one sentence
    std::string problem;              // why it was not, one sentence
    int64_t activationInputs = 0;     // tensor inputs not shaped like a parameter, in the steps
    int64_t leadingBatch = 0;         // of which lead with the batch
};
TraceBatch findTraceBatch(const KinetoTrace& trace);

// The precision the trace ran in: fp32 or tf32 (its GEMM-class kernels' arithmetic), or amp-fp16 /
// amp-bf16 where most of that time is 16-bit and the parameters are fp32 (autocast).
struct TracePrecision {
    TrainingPrecision precision = TrainingPrecision::Fp32;
    std::string how;           // one sentence
    bool halfWeights = false;  // the parameters are 16-bit themselves (model.half()): not autocast
};
TracePrecision recordedTracePrecision(const KinetoTrace& trace);

// What autocast does in the moved job.
enum class TraceAutocast : uint8_t { AsRecorded, Off, Fp16, Bf16 };

// What the moved job changes beyond the GPU.
struct TraceChange {
    Fp32Math math = Fp32Math::AsRecorded;  // FP32 work's arithmetic (fp32, tf32, fp32-strict)
    int64_t batch = 0;                     // 0: as recorded
    TraceAutocast autocast = TraceAutocast::AsRecorded;
    bool operator==(const TraceChange&) const = default;
};

// --precision for a trace: "as-recorded", "fp32", "fp32-strict", "tf32" (autocast off where the trace
// ran under it; FP32 work in that arithmetic), "amp-fp16", "amp-bf16" (autocast on, in that type).
// Nullopt for anything else (fp8: Transformer Engine, not autocast).
std::optional<TraceChange> parseTracePrecision(const std::string& name);
// The training precision a change gives a trace recorded in `recorded` (its name for messages).
TrainingPrecision changedPrecision(const TraceChange& change, TrainingPrecision recorded);

// How autocast treats an ATen operator: its name mapped to the graph's operator types, then
// autocastRuleOf (model_analysis.h). "aten::addmm" -> Lower, "aten::_softmax" -> Fp32.
AutocastRule autocastRuleOfAtenOp(const std::string& atenName);

// One operator at the new batch and precision.
struct OperatorChange {
    std::optional<OperatorWork> work;      // its work at the new shapes and types; nullopt without shapes
    double computeRatio = 1;               // new over recorded FLOPs (or batch ratio where no formula gives them)
    double bytesRatio = 1;                 // new over recorded bytes
    double gridRatio = 1;                  // new over recorded output: how its kernels' grids scale
    bool batched = false;                  // an input carries the batch
    bool reductionBatched = false;         // a GEMM whose reduction dimension carries it (weight gradients)
    std::optional<ComputePrecision> math;  // the arithmetic autocast gives its GEMM-class kernels
    bool removed = false;                  // an autocast cast or grad-scaler operator the new precision does not run
};

// Work added on the GPU before an activity: autocast's casts or the grad scaler's unscale.
struct AddedWork {
    double bytes = 0;
    int kernels = 0;
};

struct TraceChangeWork {
    TraceChange change;
    TraceBatch batch;         // found when change.batch > 0
    double batchRatio = 1;    // change.batch / batch.batch: what activation collectives (all-to-all) scale by
    TracePrecision recorded;  // the trace's own precision
    TrainingPrecision precision = TrainingPrecision::Fp32;  // the moved job's
    bool autocastChanged = false;                           // autocast turned on or off, or to the other 16-bit type
    std::vector<OperatorChange> operators;                  // per trace.operators index
    std::map<size_t, AddedWork> addedBefore;                // trace.kernels index -> GPU work added before it
    // The host's time changes: (measured time, us added from then on; negative where removed).
    std::vector<std::pair<double, double>> hostExtraUs;
    int castsAdded = 0, operatorsRemoved = 0;
    std::vector<std::string> notes;  // what was found and changed, and what could not be
    bool changesWork() const { return change.batch > 0 || autocastChanged; }
};

// Throws ModelError(trace.source, reason) where the change cannot be made: no shapes, a batch
// that cannot be identified unambiguously, 16-bit parameters, an fp8 or non-autocast request.
// A change that changes no work (fp32 math only) needs no shapes.
TraceChangeWork analyseTraceChange(const KinetoTrace& trace, const TraceChange& change);

}  // namespace ts::predictors
