#include "trainscope/core/graph.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "trainscope/core/errors.h"

namespace ts {

namespace {
template <typename T>
const T* getAttr(const Operation& op, const std::string& key) {
    auto it = op.attrs.find(key);
    if (it == op.attrs.end()) return nullptr;
    const T* v = std::get_if<T>(&it->second);
    if (!v) throw ShapeError("attribute '" + key + "' of " + op.type + " has the wrong type");
    return v;
}
}  // namespace

int64_t Operation::attrInt(const std::string& key, int64_t def) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) return def;
    if (auto* f = std::get_if<double>(&it->second)) {
        // A float where an integer is meant is truncated, as before; a NaN or one beyond int64 has no integer
        // (converting it would be undefined behaviour).
        if (!(*f >= -9.2e18 && *f <= 9.2e18))
            throw ShapeError("attribute '" + key + "' of " + type + " must be an integer, got " + std::to_string(*f));
        return static_cast<int64_t>(*f);
    }
    const int64_t* v = getAttr<int64_t>(*this, key);
    return *v;
}

double Operation::attrFloat(const std::string& key, double def) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) return def;
    if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
    return *getAttr<double>(*this, key);
}

std::string Operation::attrString(const std::string& key, const std::string& def) const {
    const std::string* v = getAttr<std::string>(*this, key);
    return v ? *v : def;
}

std::vector<int64_t> Operation::attrInts(const std::string& key, const std::vector<int64_t>& def) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) return def;
    if (auto* one = std::get_if<int64_t>(&it->second)) return {*one};
    return *getAttr<std::vector<int64_t>>(*this, key);
}

int Graph::addValue(Value v) {
    if (values.size() >= static_cast<size_t>(limits::kMaxOperations) * 4)
        throw ShapeError("graph has too many values");
    int idx = static_cast<int>(values.size());
    if (!v.name.empty()) {
        auto [it, inserted] = valueIndex_.emplace(v.name, idx);
        if (!inserted) throw ShapeError("duplicate tensor name '" + v.name + "'");
    }
    values.push_back(std::move(v));
    return idx;
}

int Graph::addOperation(Operation op) {
    if (ops.size() >= static_cast<size_t>(limits::kMaxOperations)) throw ShapeError("graph has too many operations");
    int idx = static_cast<int>(ops.size());
    for (int in : op.inputs)
        if (in < -1 || in >= static_cast<int>(values.size()))
            throw ShapeError("operation '" + op.name + "' refers to a missing input");
    for (int out : op.outputs) {
        if (out < 0 || out >= static_cast<int>(values.size()))
            throw ShapeError("operation '" + op.name + "' refers to a missing output");
        if (values[out].producer != -1 || values[out].kind != ValueKind::Activation)
            throw ShapeError("tensor '" + values[out].name + "' is produced twice");
        values[out].producer = idx;
    }
    ops.push_back(std::move(op));
    return idx;
}

int Graph::findValue(const std::string& n) const {
    auto it = valueIndex_.find(n);
    return it == valueIndex_.end() ? -1 : it->second;
}

std::vector<int> Graph::parameterOwners() const {
    std::vector<int> owner(values.size(), -1);
    for (size_t i = 0; i < ops.size(); ++i)
        for (int in : ops[i].inputs)
            if (in >= 0 && values[in].kind == ValueKind::Parameter && owner[in] < 0) owner[in] = static_cast<int>(i);
    return owner;
}

int64_t Graph::parameterCount() const {
    std::set<int> used;
    for (const Operation& op : ops)
        for (int in : op.inputs)
            if (in >= 0 && values[in].kind == ValueKind::Parameter) used.insert(in);
    int64_t total = 0;
    for (int v : used) total += numel(values[v].shape).eval(1, 1);
    return total;
}

int64_t Graph::activeParameterCount() const {
    // A MixtureOfExperts operation's inputs from the third on are its routed experts' weights and biases,
    // [E, ...] each (ops/transformer.cpp); a token reaches top_k of the E.
    std::set<int> routed;
    double unreached = 0;
    for (const Operation& op : ops) {
        if (op.type != "MixtureOfExperts") continue;
        const double topK = double(std::max<int64_t>(1, op.attrInt("top_k", 1)));
        for (size_t k = 2; k < op.inputs.size(); ++k) {
            const int v = op.inputs[k];
            if (v < 0 || values[v].kind != ValueKind::Parameter || values[v].shape.empty() || !routed.insert(v).second)
                continue;
            // Under expert parallelism the weights hold one GPU's share of the router's experts.
            const double experts =
                double(values[v].shape[0].eval(1, 1)) * double(std::max<int64_t>(1, op.attrInt("expert_shards", 1)));
            if (experts > topK) unreached += double(numel(values[v].shape).eval(1, 1)) * (1 - topK / experts);
        }
    }
    return parameterCount() - static_cast<int64_t>(std::llround(unreached));
}

void Graph::validate() const {
    std::set<std::string> names;
    for (const Value& v : values)
        if (!v.name.empty() && !names.insert(v.name).second)
            throw std::logic_error("duplicate value name " + v.name);
    for (size_t i = 0; i < ops.size(); ++i) {
        for (int in : ops[i].inputs) {
            if (in == -1) continue;
            if (in < 0 || in >= static_cast<int>(values.size()))
                throw std::logic_error("operation " + ops[i].name + " has a dangling input");
            if (values[in].producer >= static_cast<int>(i))
                throw std::logic_error("operation " + ops[i].name + " uses " + values[in].name + " before it is produced");
        }
        for (int out : ops[i].outputs)
            if (out < 0 || out >= static_cast<int>(values.size()) || values[out].producer != static_cast<int>(i))
                throw std::logic_error("operation " + ops[i].name + " has an inconsistent output");
    }
    for (int in : inputs)
        if (in < 0 || in >= static_cast<int>(values.size())) throw std::logic_error("dangling graph input");
    for (int out : outputs)
        if (out < 0 || out >= static_cast<int>(values.size())) throw std::logic_error("dangling graph output");
}

}  // namespace ts
