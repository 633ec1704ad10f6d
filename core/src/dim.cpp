#include "trainscope/core/dim.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "trainscope/core/errors.h"

namespace ts {
namespace {

int64_t checkedMul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw ShapeError("dimension arithmetic overflows 64 bits");
    return r;
}
int64_t checkedAdd(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw ShapeError("dimension arithmetic overflows 64 bits");
    return r;
}
int64_t saturatingMul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        return ((a < 0) != (b < 0)) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    return r;
}
int64_t saturatingAdd(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        return a < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    return r;
}
int64_t ipow(int64_t base, int e) {
    int64_t r = 1;
    for (int i = 0; i < e; ++i) r = saturatingMul(r, base);
    return r;
}

}  // namespace

Dim::Dim(int64_t value) {
    if (value != 0) terms_.push_back({value, 0, 0});
}
Dim Dim::batch() {
    Dim d;
    d.terms_.push_back({1, 1, 0});
    return d;
}
Dim Dim::seq() {
    Dim d;
    d.terms_.push_back({1, 0, 1});
    return d;
}

bool Dim::isConstant() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].batchExp == 0 && terms_[0].seqExp == 0); }

int64_t Dim::constant() const {
    if (!isConstant()) throw std::logic_error("symbolic dimension " + str() + " used as a constant");
    return terms_.empty() ? 0 : terms_[0].coef;
}

bool Dim::dependsOnBatch() const {
    return std::any_of(terms_.begin(), terms_.end(), [](const Term& t) { return t.batchExp > 0; });
}
bool Dim::dependsOnSeq() const {
    return std::any_of(terms_.begin(), terms_.end(), [](const Term& t) { return t.seqExp > 0; });
}

int64_t Dim::eval(int64_t n, int64_t s) const {
    int64_t total = 0;
    for (const Term& t : terms_) total = saturatingAdd(total, saturatingMul(t.coef, saturatingMul(ipow(n, t.batchExp), ipow(s, t.seqExp))));
    return total;
}

void Dim::normalize() {
    std::sort(terms_.begin(), terms_.end(), [](const Term& a, const Term& b) {
        return std::tie(a.batchExp, a.seqExp) < std::tie(b.batchExp, b.seqExp);
    });
    std::vector<Term> merged;
    for (const Term& t : terms_) {
        if (!merged.empty() && merged.back().batchExp == t.batchExp && merged.back().seqExp == t.seqExp)
            merged.back().coef = checkedAdd(merged.back().coef, t.coef);
        else
            merged.push_back(t);
    }
    merged.erase(std::remove_if(merged.begin(), merged.end(), [](const Term& t) { return t.coef == 0; }), merged.end());
    terms_ = std::move(merged);
}

Dim Dim::operator+(const Dim& o) const {
    Dim r = *this;
    r.terms_.insert(r.terms_.end(), o.terms_.begin(), o.terms_.end());
    r.normalize();
    return r;
}
Dim Dim::operator-(const Dim& o) const {
    Dim r = *this;
    for (Term t : o.terms_) {
        t.coef = checkedMul(t.coef, -1);
        r.terms_.push_back(t);
    }
    r.normalize();
    return r;
}
Dim Dim::operator*(const Dim& o) const {
    Dim r;
    for (const Term& a : terms_)
        for (const Term& b : o.terms_) {
            int be = a.batchExp + b.batchExp, se = a.seqExp + b.seqExp;
            if (be > 8 || se > 8) throw ShapeError("dimension expression too complex");
            r.terms_.push_back({checkedMul(a.coef, b.coef), uint8_t(be), uint8_t(se)});
        }
    r.normalize();
    return r;
}

std::optional<Dim> Dim::divExact(const Dim& o) const {
    if (o.terms_.empty()) return std::nullopt;
    if (terms_.empty()) return Dim(0);
    if (o.terms_.size() == 1) {
        const Term& d = o.terms_[0];
        Dim r;
        for (const Term& t : terms_) {
            if (t.batchExp < d.batchExp || t.seqExp < d.seqExp || t.coef % d.coef != 0) return std::nullopt;
            r.terms_.push_back({t.coef / d.coef, uint8_t(t.batchExp - d.batchExp), uint8_t(t.seqExp - d.seqExp)});
        }
        r.normalize();
        return r;
    }
    // Polynomial divisor: only an exact multiple by a constant or a monomial of the same shape.
    if (terms_.size() == o.terms_.size()) {
        const Term& a0 = terms_[0];
        const Term& b0 = o.terms_[0];
        if (a0.batchExp < b0.batchExp || a0.seqExp < b0.seqExp || a0.coef % b0.coef != 0) return std::nullopt;
        Dim q;
        q.terms_.push_back({a0.coef / b0.coef, uint8_t(a0.batchExp - b0.batchExp), uint8_t(a0.seqExp - b0.seqExp)});
        if (o * q == *this) return q;
    }
    return std::nullopt;
}

std::optional<Dim> Dim::floorDiv(int64_t d) const {
    if (d <= 0) return std::nullopt;
    if (isConstant()) {
        int64_t v = constant();
        int64_t q = v / d;
        if ((v % d != 0) && ((v < 0) != (d < 0))) --q;
        return Dim(q);
    }
    return divExact(Dim(d));
}

std::string Dim::str() const {
    if (terms_.empty()) return "0";
    std::ostringstream os;
    // Highest-order term first: "2*N+1" rather than "1+2*N".
    for (auto it = terms_.rbegin(); it != terms_.rend(); ++it) {
        const Term& t = *it;
        int64_t c = t.coef;
        bool first = it == terms_.rbegin();
        if (!first) os << (c < 0 ? "-" : "+");
        else if (c < 0) os << "-";
        // The magnitude in unsigned arithmetic: a file's INT64_MIN has no int64_t negation.
        const uint64_t ac = c < 0 ? uint64_t(0) - uint64_t(c) : uint64_t(c);
        bool symbolic = t.batchExp || t.seqExp;
        bool wrote = false;
        if (!symbolic || ac != 1) {
            os << ac;
            wrote = true;
        }
        auto sym = [&](const char* name, int e) {
            if (!e) return;
            if (wrote) os << "*";
            os << name;
            if (e > 1) os << "^" << e;
            wrote = true;
        };
        sym("N", t.batchExp);
        sym("S", t.seqExp);
    }
    return os.str();
}

Dim Dim::parse(const std::string& text) {
    // Grammar: term (('+'|'-') term)*, term = [int] ('*' factor)* | factor ('*' factor)*,
    // factor = int | N | S | batch | seq, with optional ^int on symbols.
    std::string s;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c))) s += c;
    if (s.empty()) throw std::invalid_argument("empty dimension");
    Dim result;
    size_t i = 0;
    while (i < s.size()) {
        int64_t sign = 1;
        if (s[i] == '+' || s[i] == '-') {
            sign = s[i] == '-' ? -1 : 1;
            ++i;
        } else if (i != 0) {
            throw std::invalid_argument("bad dimension '" + text + "'");
        }
        Dim term(sign);
        bool needFactor = true;
        while (i < s.size() && needFactor) {
            Dim factor;
            if (std::isdigit(static_cast<unsigned char>(s[i]))) {
                size_t j = i;
                while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
                if (j - i > 15) throw std::invalid_argument("dimension '" + text + "' is too large");
                factor = Dim(std::stoll(s.substr(i, j - i)));
                i = j;
            } else {
                size_t j = i;
                while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
                std::string name = s.substr(i, j - i);
                i = j;
                if (name == "N" || name == "batch" || name == "B") factor = batch();
                else if (name == "S" || name == "seq") factor = seq();
                else throw std::invalid_argument("unknown symbol '" + name + "' in dimension '" + text + "'");
                if (i < s.size() && s[i] == '^') {
                    ++i;
                    size_t k = i;
                    while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
                    if (k == i || k - i > 1) throw std::invalid_argument("bad exponent in dimension '" + text + "'");
                    int e = std::stoi(s.substr(i, k - i));
                    i = k;
                    Dim p(1);
                    for (int n = 0; n < e; ++n) p = p * factor;
                    factor = p;
                }
            }
            term = term * factor;
            if (i < s.size() && s[i] == '*') ++i;
            else needFactor = false;
        }
        // A sign or '*' with nothing after it ("N+", "2*").
        if (needFactor) throw std::invalid_argument("dimension '" + text + "' ends too early");
        result = result + term;
    }
    return result;
}

std::string shapeStr(const Shape& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) {
        if (i) r += ", ";
        r += s[i].str();
    }
    return r + "]";
}

Dim numel(const Shape& s) {
    Dim n(1);
    for (const Dim& d : s) n = n * d;
    return n;
}

std::vector<int64_t> evalShape(const Shape& s, int64_t n, int64_t seq) {
    std::vector<int64_t> r;
    r.reserve(s.size());
    for (const Dim& d : s) r.push_back(d.eval(n, seq));
    return r;
}

}  // namespace ts
