#include "importers/onnx_torch_export.h"

#include <google/protobuf/reflection.h>
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ts::onnximport {
namespace {

constexpr int kValueInfoMetadataField = 4;
constexpr int kGraphMetadataField = 16;
constexpr int kNodeMetadataField = 9;

std::string metadataValue(const google::protobuf::Message& message, int fieldNumber, const std::string& key) {
    for (auto& [k, v] : metadataProps(message, fieldNumber))
        if (k == key) return v;
    return "";
}

bool identifierChar(char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
}

// "p_layer1_weight: PARAMETER target='layer1.weight'" -> (fx name, kind word, target).
void readSignatureLine(const std::string& line, TorchExportInfo& info) {
    size_t colon = line.find(": ");
    if (colon == std::string::npos || colon == 0) return;
    std::string fxName = line.substr(0, colon);
    size_t kindEnd = line.find(' ', colon + 2);
    std::string kindWord =
        line.substr(colon + 2, kindEnd == std::string::npos ? std::string::npos : kindEnd - colon - 2);
    ValueKind kind;
    if (kindWord == "PARAMETER")
        kind = ValueKind::Parameter;
    else if (kindWord == "BUFFER")
        kind = ValueKind::Buffer;
    else if (kindWord == "CONSTANT_TENSOR")
        kind = ValueKind::Constant;
    else
        return;
    const std::string marker = "target='";
    size_t t = line.find(marker, colon);
    if (t == std::string::npos) return;
    t += marker.size();
    size_t end = line.find('\'', t);
    if (end == std::string::npos || end == t) return;
    std::string target = line.substr(t, end - t);
    if (!info.kinds.emplace(target, kind).second) return;  // a target listed twice keeps its first kind
    info.targetOfFxName[fxName] = target;
    if (kind == ValueKind::Parameter) info.parameters.push_back(target);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> metadataProps(const google::protobuf::Message& message,
                                                               int fieldNumber) {
    std::vector<std::pair<std::string, std::string>> props;
    const google::protobuf::UnknownFieldSet& unknown = message.GetReflection()->GetUnknownFields(message);
    for (int i = 0; i < unknown.field_count(); ++i) {
        const google::protobuf::UnknownField& f = unknown.field(i);
        if (f.number() != fieldNumber || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) continue;
        onnx::StringStringEntryProto entry;
        if (entry.ParseFromString(f.length_delimited())) props.emplace_back(entry.key(), entry.value());
    }
    return props;
}

std::vector<std::string> pythonStringList(const std::string& repr) {
    std::vector<std::string> items;
    for (size_t p = 0; p < repr.size(); ++p) {
        if (repr[p] != '\'' && repr[p] != '"') continue;
        size_t close = repr.find(repr[p], p + 1);
        if (close == std::string::npos) break;
        items.push_back(repr.substr(p + 1, close - p - 1));
        p = close;
    }
    return items;
}

std::string leafName(const std::string& target) {
    size_t dot = target.rfind('.');
    return dot == std::string::npos ? target : target.substr(dot + 1);
}

Shape relativePositionTableShape(const Shape& gathered) {
    auto n = numel(gathered);
    if (!n.isConstant() || n.constant() <= 0 || gathered.size() < 2) return {};
    auto exactRoot = [](int64_t v) -> int64_t {
        auto r = static_cast<int64_t>(std::llround(std::sqrt(double(v))));
        return r > 0 && r * r == v ? r : 0;
    };
    int64_t positions = 0;  // W^2: the two equal trailing dimensions, or the root of a W^4 dimension
    const Dim& a = gathered[gathered.size() - 2];
    const Dim& b = gathered.back();
    if (a == b && a.isConstant()) positions = a.constant();
    for (const Dim& d : gathered)
        if (!positions && d.isConstant() && exactRoot(d.constant()) && exactRoot(exactRoot(d.constant())))
            positions = exactRoot(d.constant());
    int64_t window = positions > 1 ? exactRoot(positions) : 0;
    if (!window || n.constant() % (positions * positions) != 0) return {};
    return {Dim((2 * window - 1) * (2 * window - 1)), Dim(n.constant() / (positions * positions))};
}

bool TorchExportInfo::isParameter(const std::string& target) const {
    auto it = kinds.find(target);
    return it != kinds.end() && it->second == ValueKind::Parameter;
}

std::vector<std::string> TorchExportInfo::foldedParameters(const std::string& initializer) const {
    std::vector<std::string> params;
    auto it = foldedFrom.find(initializer);
    if (it == foldedFrom.end()) return params;
    for (const std::string& source : it->second)
        if (isParameter(source)) params.push_back(source);
    return params;
}

bool TorchExportInfo::foldGathers(const std::string& initializer) const {
    static const char* const kPicks[] = {"embedding", "index", "gather", "slice", "select", "narrow", "arange", "take"};
    auto picks = [](const std::string& name) {
        for (const char* p : kPicks)
            if (name.rfind(p, 0) == 0) return true;
        return false;
    };
    // A scatter writes into a whole tensor (Swin V2's q, k, v bias with the key's third zeroed: the
    // bias cloned and a zero slice scattered into it): it holds every element of the parameter.
    for (const char* write : {"slice_scatter", "select_scatter", "index_put", "scatter"})
        if (initializer.rfind(write, 0) == 0) return false;
    if (picks(initializer)) return true;
    auto it = foldedFrom.find(initializer);
    if (it == foldedFrom.end()) return false;
    for (const std::string& source : it->second) {
        auto kind = kinds.find(source);
        if ((kind != kinds.end() && kind->second == ValueKind::Buffer) || picks(source)) return true;
    }
    return false;
}

std::vector<std::string> TorchExportInfo::tensorsReadBy(const onnx::NodeProto& node) const {
    std::vector<std::string> targets;
    if (!present) return targets;
    std::string fx = metadataValue(node, kNodeMetadataField, "pkg.torch.onnx.fx_node");
    size_t args = fx.find("args = ");  // skips "%name : [...] = call_function[...]", the node itself
    if (args == std::string::npos) return targets;
    for (size_t p = fx.find('%', args); p != std::string::npos; p = fx.find('%', p + 1)) {
        size_t end = p + 1;
        while (end < fx.size() && identifierChar(fx[end])) ++end;
        auto it = targetOfFxName.find(fx.substr(p + 1, end - p - 1));
        if (it != targetOfFxName.end() && kinds.at(it->second) != ValueKind::Constant) targets.push_back(it->second);
        p = end - 1;
    }
    return targets;
}

std::vector<std::string> TorchExportInfo::parametersReadBy(const onnx::NodeProto& node) const {
    std::vector<std::string> targets = tensorsReadBy(node);
    targets.erase(std::remove_if(targets.begin(), targets.end(), [&](const std::string& t) { return !isParameter(t); }),
                  targets.end());
    return targets;
}

std::string TorchExportInfo::fxTarget(const onnx::NodeProto& node) const {
    if (!present) return "";
    std::string fx = metadataValue(node, kNodeMetadataField, "pkg.torch.onnx.fx_node");
    const std::string marker = "target=torch.ops.";
    size_t start = fx.find(marker);
    if (start == std::string::npos) return "";
    start += marker.size();
    size_t end = fx.find(']', start);
    return fx.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TorchExportInfo readTorchExportInfo(const onnx::GraphProto& graph) {
    TorchExportInfo info;
    std::string signature =
        metadataValue(graph, kGraphMetadataField, "pkg.torch.export.ExportedProgram.graph_signature");
    size_t start = 0;
    while (start < signature.size()) {
        size_t end = signature.find('\n', start);
        if (end == std::string::npos) end = signature.size();
        readSignatureLine(signature.substr(start, end - start), info);
        start = end + 1;
    }
    info.present = signature.find(": USER_INPUT") != std::string::npos || !info.kinds.empty();
    auto readValueInfo = [&](const onnx::ValueInfoProto& vi) {
        for (auto& [key, value] : metadataProps(vi, kValueInfoMetadataField)) {
            if (key == "pkg.onnxscript.optimizer.folded_from") {
                info.foldedFrom[vi.name()] = pythonStringList(value);
            } else if (key == "pkg.torch.export.graph_signature.InputSpec.kind") {
                if (value == "PARAMETER")
                    info.valueInfoKinds[vi.name()] = ValueKind::Parameter;
                else if (value == "BUFFER")
                    info.valueInfoKinds[vi.name()] = ValueKind::Buffer;
                else if (value == "CONSTANT_TENSOR")
                    info.valueInfoKinds[vi.name()] = ValueKind::Constant;
            }
        }
    };
    for (const auto& vi : graph.value_info()) readValueInfo(vi);
    for (const auto& vi : graph.input()) readValueInfo(vi);
    if (!info.present && info.valueInfoKinds.empty()) info.foldedFrom.clear();
    info.present = info.present || !info.valueInfoKinds.empty();
    return info;
}

}  // namespace ts::onnximport
