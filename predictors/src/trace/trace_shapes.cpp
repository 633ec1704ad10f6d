#include "trace_shapes.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace ts::predictors {
namespace {

std::string lowerCase(const std::string& s) {
    std::string out(s.substr(0, 64));
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

}  // namespace

const std::string& OperatorShapes::type(size_t i) const {
    static const std::string none;
    return i < types.size() ? types[i] : none;
}

std::optional<OperatorShapes> parseOperatorShapes(const std::string& inputDims, const std::string& inputTypes) {
    if (inputDims.empty()) return std::nullopt;
    const nlohmann::json dims = nlohmann::json::parse(inputDims, nullptr, false);
    if (!dims.is_array()) return std::nullopt;
    OperatorShapes s;
    for (const auto& d : dims) {
        std::vector<double> shape;
        if (d.is_array())
            for (const auto& x : d)
                if (x.is_number() && x.get<double>() >= 0) shape.push_back(x.get<double>());
        s.dims.push_back(std::move(shape));
    }
    const nlohmann::json types = nlohmann::json::parse(inputTypes, nullptr, false);
    if (types.is_array())
        for (const auto& t : types) s.types.push_back(t.is_string() ? t.get<std::string>() : std::string());
    return s;
}

std::optional<OperatorShapes> operatorShapesOf(const KinetoTrace& trace, const TraceOperator& op) {
    if (op.inputShapes < 0) return std::nullopt;
    return parseOperatorShapes(trace.str(op.inputShapes), trace.str(op.inputTypes));
}

double elementBytes(const std::string& type) {
    const std::string t = lowerCase(type);
    if (t.find("half") != std::string::npos || t.find("bfloat16") != std::string::npos) return 2;
    if (t.find("double") != std::string::npos || t.find("long") != std::string::npos) return 8;
    if (t.find("float8") != std::string::npos || t.find("char") != std::string::npos || t == "bool") return 1;
    return 4;
}

bool isFloat32Type(const std::string& type) {
    return type == "float" || type == "Float";
}

bool is16BitFloatType(const std::string& type) {
    const std::string t = lowerCase(type);
    return t == "c10::half" || t == "half" || t == "c10::bfloat16" || t == "bfloat16";
}

double product(const std::vector<double>& d, size_t from, size_t to) {
    double p = 1;
    for (size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
    return p;
}

std::optional<OperatorWork> operatorWork(const std::string& op, const OperatorShapes& shapes) {
    const bool plain = op == "aten::mm" || op == "aten::bmm" || op == "aten::matmul";
    const bool biased = op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addbmm";
    const bool attention = op.find("scaled_dot_product") != std::string::npos ||
                           op.find("flash_attention") != std::string::npos ||
                           op.find("efficient_attention") != std::string::npos;
    const std::vector<std::vector<double>>& in = shapes.dims;
    double es = 4;
    std::vector<double> sizes;  // per input; 0 where the type is not recorded
    for (const std::string& t : shapes.types) sizes.push_back(t.empty() ? 0 : elementBytes(t));
    if (!sizes.empty() && sizes[0] > 0) es = sizes[0];
    auto shapeOf = [&](size_t i) -> const std::vector<double>& {
        static const std::vector<double> none;
        return i < in.size() ? in[i] : none;
    };
    // A batched GEMM: a [.., M, K] x b [.., K, N], its batch the product of a's leading sizes.
    auto gemm = [&](const std::vector<double>& a, const std::vector<double>& b, bool bTransposed,
                    double extraBytes) -> std::optional<OperatorWork> {
        if (a.size() < 2 || b.size() < 2) return std::nullopt;
        const double m = a[a.size() - 2], k = a.back();
        const double n = bTransposed ? b[b.size() - 2] : b.back();
        const double batch = product(a, 0, a.size() - 2);
        if (!(m > 0 && k > 0 && n > 0 && batch > 0)) return std::nullopt;
        OperatorWork w;
        w.flops = 2 * batch * m * k * n;
        w.bytes = es * (batch * m * k + product(b) + batch * m * n) + es * extraBytes;
        return w;
    };
    if (plain) return gemm(shapeOf(0), shapeOf(1), false, 0);
    if (biased) return gemm(shapeOf(1), shapeOf(2), false, product(shapeOf(0)));
    if (op == "aten::linear") {  // weight [N, K]; input [.., K] seen as [batch x M, K]
        std::vector<double> a = shapeOf(0);
        if (a.size() == 1) a.insert(a.begin(), 1);
        if (a.size() > 2) a = {product(a, 0, a.size() - 1), a.back()};
        return gemm(a, shapeOf(1), true, product(shapeOf(2)));
    }
    // Scaled-dot-product attention: q [B, H, L, D], k [B, H, S, D]; forward two GEMMs (4 BHLSD),
    // backward with FlashAttention's recomputation five (10 BHLSD, the gradient of the output first).
    const bool backward = op.find("backward") != std::string::npos;
    if (attention) {
        const size_t q = backward ? 1 : 0;
        const std::vector<double>&qs = shapeOf(q), &ks = shapeOf(q + 1);
        if (qs.size() != 4 || ks.size() != 4) return std::nullopt;
        const double bh = qs[0] * qs[1], l = qs[2], d = qs[3], s = ks[2];
        if (!(bh > 0 && l > 0 && s > 0 && d > 0)) return std::nullopt;
        OperatorWork w;
        w.flops = (backward ? 10 : 4) * bh * l * s * d;
        w.bytes = es * bh * d * (backward ? 4 * l + 4 * s : 2 * l + 2 * s);
        return w;
    }
    if (plain || biased || op == "aten::linear") return std::nullopt;
    // Any other operator is taken as bandwidth-bound: it reads its tensor inputs and writes an
    // output as large as the largest (a fill writes, a copy reads one and writes the other).
    OperatorWork w;
    double largest = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i].empty()) continue;  // scalars and absent arguments
        const double bytes = product(in[i]) * (i < sizes.size() && sizes[i] > 0 ? sizes[i] : es);
        w.bytes += bytes;
        largest = std::max(largest, bytes);
    }
    const bool writesOnly =
        op == "aten::fill_" || op == "aten::zero_" || op == "aten::zeros" || op == "aten::empty" || op == "aten::ones";
    if (writesOnly)
        w.bytes = largest;
    else if (op != "aten::copy_")  // a copy's output is its destination, already counted
        w.bytes += largest;
    if (!(w.bytes > 0)) return std::nullopt;
    return w;
}

}  // namespace ts::predictors
