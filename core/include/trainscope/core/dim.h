#pragma once
// A tensor dimension that may depend on the symbolic batch size N and sequence length S.
//
// Represented as a small polynomial with integer coefficients over N and S
// (for example 64, N, N*S, 2*N+1) so that reshapes that merge batch and
// sequence (N*S x 768), concatenations and pads keep their meaning at every
// batch size. Spatial sizes stay concrete.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ts {

class Dim {
public:
    struct Term {
        int64_t coef = 0;
        uint8_t batchExp = 0;  // power of N
        uint8_t seqExp = 0;    // power of S
        bool operator==(const Term&) const = default;
    };

    Dim() = default;                 // zero
    Dim(int64_t value);              // NOLINT(google-explicit-constructor): constants read naturally
    static Dim batch();              // N
    static Dim seq();                // S

    bool isConstant() const;
    // The constant value; throws std::logic_error if the dimension is symbolic.
    int64_t constant() const;
    bool dependsOnBatch() const;
    bool dependsOnSeq() const;

    // Value at batch size n and sequence length s; saturates instead of overflowing.
    int64_t eval(int64_t n, int64_t s) const;

    Dim operator+(const Dim& o) const;
    Dim operator-(const Dim& o) const;
    Dim operator*(const Dim& o) const;
    // Exact division (this / o) when every term divides; nullopt otherwise.
    std::optional<Dim> divExact(const Dim& o) const;
    // Floor division by a positive constant; nullopt when symbolic and not exact.
    std::optional<Dim> floorDiv(int64_t d) const;

    bool operator==(const Dim& o) const { return terms_ == o.terms_; }
    bool operator!=(const Dim& o) const { return !(*this == o); }

    // "64", "N", "N*S", "2*N+1", "N*S^2".
    std::string str() const;
    // Parses what str() writes, plus bare names "N", "batch", "S", "seq". Throws std::invalid_argument.
    static Dim parse(const std::string& text);

    const std::vector<Term>& terms() const { return terms_; }

private:
    void normalize();
    std::vector<Term> terms_;  // sorted by (batchExp, seqExp), no zero coefficients
};

using Shape = std::vector<Dim>;

std::string shapeStr(const Shape& s);  // "[N, 3, 224, 224]"
// Product of all dims; empty shape gives 1.
Dim numel(const Shape& s);
std::vector<int64_t> evalShape(const Shape& s, int64_t n, int64_t seq);

}  // namespace ts
