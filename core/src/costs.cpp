#include "trainscope/core/costs.h"

#include <map>
#include <unordered_set>

#include "trainscope/core/errors.h"

namespace ts {
namespace {

// Index of the module for `path`, creating it and its ancestors ("a.b.c" -> "a", "a.b", "a.b.c").
int moduleFor(ModelCosts& mc, std::map<std::string, int>& index, const std::string& path) {
    auto it = index.find(path);
    if (it != index.end()) return it->second;
    size_t dot = path.rfind('.');
    int parent = moduleFor(mc, index, dot == std::string::npos ? std::string() : path.substr(0, dot));
    ModuleCost m;
    m.path = path;
    m.name = dot == std::string::npos ? path : path.substr(dot + 1);
    m.parent = parent;
    int idx = static_cast<int>(mc.modules.size());
    mc.modules.push_back(std::move(m));
    mc.modules[parent].children.push_back(idx);
    index.emplace(path, idx);
    return idx;
}

}  // namespace

ModelCosts computeCosts(const Graph& g, int64_t batch, int64_t seq) {
    if (batch < 1 || batch > limits::kMaxDimValue) throw ShapeError("batch size must be at least 1");
    if (seq <= 0) seq = g.defaults.seq > 0 ? g.defaults.seq : 1;
    ModelCosts mc;
    mc.batch = batch;
    mc.seq = seq;
    ModuleCost root;
    root.name = g.name;
    mc.modules.push_back(root);
    std::map<std::string, int> moduleIndex{{"", 0}};

    const std::vector<bool> grad = requiresGrad(g);
    const std::vector<int> owner = g.parameterOwners();
    std::unordered_set<int> savedValues;
    std::vector<std::unordered_set<int>> moduleSaved;

    mc.layers.reserve(g.ops.size());
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const Operation& op = g.ops[i];
        LayerCost lc;
        lc.op = static_cast<int>(i);
        if (!op.outputs.empty()) lc.outputShape = evalShape(g.values[op.outputs[0]].shape, batch, seq);
        std::unordered_set<int> owned;  // a parameter in two slots of its owner is counted once
        for (int in : op.inputs)
            if (in >= 0 && owner[in] == static_cast<int>(i) && owned.insert(in).second)
                lc.parameters += numel(g.values[in].shape).eval(batch, seq);
        lc.cost = operationCost(g, static_cast<int>(i), batch, seq, grad);
        lc.activationBytes = lc.cost.savedBytes();

        CostTotals& t = mc.totals;
        t.parameters += lc.parameters;
        t.forwardFlops += lc.cost.forwardFlops;
        t.backwardFlops += lc.cost.backwardFlops;
        t.bytesRead += lc.cost.bytesRead;
        t.bytesWritten += lc.cost.bytesWritten;
        for (const SavedTensor& s : lc.cost.saved)
            if (!s.onlyWhenNarrowed && (s.value < 0 || savedValues.insert(s.value).second)) t.activationBytes += s.bytes;

        int m = moduleFor(mc, moduleIndex, op.modulePath);
        mc.modules[m].layers.push_back(lc.op);
        if (moduleSaved.size() < mc.modules.size()) moduleSaved.resize(mc.modules.size());
        for (int a = m; a >= 0; a = mc.modules[a].parent) {
            ModuleCost& mod = mc.modules[a];
            // A tensor saved by two layers of one module is kept once by autograd.
            for (const SavedTensor& s : lc.cost.saved)
                if (!s.onlyWhenNarrowed && (s.value < 0 || moduleSaved[a].insert(s.value).second))
                    mod.activationBytes += s.bytes;
            mod.parameters += lc.parameters;
            mod.forwardFlops += lc.cost.forwardFlops;
            mod.backwardFlops += lc.cost.backwardFlops;
            mod.bytesRead += lc.cost.bytesRead;
            mod.bytesWritten += lc.cost.bytesWritten;
            mod.operationCount += 1;
        }
        mc.layers.push_back(std::move(lc));
    }
    // Parameters only used by no operation are not part of the model; those used are counted above.
    for (size_t v = 0; v < g.values.size(); ++v)
        if (owner[v] >= 0) mc.totals.parameterBytes += numel(g.values[v].shape).eval(batch, seq) * dtypeSize(g.values[v].dtype);
    for (int in : g.inputs) mc.totals.inputBytes += numel(g.values[in].shape).eval(batch, seq) * dtypeSize(g.values[in].dtype);
    return mc;
}

}  // namespace ts
