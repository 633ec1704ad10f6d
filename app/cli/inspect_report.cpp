#include "inspect_report.h"

#include <cmath>
#include <algorithm>
#include <functional>
#include <limits>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace ts::cli {
namespace {

nlohmann::json shapeJson(const Shape& s) {
    nlohmann::json a = nlohmann::json::array();
    for (const Dim& d : s) {
        if (d.isConstant()) a.push_back(d.constant());
        else a.push_back(d.str());
    }
    return a;
}

std::string shapeText(const std::vector<int64_t>& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
    return r + "]";
}

std::string fixed(double v, int decimals) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(decimals) << v;
    return os.str();
}

}  // namespace

std::string humanCount(double v) {
    const char* units[] = {"", " k", " M", " G", " T", " P", " E"};
    int u = 0;
    while (std::fabs(v) >= 1000.0 && u < 6) {
        v /= 1000.0;
        ++u;
    }
    return u == 0 ? fixed(v, 0) : fixed(v, 2) + units[u];
}

std::string humanBytes(double v) {
    const char* units[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
    int u = 0;
    while (std::fabs(v) >= 1024.0 && u < 5) {
        v /= 1024.0;
        ++u;
    }
    return u == 0 ? fixed(v, 0) + units[0] : fixed(v, 1) + units[u];
}

nlohmann::json inspectJson(const Graph& g, const ModelCosts& c) {
    using nlohmann::json;
    json j;
    j["trainscope_inspect"] = 1;
    json inputs = json::array();
    for (int v : g.inputs)
        inputs.push_back({{"name", g.values[v].name}, {"shape", shapeJson(g.values[v].shape)},
                          {"dtype", dtypeName(g.values[v].dtype)}});
    j["model"] = {{"name", g.name},
                  {"source", g.source},
                  {"format", g.format},
                  {"batch", c.batch},
                  {"seq", g.defaults.seq > 0 ? json(c.seq) : json(nullptr)},
                  {"inputs", inputs},
                  {"operations", g.ops.size()},
                  {"notes", g.notes}};
    const CostTotals& t = c.totals;
    j["totals"] = {{"parameters", t.parameters},          {"active_parameters", g.activeParameterCount()},
                   {"parameter_bytes", t.parameterBytes}, {"forward_flops", t.forwardFlops},
                   {"backward_flops", t.backwardFlops},   {"bytes_read", t.bytesRead},
                   {"bytes_written", t.bytesWritten},     {"activation_bytes", t.activationBytes},
                   {"input_bytes", t.inputBytes}};
    json layers = json::array();
    for (const LayerCost& l : c.layers) {
        const Operation& op = g.ops[l.op];
        const Shape& sym = op.outputs.empty() ? Shape{} : g.values[op.outputs[0]].shape;
        layers.push_back({{"name", op.name},
                          {"path", op.modulePath},
                          {"op", op.type},
                          {"output_shape", l.outputShape},
                          {"output_shape_symbolic", shapeJson(sym)},
                          {"parameters", l.parameters},
                          {"forward_flops", l.cost.forwardFlops},
                          {"backward_flops", l.cost.backwardFlops},
                          {"bytes_read", l.cost.bytesRead},
                          {"bytes_written", l.cost.bytesWritten},
                          {"activation_bytes", l.activationBytes}});
    }
    j["layers"] = std::move(layers);
    json modules = json::array();
    for (const ModuleCost& m : c.modules)
        modules.push_back({{"path", m.path},
                           {"parent", m.parent < 0 ? json(nullptr) : json(c.modules[m.parent].path)},
                           {"parameters", m.parameters},
                           {"forward_flops", m.forwardFlops},
                           {"backward_flops", m.backwardFlops},
                           {"activation_bytes", m.activationBytes},
                           {"operations", m.operationCount}});
    j["modules"] = std::move(modules);
    return j;
}

void printInspectTable(std::ostream& os, const Graph& g, const ModelCosts& c, int maxDepth) {
    os << g.name << " (" << g.format << ", " << g.source << ")  batch " << c.batch;
    if (g.defaults.seq > 0) os << ", sequence " << c.seq;
    os << "\n\n";
    char line[512];
    auto row = [&](const std::string& name, const std::string& op, const std::string& shape, double params,
                   double fwd, double bwd, double act) {
        std::snprintf(line, sizeof line, "%-58s %-20s %-22s %10s %11s %11s %11s\n", name.c_str(), op.c_str(),
                      shape.c_str(), params > 0 ? humanCount(params).c_str() : "-", humanCount(fwd).c_str(),
                      humanCount(bwd).c_str(), humanBytes(act).c_str());
        os << line;
    };
    std::snprintf(line, sizeof line, "%-58s %-20s %-22s %10s %11s %11s %11s\n", "module / operation", "op",
                  "output shape", "params", "fwd FLOPs", "bwd FLOPs", "saved");
    os << line << std::string(160, '-') << "\n";

    // First operation of every module (modules are created in graph order, so a child's first
    // operation comes after its parent's first).
    std::vector<int> firstOp(c.modules.size(), std::numeric_limits<int>::max());
    for (size_t m = c.modules.size(); m-- > 0;) {
        for (int li : c.modules[m].layers) firstOp[m] = std::min(firstOp[m], c.layers[li].op);
        for (int ch : c.modules[m].children) firstOp[m] = std::min(firstOp[m], firstOp[ch]);
    }
    // Pre-order walk in graph order: a module's row, then its own operations and its children
    // interleaved as they run.
    std::function<void(int, int)> walk = [&](int m, int depth) {
        const ModuleCost& mod = c.modules[m];
        std::string indent(static_cast<size_t>(2 * depth), ' ');
        if (m != 0) row(indent + mod.name, "", "", double(mod.parameters), mod.forwardFlops, mod.backwardFlops,
                        mod.activationBytes);
        if (maxDepth >= 0 && depth >= maxDepth) return;
        std::vector<std::pair<int, int>> items;  // (first op, layer index or -(module index) - 1)
        for (int li : mod.layers) items.emplace_back(c.layers[li].op, li);
        for (int ch : mod.children) items.emplace_back(firstOp[ch], -ch - 1);
        std::sort(items.begin(), items.end());
        for (const auto& [order, item] : items) {
            if (item < 0) {
                walk(-item - 1, depth + 1);
                continue;
            }
            const LayerCost& l = c.layers[item];
            const Operation& op = g.ops[l.op];
            std::string label = indent + (m == 0 ? "" : "  ") + "· " + op.name.substr(op.name.rfind('/') + 1);
            row(label, op.type, shapeText(l.outputShape), double(l.parameters), l.cost.forwardFlops,
                l.cost.backwardFlops, l.activationBytes);
        }
    };
    walk(0, 0);
    os << std::string(160, '-') << "\n";
    const CostTotals& t = c.totals;
    const int64_t active = g.activeParameterCount();
    os << "operations " << g.ops.size() << ", parameters " << humanCount(double(t.parameters)) << " (" << t.parameters
       << ")";
    if (active < t.parameters) os << ", " << humanCount(double(active)) << " (" << active << ") active per token";
    os << ", forward " << humanCount(t.forwardFlops) << "FLOP, backward " << humanCount(t.backwardFlops)
       << "FLOP, saved activations " << humanBytes(t.activationBytes) << "\n";
    for (const std::string& note : g.notes) os << "note: " << note << "\n";
}

}  // namespace ts::cli
