#pragma once
// Internal to predictors/trace: an operator's recorded "Input Dims" and "Input type" parsed once,
// so that the kernel moves (trace_kernels.cpp) and the batch and precision changes
// (trace_change.cpp) read the same shapes and can rewrite them.
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/kineto_trace.h"
#include "trainscope/predictors/trace/trace_kernels.h"

namespace ts::predictors {

struct OperatorShapes {
    std::vector<std::vector<double>> dims;  // per input; empty for scalars, lists and absent inputs
    std::vector<std::string> types;         // per input: "float", "c10::Half", "Scalar", "" ...
    bool tensor(size_t i) const { return i < dims.size() && !dims[i].empty(); }
    const std::string& type(size_t i) const;  // "" past the end
};

// Nullopt when `dims` is not a JSON array (types may be absent or malformed: then all "").
std::optional<OperatorShapes> parseOperatorShapes(const std::string& dims, const std::string& types);
// The operator's recorded shapes, nullopt without them.
std::optional<OperatorShapes> operatorShapesOf(const KinetoTrace& trace, const TraceOperator& op);

// Bytes of one element of an "Input type": 2 for half and bfloat16, 8 for double and long, 1 for
// bytes, bool and fp8, else 4.
double elementBytes(const std::string& type);
bool isFloat32Type(const std::string& type);     // "float"
bool is16BitFloatType(const std::string& type);  // "c10::Half", "c10::BFloat16" (and their short names)

double product(const std::vector<double>& d, size_t from = 0, size_t to = SIZE_MAX);

// operatorWork (trace_kernels.h) on shapes already parsed.
std::optional<OperatorWork> operatorWork(const std::string& op, const OperatorShapes& shapes);

}  // namespace ts::predictors
