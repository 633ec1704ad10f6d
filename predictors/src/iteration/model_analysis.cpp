#include "trainscope/predictors/iteration/model_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/fine_tuning.h"
#include "trainscope/core/ops.h"
#include "element_sizes.h"
#include "op_kinds.h"

namespace ts::predictors {

BatchPoly& BatchPoly::operator+=(const BatchPoly& o) {
    c0 += o.c0;
    c1 += o.c1;
    c2 += o.c2;
    return *this;
}
BatchPoly BatchPoly::operator+(const BatchPoly& o) const {
    BatchPoly r = *this;
    return r += o;
}
BatchPoly BatchPoly::operator*(double k) const {
    return {c0 * k, c1 * k, c2 * k};
}

BatchPoly BatchPoly::through(double y1, double y2, double y3) {
    BatchPoly p;
    p.c2 = (y3 - 2 * y2 + y1) / 2;
    p.c1 = (y2 - y1) - 3 * p.c2;
    p.c0 = y1 - p.c1 - p.c2;
    return p;
}

std::string scalingClassOf(const Graph& g, const Operation& op) {
    const std::string& t = op.type;
    if (t == "Gemm") return "linear";
    if (t == "MatMul") {
        for (int in : op.inputs)
            if (in >= 0 && g.values[in].kind == ValueKind::Parameter) return "linear";
        return "bmm";
    }
    if (t == "Einsum") return "bmm";
    if (t == "MixtureOfExperts") return "linear";  // its products are linear layers' (grouped by expert)
    if (t == "Conv" || t == "ConvTranspose") return "conv";
    if (t == "LayerNormalization") return "ln";
    if (t == "Softmax" || t == "LogSoftmax") return "softmax";
    if (t == "Add" || t == "Sub" || t == "Sum") return "add";
    if (t == "Mul" || t == "Div") return "mul";
    if (t == "Gelu") return "gelu";
    if (t == "Relu") return "relu";
    if (t == "Tanh") return "tanh";
    return "";
}

namespace {

constexpr int kSampleBatches[3] = {1, 2, 3};
constexpr int kCheckBatch = 7;

struct Sample {
    double read = 0, write = 0, readActivations = 0, castForward = 0, castBackward = 0, saved = 0;
    double castWeightElements = 0;
};

BatchPoly fit(const double (&y)[3]) {
    return BatchPoly::through(y[0], y[1], y[2]);
}

// bitsandbytes keeps 32-bit optimizer states for tensors below this size (min_8bit_size).
constexpr double kSmallTensorElements = 4096;

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-6 * std::max({1.0, std::abs(a), std::abs(b)});
}

// How many operations needing gradients read each value: autograd sums a value's gradients from each.
std::vector<int> gradientConsumers(const Graph& g, const std::vector<bool>& grad) {
    std::vector<int> consumers(g.values.size(), 0);
    for (const Operation& op : g.ops) {
        bool any = false;  // the op is on autograd's graph: one of its outputs needs a gradient
        for (int out : op.outputs) any |= out >= 0 && grad[out];
        if (!any) continue;
        std::set<int> distinct;
        for (int in : op.inputs)
            if (in >= 0 && grad[in] && g.values[in].kind == ValueKind::Activation) distinct.insert(in);
        for (int in : distinct) ++consumers[in];
    }
    return consumers;
}

// The saved tensors of every operation under one precision, each counted once by (value, element size).
struct SavedLedger {
    std::map<std::pair<int, int>, size_t> index;
    std::vector<std::array<double, 3>> samples;  // bytes at the sample batches, by index
};

// What every operation's byte accounting reads of the graph.
struct GraphFacts {
    const Graph& g;
    const std::vector<bool>& grad;
    const std::vector<int>& owner;
    const std::vector<std::array<double, 3>>& numel;
    const std::vector<int>& gradConsumers;
};

// Operation i's bytes under precision p (element sizes e): its reads and writes, autocast's and
// NF4's casts, what it saves (entered in `ledger` and memory.saved, extra buffers keyed past
// `extraKey`), autograd's reductions and accumulations, its collective's message and its backward's
// scratch; sets castWeightElements to the weights autocast casts for it.
OpBytes opBytes(const GraphFacts& f, size_t i, const AnalyzedOp& a, const std::string& cls,
                const ModelCosts (&costs)[3], TrainingPrecision p, const std::vector<int>& e,
                const std::vector<int>& storage, int extraKey, SavedLedger& ledger, PrecisionMemory& memory,
                double& castWeightElements) {
    const Graph& g = f.g;
    const Operation& op = g.ops[i];
    const auto& numel = f.numel;
    const auto& grad = f.grad;
    const auto& owner = f.owner;
    const auto& gradConsumers = f.gradConsumers;
    double y[11][3] = {};  // read, write, readActivations, castForward, castBackward, saved, castWeights,
                           // gradientReduction, gradientAccumulation, message, backwardScratch
    for (int k = 0; k < 3; ++k) {
        const OpCost& ck = costs[k].layers[i].cost;
        double in32 = 0, inP = 0, inActP = 0, out32 = 0, outP = 0;
        for (int in : op.inputs) {
            if (in < 0) continue;
            const Value& v = g.values[in];
            const int r = readSize(g, op, a.opClass.empty() ? cls : a.opClass, in, p, e);
            in32 += numel[in][k] * dtypeSize(v.dtype);
            inP += numel[in][k] * r;
            if (isData(v)) inActP += numel[in][k] * r;
            const bool parameter = v.kind == ValueKind::Parameter;
            if (parameter && v.nf4) {
                // bitsandbytes dequantises an NF4 weight to the compute dtype before each GEMM
                // that reads it, forward and (for the input gradient) backward; nothing is cached.
                const double dequantise = numel[in][k] * (kNf4BytesPerElement + r);
                y[3][k] += dequantise;
                if (a.backward) y[4][k] += dequantise;
                continue;
            }
            if (r == e[in] || !isFloating(v.dtype)) continue;
            // A frozen weight is stored in the compute dtype already (frozenStoredBytes).
            if (parameter && v.frozen && isAutocast(p)) continue;
            if (parameter && owner[in] != int(i)) continue;  // autocast caches a weight's cast
            y[3][k] += numel[in][k] * (r + e[in]);
            if (grad[in]) y[4][k] += numel[in][k] * (r + e[in]);
            if (parameter && autocastRuleOf(op.type) == AutocastRule::Lower) y[6][k] += numel[in][k];
        }
        for (int out : op.outputs) {
            out32 += numel[out][k] * dtypeSize(g.values[out].dtype);
            outP += numel[out][k] * e[out];
        }
        if (a.kind == OpKind::Collective) y[9][k] = outP * a.collectiveCopies;
        if (ck.backwardScratch > 0 && !op.inputs.empty() && op.inputs[0] >= 0) {
            const Value& v = g.values[op.inputs[0]];
            const int r = readSize(g, op, a.opClass.empty() ? cls : a.opClass, op.inputs[0], p, e);
            y[10][k] = ck.backwardScratch * r / dtypeSize(v.dtype);
        }
        if (a.reductionKernels > 0 && !op.outputs.empty())
            y[7][k] = a.reductionKernels * numel[op.outputs[0]][k] * e[op.outputs[0]];
        for (int out : op.outputs)
            if (out >= 0 && gradConsumers[out] > 1)
                y[8][k] += 3.0 * (gradConsumers[out] - 1) * numel[out][k] * e[out];
        double readScale = in32 > 0 ? ck.bytesRead / in32 : 0;
        double writeScale = out32 > 0 ? ck.bytesWritten / out32 : 0;
        // A cast to the dtype a tensor already has is no kernel (Tensor.to returns it).
        if ((op.type == "Cast" || op.type == "CastLike") && !op.inputs.empty() && !op.outputs.empty() &&
            op.inputs[0] >= 0 && op.outputs[0] >= 0 && e[op.inputs[0]] == e[op.outputs[0]] &&
            g.values[op.inputs[0]].dtype == g.values[op.outputs[0]].dtype)
            readScale = writeScale = 0;
        y[0][k] = inP * readScale;
        y[1][k] = outP * writeScale;
        // An op that reads only part of its inputs (Gather reads the selected rows of a table)
        // still reads its activation inputs (the indices) whole; a share of a table's read
        // would make this a ratio of batch-linear terms, not a polynomial.
        y[2][k] = inActP * std::min(1.0, readScale);
        int previousBufferSize = 0;  // element size of the extra buffer saved last, which a copy copies
        for (size_t s = 0; s < ck.saved.size(); ++s) {
            const SavedTensor& st = ck.saved[s];
            double bytes = st.bytes;
            int key = st.value >= 0 ? storage[size_t(st.value)] : st.value;
            int size = 0;
            if (st.value >= 0) {
                const Value& v = g.values[st.value];
                const bool input = std::find(op.inputs.begin(), op.inputs.end(), st.value) != op.inputs.end();
                size = input ? readSize(g, op, cls, st.value, p, e) : e[st.value];
                if (isFloat32(v)) bytes = st.bytes * size / 4.0;
                // The batch itself, kept by reference: already counted as inputs.
                const Value& stored = g.values[size_t(key)];
                if (stored.kind == ValueKind::Input && size == dtypeSize(stored.dtype)) continue;
                // Autocast casts an activation for each operator that reads it in another
                // type (its cast cache holds only parameters), and each keeps its own copy:
                // q, k and v projections of one fp32 input save three 16-bit copies.
                if (input && size != e[st.value]) key = -1 - int(s) - extraKey;
            } else {
                key = -1 - int(s) - extraKey;
                if (!op.outputs.empty() && op.outputs[0] >= 0) {
                    const int graphSize = dtypeSize(g.values[op.outputs[0]].dtype), outSize = e[op.outputs[0]];
                    const int copied = previousBufferSize > 0 ? previousBufferSize : graphSize;
                    int elementSize = graphSize;
                    if (st.fp32UnderAutocast)
                        elementSize = isAutocast(p) ? graphSize : outSize;
                    else if (st.inOutputDtype || st.onlyWhenNarrowed)
                        elementSize = outSize;
                    previousBufferSize = elementSize;
                    if (st.onlyWhenNarrowed && outSize >= copied) continue;
                    if (elementSize != graphSize) {
                        size = elementSize;
                        bytes = st.bytes * elementSize / graphSize;
                    }
                }
            }
            y[5][k] += bytes;
            auto [it, inserted] = ledger.index.try_emplace({key, size}, ledger.samples.size());
            if (inserted) {
                ledger.samples.push_back({0, 0, 0});
                SavedActivation sa;
                sa.freedAfter = int(i);
                sa.value = key >= 0 ? key : -1;
                memory.saved.push_back(sa);
            }
            ledger.samples[it->second][k] = bytes;
        }
    }
    // Sequence parallelism's share of the tokens (the op's costs already have it): autograd's
    // sums and casts counted here from the graph's whole-sequence shapes.
    if (const int64_t shards = op.attrInt("sequence_shards", 1); shards > 1)
        for (int row : {3, 4, 7, 8})
            for (double& v : y[row]) v /= double(shards);
    OpBytes b;
    b.read = fit(y[0]);
    b.write = fit(y[1]);
    b.readActivations = fit(y[2]);
    b.castForward = fit(y[3]);
    b.castBackward = fit(y[4]);
    b.saved = fit(y[5]);
    b.gradientReduction = fit(y[7]);
    b.gradientAccumulation = fit(y[8]);
    b.message = fit(y[9]);
    b.backwardScratch = fit(y[10]);
    castWeightElements = y[6][0];
    return b;
}

}  // namespace

ModelAnalysis::ModelAnalysis(const Graph& g, int64_t seqIn, const KernelScalingTable& table)
    : modelName(g.name),
      modelSource(g.source.empty() ? g.name : g.source),
      modelParameters(g.modelParameterCount()),
      modelActiveParameters(g.modelActiveParameterCount()) {
    ModelCosts costs[3];
    ModelCosts check;
    try {
        for (int k = 0; k < 3; ++k) costs[k] = computeCosts(g, kSampleBatches[k], seqIn);
        check = computeCosts(g, kCheckBatch, seqIn);
    } catch (const ShapeError& e) {
        throw ModelError(modelSource, e.what());
    }
    seq = costs[0].seq;
    units.push_back(ParameterUnit{});
    std::map<std::string, size_t> unitIndex;
    sequenceModel = g.defaults.seq > 0 || seqIn > 0;
    const std::vector<bool> grad = requiresGrad(g);
    const std::vector<int> owner = g.parameterOwners();
    std::set<std::string> tableClasses;
    for (const ClassScaling& c : table.classes) tableClasses.insert(c.opClass);

    // Element counts of every value at the sample batch sizes.
    std::vector<std::array<double, 3>> numel(g.values.size());
    for (size_t v = 0; v < g.values.size(); ++v) {
        const Dim n = ts::numel(g.values[v].shape);
        for (int k = 0; k < 3; ++k) numel[v][k] = double(n.eval(kSampleBatches[k], seq));
    }
    std::array<std::vector<int>, kElementPrecisionCount> es;
    std::array<std::vector<int>, kElementPrecisionCount> storage;
    for (int pi = 0; pi < kElementPrecisionCount; ++pi) {
        es[pi] = elementSizes(g, precisionOfElementIndex(pi));
        storage[pi] = storageRoots(g, es[pi]);
    }

    const std::vector<int> gradConsumers = gradientConsumers(g, grad);

    ops.resize(g.ops.size());
    std::vector<int> opUnit(g.ops.size(), 0);  // FSDP unit of each op: 0 outside numbered blocks
    std::array<SavedLedger, kElementPrecisionCount> saved;  // per precision
    int extraKey = 0;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const Operation& op = g.ops[i];
        AnalyzedOp& a = ops[i];
        a.op = int(i);
        a.name = op.name;
        a.type = op.type;
        const OpCost& c2 = costs[1].layers[i].cost;
        for (const ModelCosts& c : costs)
            if (c.layers[i].cost.saved.size() != c2.saved.size())
                throw ModelError(modelSource, op.name + ": the tensors it saves change with the batch size");
        a.forwardFlops = BatchPoly::through(costs[0].layers[i].cost.forwardFlops, c2.forwardFlops,
                                            costs[2].layers[i].cost.forwardFlops);
        a.backwardFlops = BatchPoly::through(costs[0].layers[i].cost.backwardFlops, c2.backwardFlops,
                                             costs[2].layers[i].cost.backwardFlops);
        const OpCost& c7 = check.layers[i].cost;
        const BatchPoly rd =
            BatchPoly::through(costs[0].layers[i].cost.bytesRead, c2.bytesRead, costs[2].layers[i].cost.bytesRead);
        if (!close(a.forwardFlops.at(kCheckBatch), c7.forwardFlops) || !close(rd.at(kCheckBatch), c7.bytesRead))
            throw ModelError(modelSource, op.name +
                                              ": its costs grow faster than the square of the batch size, "
                                              "which the predictor does not model");
        const std::string cls = scalingClassOf(g, op);
        a.opClass = tableClasses.count(cls) ? cls : "";
        classifyOp(g, op, c2, grad, numel, gradConsumers, seq, a);
        if (a.kind == OpKind::Collective) {
            int& group = a.allToAll ? expertParallel : tensorParallel;
            sequenceParallel |= a.sequenceParallel;
            if (group > 1 && a.collectiveGroup != group)
                throw ModelError(modelSource, op.name + ": its group of " + std::to_string(a.collectiveGroup) +
                                                  " GPUs is not the model's " + (a.allToAll ? "expert" : "tensor") +
                                                  "-parallel group of " + std::to_string(group));
            group = a.collectiveGroup;
        }
        a.parameters = costs[0].layers[i].parameters;
        const std::string block = blockOf(op.modulePath);
        auto [unitIt, newUnit] = unitIndex.try_emplace(block, block.empty() ? 0 : units.size());
        if (newUnit && !block.empty()) units.push_back(ParameterUnit{block});
        if (expertUnits.size() < units.size()) expertUnits.resize(units.size(), ParameterUnit{});
        ParameterUnit& unit = units[unitIt->second];
        ParameterUnit& expertUnit = expertUnits[unitIt->second];
        opUnit[i] = int(unitIt->second);
        // Routed experts split by expert parallelism: a MixtureOfExperts' weights and biases (inputs 2 on).
        const bool splitExperts = op.type == "MixtureOfExperts" && op.attrInt("expert_shards", 1) > 1;
        for (size_t slot = 0; slot < op.inputs.size(); ++slot) {
            const int in = op.inputs[slot];
            if (in < 0 || owner[in] != int(i)) continue;
            const Value& v = g.values[in];
            const double elements = numel[in][0], bytes = elements * dtypeSize(v.dtype);
            const bool expert = splitExperts && slot >= 2;
            for (ParameterUnit* u : {&unit, expert ? &expertUnit : nullptr}) {
                if (!u) continue;
                if (v.nf4) {
                    u->nf4Elements += elements;
                } else if (v.frozen) {
                    u->frozenElements += elements;
                    u->frozenBytes += bytes;
                } else {
                    u->trainableElements += elements;
                    u->trainableBytes += bytes;
                    if (v.keptInFp32) u->adapterElements += elements;
                    if (v.besideFrozenOriginal) u->frozenElements += elements, u->frozenBytes += bytes;
                }
            }
            if (v.nf4) {
                a.nf4Elements += elements;
            } else if (v.frozen) {
                a.frozenElements += elements;
                a.frozenBytes += bytes;
            } else {
                a.parameterBytes += bytes;
                if (expert) a.expertParameterBytes += bytes;
                if (v.keptInFp32) adapterParameters += int64_t(elements);
                if (v.besideFrozenOriginal) {  // PEFT's frozen original, beside the trained copy
                    a.frozenElements += elements;
                    a.frozenBytes += bytes;
                }
                trainableParameters += int64_t(elements);
                if (elements < kSmallTensorElements) smallTrainableParameters += int64_t(elements);
                ++parameterTensors;
                largestParameterBytes = std::max(largestParameterBytes, bytes);
            }
        }
        parameters += a.parameters;
        parameterBytes += a.parameterBytes;
        expertParameterBytes += a.expertParameterBytes;

        const GraphFacts facts{g, grad, owner, numel, gradConsumers};
        for (int pi = 0; pi < kElementPrecisionCount; ++pi) {
            const TrainingPrecision p = precisionOfElementIndex(pi);
            a.bytes[pi] = opBytes(facts, i, a, cls, costs, p, es[pi], storage[pi], extraKey, saved[pi], memory[pi],
                                  a.castWeightElements);
            memory[pi].castWeightBytes +=
                a.castWeightElements * (p == TrainingPrecision::Fp8 && a.opClass == "linear" ? 1 : 2);
        }
        extraKey += int(c2.saved.size());
    }
    if (expertParallel <= 1) expertUnits.clear();
    for (int pi = 0; pi < kElementPrecisionCount; ++pi)
        for (size_t s = 0; s < memory[pi].saved.size(); ++s) {
            const auto& y = saved[pi].samples[s];
            memory[pi].saved[s].bytes = BatchPoly::through(y[0], y[1], y[2]);
            memory[pi].savedTotal += memory[pi].saved[s].bytes;
        }

    std::set<int> buffers;
    for (const Operation& op : g.ops)
        for (int in : op.inputs)
            if (in >= 0 && g.values[in].kind == ValueKind::Buffer) buffers.insert(in);
    for (int v : buffers) bufferBytes += numel[v][0] * dtypeSize(g.values[v].dtype);
    for (int in : g.inputs) {
        double y[3];
        for (int k = 0; k < 3; ++k) y[k] = numel[in][k] * dtypeSize(g.values[in].dtype);
        inputBytes += fit(y);
    }

    // Checkpoint segments: sqrt(L) runs of equally many working operations.
    std::vector<int> working;
    for (const AnalyzedOp& a : ops)
        if (a.hasWork()) working.push_back(a.op);
    workingOps = int(working.size());
    const int segments = std::max(1, int(std::lround(std::sqrt(double(working.size())))));
    for (int s = 0; s < segments && !working.empty(); ++s)
        segmentStart.push_back(s == 0 ? 0 : working[s * working.size() / segments]);
    if (segmentStart.empty()) segmentStart.push_back(0);
    blocks = int(units.size()) - 1;
    // Under sequence parallelism a checkpoint keeps its GPU's share of a split tensor: the outputs
    // of the split ops and of the reduce-scatters (a g with sequence_parallel).
    std::vector<std::array<double, 3>> kept = numel;
    for (const Operation& op : g.ops) {
        int64_t shards = op.attrInt("sequence_shards", 1);
        if (op.type == "AllReduce" && op.attrInt("sequence_parallel", 0) != 0 &&
            op.attrString("pass", "forward") == "forward")
            shards = op.attrInt("group_size", 1);
        if (shards > 1)
            for (int v : op.outputs)
                if (v >= 0)
                    for (double& e : kept[size_t(v)]) e /= double(shards);
    }
    buildCheckpointPlans(g, opUnit, kept, es);
}

void ModelAnalysis::buildCheckpointPlans(const Graph& g, const std::vector<int>& opUnit,
                                         const std::vector<std::array<double, 3>>& numel,
                                         const std::array<std::vector<int>, kElementPrecisionCount>& es) {
    const size_t n = g.ops.size();
    // The linear layers' GEMMs (a parameter operand: what PyTorch runs as aten.mm), numbered from 1
    // within their block in graph order; torchtitan's selective-op policy keeps the odd ones.
    std::vector<char> stored(n, 0);
    std::vector<int> linearCount(units.size(), 0);
    for (size_t i = 0; i < n; ++i) {
        const AnalyzedOp& a = ops[i];
        if (opUnit[i] == 0) continue;
        if (a.kind == OpKind::Attention) stored[i] = 1;
        if (a.kind != OpKind::Gemm) continue;
        const bool linear = std::any_of(g.ops[i].inputs.begin(), g.ops[i].inputs.end(), [&](int in) {
            return in >= 0 && g.values[in].kind == ValueKind::Parameter;
        });
        if (linear) stored[i] = ++linearCount[size_t(opUnit[i])] % 2 == 1;
    }
    std::vector<char> storedValue(g.values.size(), 0);
    for (size_t i = 0; i < n; ++i)
        if (stored[i])
            for (int out : g.ops[i].outputs)
                if (out >= 0) storedValue[size_t(out)] = 1;

    for (Checkpointing c : kAllCheckpointings) {
        CheckpointPlan& plan = checkpointPlans[size_t(c)];
        plan.recomputed.assign(n, 0);
        plan.spanStart = {0};
        if (c == Checkpointing::None) continue;
        const bool blockPolicy = c != Checkpointing::Sqrt;
        plan.fellBack = blockPolicy && blocks < 2;
        // The checkpointed region of each op (-1: none) and the region count.
        std::vector<int>& region = plan.region;
        region.assign(n, -1);
        int regions = 0;
        if (!blockPolicy || plan.fellBack) {
            plan.spanStart = segmentStart;
            regions = int(segmentStart.size());
            for (size_t i = 0; i < n; ++i) {
                region[i] = int(std::upper_bound(segmentStart.begin(), segmentStart.end(), int(i)) -
                                segmentStart.begin()) - 1;
                plan.recomputed[i] = int(i) < segmentStart.back();
            }
        } else {
            std::vector<int> first(units.size(), -1);
            for (size_t i = 0; i < n; ++i)
                if (opUnit[i] > 0 && first[size_t(opUnit[i])] < 0) first[size_t(opUnit[i])] = int(i);
            for (size_t u = 1; u < units.size(); ++u)
                if (first[u] > 0) plan.spanStart.push_back(first[u]);
            std::sort(plan.spanStart.begin(), plan.spanStart.end());
            plan.spanStart.erase(std::unique(plan.spanStart.begin(), plan.spanStart.end()), plan.spanStart.end());
            regions = blocks;
            for (size_t i = 0; i < n; ++i) {
                const int block = opUnit[i] - 1;  // 0-based, in order of appearance
                if (block < 0) continue;
                // torchtitan's selective layer policy wraps its 2nd, 4th, ... block.
                if (c == Checkpointing::EveryOtherBlock && block % 2 == 0) continue;
                region[i] = block;
                plan.recomputed[i] = c != Checkpointing::SelectiveOps || !stored[i];
            }
        }
        const bool selective = c == Checkpointing::SelectiveOps && !plan.fellBack;
        // A region's inputs: activations it reads that another region or no region made (a
        // selective checkpoint stores its kept outputs instead). Each is counted at the first region
        // reading it, the last whose backward frees it; a region rerun reads its own inputs rather
        // than saving them again.
        std::vector<int> inputRegion(g.values.size(), -1);
        std::set<std::pair<int, int>> inputOf;  // (region, value)
        for (size_t i = 0; i < n; ++i) {
            if (region[i] < 0) continue;
            for (int in : g.ops[i].inputs) {
                if (in < 0) continue;
                const Value& val = g.values[size_t(in)];
                if (val.kind != ValueKind::Activation || val.producer < 0) continue;
                if (region[size_t(val.producer)] == region[i] || (selective && storedValue[size_t(in)])) continue;
                inputOf.insert({region[i], in});
                if (inputRegion[size_t(in)] < 0) inputRegion[size_t(in)] = region[i];
            }
        }
        for (int pi = 0; pi < kElementPrecisionCount; ++pi) {
            CheckpointPlan::Memory& m = plan.memory[size_t(pi)];
            m.regionSaved.assign(size_t(regions), BatchPoly{});
            m.regionInputs.assign(size_t(regions), BatchPoly{});
            auto bytesOf = [&](size_t v) {
                double y[3];
                for (int k = 0; k < 3; ++k) y[k] = numel[v][size_t(k)] * es[size_t(pi)][v];
                return fit(y);
            };
            for (const SavedActivation& sa : memory[size_t(pi)].saved) {
                const int r = region[size_t(sa.freedAfter)];
                if (selective && sa.value >= 0 && storedValue[size_t(sa.value)]) continue;  // stored below
                if (r < 0 || (selective && sa.value < 0 && stored[size_t(sa.freedAfter)]))
                    m.kept.push_back({sa.freedAfter, sa.bytes});
                else if (sa.value < 0 || !inputOf.count({r, sa.value}))
                    m.regionSaved[size_t(r)] += sa.bytes;
            }
            for (size_t v = 0; v < g.values.size(); ++v) {
                if (selective && storedValue[v]) m.kept.push_back({g.values[v].producer, bytesOf(v)});
                if (inputRegion[v] >= 0) m.regionInputs[size_t(inputRegion[v])] += bytesOf(v);
            }
            std::stable_sort(m.kept.begin(), m.kept.end(), [](const CheckpointPlan::Kept& a, const CheckpointPlan::Kept& b) {
                return a.op < b.op;
            });
        }
        plan.regionFirstOp.assign(size_t(regions), -1);
        for (size_t i = n; i-- > 0;)
            if (region[i] >= 0) plan.regionFirstOp[size_t(region[i])] = int(i);
        for (int r = 0; r < regions; ++r)  // a block left whole: empty, at its predecessor's start
            if (plan.regionFirstOp[size_t(r)] < 0) plan.regionFirstOp[size_t(r)] = r ? plan.regionFirstOp[size_t(r - 1)] : 0;
    }
}

double CheckpointPlan::Memory::peak(double n) const {
    double inputs = 0, worst = 0;
    for (size_t k = 0; k < regionSaved.size(); ++k) {
        inputs += regionInputs[k].at(n);
        worst = std::max(worst, inputs + regionSaved[k].at(n));
    }
    double total = 0;
    for (const Kept& k : kept) total += k.bytes.at(n);
    return total + worst;
}

double ModelAnalysis::frozenStoredBytes(const ParameterUnit& u, TrainingPrecision p) {
    return u.nf4Elements * kNf4BytesPerElement + (isMixedPrecision(p) ? 2 * u.frozenElements : u.frozenBytes);
}

double ModelAnalysis::frozenStoredBytes(TrainingPrecision p) const {
    double total = 0;
    for (const ParameterUnit& u : units) total += frozenStoredBytes(u, p);
    return total;
}

}  // namespace ts::predictors
