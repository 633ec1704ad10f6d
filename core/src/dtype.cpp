#include "trainscope/core/dtype.h"

#include <algorithm>
#include <cctype>

namespace ts {

int dtypeSize(DType t) {
    switch (t) {
        case DType::Float64: case DType::Int64: case DType::Complex64: return 8;
        case DType::Float32: case DType::Int32: return 4;
        case DType::Float16: case DType::BFloat16: case DType::Int16: return 2;
        case DType::Float8E4M3: case DType::Float8E5M2: case DType::Int8: case DType::UInt8: case DType::Bool: return 1;
        case DType::String: case DType::Unknown: return 0;
    }
    return 0;
}

const char* dtypeName(DType t) {
    switch (t) {
        case DType::Float32: return "float32";
        case DType::Float16: return "float16";
        case DType::BFloat16: return "bfloat16";
        case DType::Float64: return "float64";
        case DType::Float8E4M3: return "float8_e4m3";
        case DType::Float8E5M2: return "float8_e5m2";
        case DType::Int64: return "int64";
        case DType::Int32: return "int32";
        case DType::Int16: return "int16";
        case DType::Int8: return "int8";
        case DType::UInt8: return "uint8";
        case DType::Bool: return "bool";
        case DType::Complex64: return "complex64";
        case DType::String: return "string";
        case DType::Unknown: return "unknown";
    }
    return "unknown";
}

std::optional<DType> parseDType(const std::string& name) {
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (n == "float32" || n == "fp32" || n == "float") return DType::Float32;
    if (n == "float16" || n == "fp16" || n == "half") return DType::Float16;
    if (n == "bfloat16" || n == "bf16") return DType::BFloat16;
    if (n == "float64" || n == "fp64" || n == "double") return DType::Float64;
    if (n == "int64" || n == "long") return DType::Int64;
    if (n == "int32" || n == "int") return DType::Int32;
    if (n == "int16") return DType::Int16;
    if (n == "int8") return DType::Int8;
    if (n == "uint8") return DType::UInt8;
    if (n == "bool") return DType::Bool;
    return std::nullopt;
}

bool isFloating(DType t) {
    switch (t) {
        case DType::Float32: case DType::Float16: case DType::BFloat16: case DType::Float64:
        case DType::Float8E4M3: case DType::Float8E5M2: return true;
        default: return false;
    }
}

DType dtypeFromOnnx(int code) {
    // onnx.TensorProto.DataType
    switch (code) {
        case 1: return DType::Float32;
        case 2: return DType::UInt8;
        case 3: return DType::Int8;
        case 5: return DType::Int16;
        case 6: return DType::Int32;
        case 7: return DType::Int64;
        case 8: return DType::String;
        case 9: return DType::Bool;
        case 10: return DType::Float16;
        case 11: return DType::Float64;
        case 14: return DType::Complex64;
        case 16: return DType::BFloat16;
        case 17: return DType::Float8E4M3;
        case 19: return DType::Float8E5M2;
        case 4: return DType::Int16;   // uint16: same size
        case 12: return DType::Int32;  // uint32
        case 13: return DType::Int64;  // uint64
        default: return DType::Unknown;
    }
}

}  // namespace ts
