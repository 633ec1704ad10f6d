#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace ts {

enum class DType : uint8_t { Float32, Float16, BFloat16, Float64, Float8E4M3, Float8E5M2, Int64, Int32, Int16, Int8, UInt8, Bool, Complex64, String, Unknown };

// Bytes per element; Unknown and String give 0.
int dtypeSize(DType t);
const char* dtypeName(DType t);   // "float32", "int64", ...
std::optional<DType> parseDType(const std::string& name);  // accepts "float32", "fp32", "float", "int64", "long", ...
bool isFloating(DType t);
// ONNX TensorProto.DataType code <-> DType (Unknown for unsupported codes).
DType dtypeFromOnnx(int code);

}  // namespace ts
