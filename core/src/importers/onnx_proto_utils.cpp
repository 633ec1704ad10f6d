#include "importers/onnx_proto_utils.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "importers/onnx_torch_export.h"
#include "trainscope/core/errors.h"

namespace ts::onnximport {
namespace {

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t(2) << 30;  // protobuf's own 2 GB message limit
constexpr int kRecursionLimit = 3 * limits::kMaxNesting + 16;      // graph -> node -> attribute -> graph ...

// Whether `byte` can start a ModelProto: a tag of one of its fields with the right wire type.
bool startsLikeModelProto(unsigned char byte, unsigned char next) {
    switch (byte) {
        case 0x08: case 0x28:                                      // ir_version, model_version (varint)
        case 0x12: case 0x1a: case 0x22: case 0x32: case 0x3a:     // producer, version, domain, doc, graph
        case 0x42: case 0x72:                                      // opset_import, metadata_props
            return true;
        case 0xa2: case 0xca: return next == 0x01;                 // training_info (20), functions (25)
        default: return false;
    }
}

std::string describeHead(const std::string& head) {
    if (head.size() >= 2 && head[0] == 'P' && head[1] == 'K')
        return "not an ONNX model: it is a zip archive (a TorchScript .pt file?)";
    size_t i = head.find_first_not_of(" \t\r\n");
    if (i != std::string::npos && head[i] == '{') return "not an ONNX model: it looks like JSON text";
    return "not an ONNX model: the file does not start like an ONNX protobuf";
}

// Bytes per element of inline raw_data, 0 when not checked (strings, sub-byte types).
int rawElementSize(int code) {
    switch (code) {
        case 1: case 6: case 12: return 4;
        case 2: case 3: case 9: case 17: case 18: case 19: case 20: return 1;
        case 4: case 5: case 10: case 16: return 2;
        case 7: case 11: case 13: case 14: return 8;
        case 15: return 16;
        default: return 0;
    }
}

double halfToDouble(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = exp == 0 ? std::ldexp(mant, -24) : exp == 31 ? (mant ? NAN : INFINITY) : std::ldexp(mant + 1024, exp - 25);
    return sign ? -v : v;
}
double bfloatToDouble(uint16_t b) {
    uint32_t bits = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// The i-th element of raw_data, bounded by raw_data itself: decodeTensor checks its size against
// the shape, but the read does not rely on that.
template <typename T>
T readRaw(const std::string& raw, size_t i) {
    if (i >= raw.size() / sizeof(T))
        throw OnnxProblem("raw_data holds " + std::to_string(raw.size()) + " bytes, element " + std::to_string(i) +
                          " is past its end");
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));  // little-endian host assumed (x86/ARM)
    return v;
}

bool isIntegralCode(int code) { return code == 2 || code == 3 || code == 4 || code == 5 || code == 6 || code == 7 ||
                                       code == 9 || code == 12 || code == 13; }
bool isFloatCode(int code) { return code == 1 || code == 10 || code == 11 || code == 16; }

// The typed field of TensorProto that holds the values of a data type when there is no raw_data
// (onnx.proto: float_data for FLOAT and COMPLEX64; int32_data for every type of 32 bits or fewer
// except FLOAT and UINT32; int64_data for INT64; double_data for DOUBLE and COMPLEX128;
// uint64_data for UINT32 and UINT64; string_data for STRING).
enum class TypedField { Float, Int32, Int64, Double, UInt64, String, None };

TypedField typedFieldOf(int code) {
    switch (code) {
        case 1: case 14: return TypedField::Float;
        case 2: case 3: case 4: case 5: case 6: case 9: case 10: case 16: case 17: case 18: case 19: case 20:
        case 21: case 22:
            return TypedField::Int32;
        case 7: return TypedField::Int64;
        case 8: return TypedField::String;
        case 11: case 15: return TypedField::Double;
        case 12: case 13: return TypedField::UInt64;
        default: return TypedField::None;
    }
}

const char* typedFieldName(TypedField f) {
    switch (f) {
        case TypedField::Float: return "float_data";
        case TypedField::Int32: return "int32_data";
        case TypedField::Int64: return "int64_data";
        case TypedField::Double: return "double_data";
        case TypedField::UInt64: return "uint64_data";
        case TypedField::String: return "string_data";
        case TypedField::None: break;
    }
    return "no typed field";
}

int64_t typedFieldSize(const onnx::TensorProto& t, TypedField f) {
    switch (f) {
        case TypedField::Float: return t.float_data_size();
        case TypedField::Int32: return t.int32_data_size();
        case TypedField::Int64: return t.int64_data_size();
        case TypedField::Double: return t.double_data_size();
        case TypedField::UInt64: return t.uint64_data_size();
        case TypedField::String: return t.string_data_size();
        case TypedField::None: break;
    }
    return 0;
}

std::string values(int64_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }

// Number of values held in all typed (non-raw) fields together.
int64_t typedCount(const onnx::TensorProto& t) {
    return int64_t(t.float_data_size()) + t.int32_data_size() + t.int64_data_size() + t.double_data_size() +
           t.uint64_data_size() + t.string_data_size();
}

// The i-th element of a repeated field, bounded by that field (not by the tensor's shape or the
// other fields): decodeTensor checks the count, but the read does not rely on that.
template <typename Field>
auto typedAt(const Field& field, size_t i, const char* name) {
    if (i >= static_cast<size_t>(field.size()))
        throw OnnxProblem(std::string(name) + " holds " + std::to_string(field.size()) + " values, element " +
                          std::to_string(i) + " is past its end");
    return field.Get(static_cast<int>(i));
}

void decodeContents(const onnx::TensorProto& t, TensorInfo& info) {
    int code = t.data_type();
    auto n = static_cast<size_t>(info.elements);
    const std::string& raw = t.raw_data();
    bool useRaw = t.has_raw_data();
    if (isIntegralCode(code)) {
        std::vector<Dim> v;
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) {
            int64_t x = 0;
            if (!useRaw) {
                if (code == 7) x = typedAt(t.int64_data(), i, "int64_data");
                else if (code == 12 || code == 13) x = static_cast<int64_t>(typedAt(t.uint64_data(), i, "uint64_data"));
                else x = typedAt(t.int32_data(), i, "int32_data");
            } else {
                switch (code) {
                    case 2: case 9: x = readRaw<uint8_t>(raw, i); break;
                    case 3: x = readRaw<int8_t>(raw, i); break;
                    case 4: x = readRaw<uint16_t>(raw, i); break;
                    case 5: x = readRaw<int16_t>(raw, i); break;
                    case 6: x = readRaw<int32_t>(raw, i); break;
                    case 12: x = readRaw<uint32_t>(raw, i); break;
                    default: x = readRaw<int64_t>(raw, i); break;
                }
            }
            v.push_back(Dim(x));
        }
        info.ints = std::move(v);
    } else if (isFloatCode(code)) {
        std::vector<double> v;
        v.reserve(n);
        for (size_t i = 0; i < n; ++i) {
            double x = 0;
            if (!useRaw) {
                if (code == 1) x = typedAt(t.float_data(), i, "float_data");
                else if (code == 11) x = typedAt(t.double_data(), i, "double_data");
                else if (code == 10) x = halfToDouble(static_cast<uint16_t>(typedAt(t.int32_data(), i, "int32_data")));
                else x = bfloatToDouble(static_cast<uint16_t>(typedAt(t.int32_data(), i, "int32_data")));
            } else {
                switch (code) {
                    case 1: x = readRaw<float>(raw, i); break;
                    case 11: x = readRaw<double>(raw, i); break;
                    case 10: x = halfToDouble(readRaw<uint16_t>(raw, i)); break;
                    default: x = bfloatToDouble(readRaw<uint16_t>(raw, i)); break;
                }
            }
            v.push_back(x);
        }
        info.floats = std::move(v);
    }
}

// Joins exporter scope segments: a segment that extends the previous one ("layer1" then
// "layer1.0") replaces it; others are appended.
std::string joinScopes(const std::vector<std::string>& segments) {
    std::vector<std::string> parts;
    for (const std::string& s : segments) {
        if (s.empty()) continue;
        std::string joined;
        for (const std::string& p : parts) joined += (joined.empty() ? "" : ".") + p;
        if (!joined.empty() && s.rfind(joined + ".", 0) == 0) {
            parts = {s};  // a full path
        } else if (!parts.empty() && s.rfind(parts.back() + ".", 0) == 0) {
            parts.back() = s;
        } else {
            parts.push_back(s);
        }
    }
    std::string path;
    for (const std::string& p : parts) path += (path.empty() ? "" : ".") + p;
    return path;
}

}  // namespace

void readModelFile(const std::string& path, onnx::ModelProto& model) {
    std::error_code ec;
    auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) throw OnnxProblem("no such file");
    if (std::filesystem::is_directory(status)) throw OnnxProblem("is a directory, not an ONNX file");
    std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) throw OnnxProblem("cannot read the file size (" + ec.message() + ")");
    if (size == 0) throw OnnxProblem("the file is empty");
    if (size > kMaxFileBytes)
        throw OnnxProblem("the file is larger than 2 GB, the protobuf limit; export with external data "
                          "(torch.onnx.export(..., external_data=True)) so that weights live in separate files");

    std::string head(16, '\0');
    {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw OnnxProblem("cannot open the file for reading");
        in.read(head.data(), static_cast<std::streamsize>(head.size()));
        head.resize(static_cast<size_t>(in.gcount()));
    }
    if (head.empty() || !startsLikeModelProto(static_cast<unsigned char>(head[0]),
                                              head.size() > 1 ? static_cast<unsigned char>(head[1]) : 0))
        throw OnnxProblem(describeHead(head));

    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw OnnxProblem("cannot open the file for reading");
    bool parsed = false;
    {
        google::protobuf::io::FileInputStream raw(fd);
        google::protobuf::io::CodedInputStream coded(&raw);
        coded.SetTotalBytesLimit(static_cast<int>(std::min<std::uintmax_t>(size + 1, INT32_MAX)));
        coded.SetRecursionLimit(kRecursionLimit);
        parsed = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
    }
    ::close(fd);
    if (!parsed)
        throw OnnxProblem("cannot be parsed as an ONNX protobuf: the file is truncated or corrupt (or nested deeper than " +
                          std::to_string(limits::kMaxNesting) + " levels)");
    if (!model.has_graph())
        throw OnnxProblem(model.ir_version() == 0 ? "not an ONNX model: no IR version and no graph"
                                                  : "the model has no graph (truncated file?)");
}

TensorInfo decodeTensor(const onnx::TensorProto& t, const std::string& what) {
    TensorInfo info;
    if (t.dims_size() > limits::kMaxRank)
        throw OnnxProblem(what + " has " + std::to_string(t.dims_size()) + " dimensions (the limit is " +
                          std::to_string(limits::kMaxRank) + ")");
    int64_t elements = 1;
    bool absurd = false;
    for (int64_t d : t.dims()) {
        if (d < 0) throw OnnxProblem(what + " has a negative dimension " + std::to_string(d));
        if (d > limits::kMaxDimValue) absurd = true;
        else if (__builtin_mul_overflow(elements, d, &elements) || elements > limits::kMaxTensorElements) absurd = true;
    }
    if (absurd) {
        std::string dims;
        for (int64_t d : t.dims()) dims += (dims.empty() ? "" : "x") + std::to_string(d);
        throw OnnxProblem(what + " claims an absurd size " + dims + " (more than " +
                          std::to_string(limits::kMaxTensorElements) + " elements)");
    }
    for (int64_t d : t.dims()) info.shape.push_back(Dim(d));
    info.elements = elements;
    info.dtype = dtypeFromOnnx(t.data_type());
    if (info.dtype == DType::Unknown)
        throw OnnxProblem(what + " has an unsupported data type (code " + std::to_string(t.data_type()) + ")");

    bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
    if (external) return info;  // weights stay in their files: only the shape matters
    if (t.has_raw_data()) {
        int size = rawElementSize(t.data_type());
        if (size > 0 && static_cast<uint64_t>(t.raw_data().size()) != static_cast<uint64_t>(elements) * size)
            throw OnnxProblem(what + " holds " + std::to_string(t.raw_data().size()) + " bytes of data but its shape " +
                              shapeStr(info.shape) + " needs " + std::to_string(elements * size));
    } else {
        int64_t count = typedCount(t);
        if (count == 0) return info;  // shape only (weights stripped)
        // Values are read from the one field the data type names: that field alone must hold them.
        TypedField field = typedFieldOf(t.data_type());
        int64_t inField = typedFieldSize(t, field);
        if (inField != count)
            throw OnnxProblem(what + " holds " + values(count - inField) + " outside " + typedFieldName(field) +
                              ", the field of its data type " + dtypeName(info.dtype) + " (" + typedFieldName(field) +
                              " holds " + std::to_string(inField) + ")");
        int64_t expected = (t.data_type() == 14 || t.data_type() == 15) ? 2 * elements : elements;  // complex
        if (inField != expected)
            throw OnnxProblem(what + " holds " + values(inField) + " in " + typedFieldName(field) +
                              " but its shape " + shapeStr(info.shape) + " has " + std::to_string(elements) +
                              " elements");
    }
    if (elements <= limits::kMaxKnownValueElements) decodeContents(t, info);
    return info;
}

std::map<std::string, Attribute> convertAttributes(const onnx::NodeProto& node, const std::string& nodeLabel) {
    std::map<std::string, Attribute> attrs;
    for (const onnx::AttributeProto& a : node.attribute()) {
        const std::string& key = a.name();
        auto type = a.type();
        if (type == onnx::AttributeProto::UNDEFINED) {  // very old files: infer from the filled field
            if (a.has_g() || a.graphs_size()) type = onnx::AttributeProto::GRAPH;
            else if (a.has_t()) type = onnx::AttributeProto::TENSOR;
            else if (a.ints_size()) type = onnx::AttributeProto::INTS;
            else if (a.floats_size()) type = onnx::AttributeProto::FLOATS;
            else if (a.strings_size()) type = onnx::AttributeProto::STRINGS;
            else if (a.has_s()) type = onnx::AttributeProto::STRING;
            else if (a.has_f()) type = onnx::AttributeProto::FLOAT;
            else type = onnx::AttributeProto::INT;
        }
        switch (type) {
            case onnx::AttributeProto::INT: attrs[key] = static_cast<int64_t>(a.i()); break;
            case onnx::AttributeProto::FLOAT: attrs[key] = static_cast<double>(a.f()); break;
            case onnx::AttributeProto::STRING: attrs[key] = a.s(); break;
            case onnx::AttributeProto::INTS: attrs[key] = std::vector<int64_t>(a.ints().begin(), a.ints().end()); break;
            case onnx::AttributeProto::FLOATS: attrs[key] = std::vector<double>(a.floats().begin(), a.floats().end()); break;
            case onnx::AttributeProto::STRINGS:
                attrs[key] = std::vector<std::string>(a.strings().begin(), a.strings().end());
                break;
            case onnx::AttributeProto::TENSOR: {
                TensorInfo info = decodeTensor(a.t(), "attribute '" + key + "' of " + nodeLabel);
                attrs[key + "_dtype"] = static_cast<int64_t>(a.t().data_type());
                if (info.ints && info.ints->size() == 1 && (*info.ints)[0].isConstant()) {
                    attrs[key] = (*info.ints)[0].constant();
                } else if (info.floats && info.floats->size() == 1) {
                    attrs[key] = (*info.floats)[0];
                } else if (info.ints) {
                    std::vector<int64_t> v;
                    for (const Dim& d : *info.ints) v.push_back(d.constant());
                    attrs[key] = std::move(v);
                } else if (info.floats) {
                    attrs[key] = *info.floats;
                }
                break;
            }
            case onnx::AttributeProto::GRAPH: case onnx::AttributeProto::GRAPHS:
                throw OnnxProblem("unsupported operator '" + node.op_type() + "' (" + nodeLabel +
                                  "): operators with subgraphs (If, Loop, Scan) are not supported");
            default: break;  // sparse tensors, type protos: not needed for shapes
        }
    }
    return attrs;
}

std::string modulePathFromNodeName(const std::string& nodeName) {
    if (nodeName.size() < 2 || nodeName[0] != '/') return "";
    std::vector<std::string> segments;
    size_t start = 1;
    while (start <= nodeName.size()) {
        size_t slash = nodeName.find('/', start);
        if (slash == std::string::npos) break;  // the last segment is the operator ("Conv", "Add_1")
        segments.push_back(nodeName.substr(start, slash - start));
        start = slash + 1;
    }
    return joinScopes(segments);
}

bool looksLikeStateDictName(const std::string& name) {
    if (name.empty() || name.find("::") != std::string::npos || name[0] == '/' || name.find(' ') != std::string::npos)
        return false;
    size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) return false;
    std::string leaf = name.substr(dot + 1);
    return leaf.find_first_not_of("0123456789") != std::string::npos;  // "input.1" is not a key
}

std::string modulePathFromParameterName(const std::string& name) {
    if (!looksLikeStateDictName(name)) return "";
    return name.substr(0, name.rfind('.'));
}

std::string modulePathFromMetadata(const onnx::NodeProto& node) {
    // NodeProto.metadata_props is field 9 (ONNX 1.16+); the value is a Python list repr:
    // "['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d_1']".
    for (auto& [key, value] : metadataProps(node, 9)) {
        if (key != "pkg.torch.onnx.name_scopes") continue;
        std::vector<std::string> segments = pythonStringList(value);
        if (!segments.empty()) segments.pop_back();  // the operation itself
        return joinScopes(segments);
    }
    return "";
}

}  // namespace ts::onnximport
