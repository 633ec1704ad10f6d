#include "iteration/law_kernels.h"

#include <cmath>

namespace ts::predictors {

void FloatRows::add(const TimeRow& r) {
    fp.push_back(float(std::pow(r.floorMs, r.softness)));
    c0.push_back(float(r.computeMs.c0)), c1.push_back(float(r.computeMs.c1)), c2.push_back(float(r.computeMs.c2));
    m0.push_back(float(r.memoryMs.c0)), m1.push_back(float(r.memoryMs.c1)), m2.push_back(float(r.memoryMs.c2));
    fixed.push_back(float(r.fixedMs));
    k0.push_back(float(r.castMs.c0)), k1.push_back(float(r.castMs.c1)), k2.push_back(float(r.castMs.c2));
}

namespace {

template <int P>
[[gnu::always_inline]] inline float softOf(float fp, float k) {
    if constexpr (P == 4) {
        const float kk = k * k;
        return std::sqrt(std::sqrt(fp + kk * kk));
    } else {
        return std::sqrt(fp + k * k);
    }
}

// Raw pointers, held in locals by the loops so that the compiler sees they do not move.
struct Rows {
    const float *fp, *c0, *c1, *c2, *m0, *m1, *m2, *fixed, *k0, *k1, *k2;
    explicit Rows(const FloatRows& x)
        : fp(x.fp.data()),
          c0(x.c0.data()),
          c1(x.c1.data()),
          c2(x.c2.data()),
          m0(x.m0.data()),
          m1(x.m1.data()),
          m2(x.m2.data()),
          fixed(x.fixed.data()),
          k0(x.k0.data()),
          k1(x.k1.data()),
          k2(x.k2.data()) {}
};

// The row's kernel time without floor and casts, capped so that k^4 stays finite in floats.
[[gnu::always_inline]] inline float kernelOf(const Rows& x, size_t i, float n, float n2) {
    const float compute = x.c0[i] + n * x.c1[i] + n2 * x.c2[i], memory = x.m0[i] + n * x.m1[i] + n2 * x.m2[i];
    const float k = (compute > memory ? compute : memory) + x.fixed[i];
    return k < 1e9f ? k : 1e9f;
}
[[gnu::always_inline]] inline float castOf(const Rows& x, size_t i, float n, float n2) {
    return x.k0[i] + n * x.k1[i] + n2 * x.k2[i];
}

template <int P>
[[gnu::always_inline]] inline void inverseRowTimesOf(const FloatRows& rows, float n, float* __restrict t) {
    const Rows x(rows);
    const float n2 = n * n;
    const size_t count = rows.size();
    for (size_t i = 0; i < count; ++i) t[i] = 1.0f / (softOf<P>(x.fp[i], kernelOf(x, i, n, n2)) + castOf(x, i, n, n2));
}

template <int P>
[[gnu::always_inline]] inline void movedTimesOf(const FloatRows& rows, const uint32_t* __restrict index,
                                                const OriginFigures& origin, const float* __restrict waveLimit,
                                                float clockRatio, bool cross, size_t count, float n,
                                                float* __restrict t) {
    const float* __restrict tY = origin.t, * __restrict r = origin.r, * __restrict grid = origin.grid;
    if (!cross) {
        for (size_t i = 0; i < count; ++i) t[i] = tY[index[i]];
        return;
    }
    const Rows x(rows);
    const float n2 = n * n;
    for (size_t i = 0; i < count; ++i) {
        const uint32_t k = index[i];
        const float origin = tY[k], g = grid[k], limit = waveLimit[i];  // loaded unconditionally: no branch
        const float moved = softOf<P>(x.fp[i], kernelOf(x, i, n, n2) * r[k]) + castOf(x, i, n, n2);
        const bool small = (limit >= 0) & (g <= limit);
        t[i] = small ? origin * clockRatio : moved;
    }
}

template <int P>
[[gnu::always_inline]] inline void precisionMovedOf(const FloatRows& rows, const float* __restrict common,
                                                    const float* __restrict inverseAtCommon, size_t count, float n,
                                                    float* __restrict t) {
    const Rows p(rows);
    const float n2 = n * n;
    for (size_t i = 0; i < count; ++i)
        t[i] = common[i] * (softOf<P>(p.fp[i], kernelOf(p, i, n, n2)) + castOf(p, i, n, n2)) * inverseAtCommon[i];
}

}  // namespace

// One clone per instruction set, chosen when the library loads: AVX2 does eight passes at once.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)  // ifunc
#define TRAINSCOPE_LAW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TRAINSCOPE_LAW_CLONES
#endif

TRAINSCOPE_LAW_CLONES void inverseRowTimes(const FloatRows& x, int softness, float n, float* t) {
    softness == 4 ? inverseRowTimesOf<4>(x, n, t) : inverseRowTimesOf<2>(x, n, t);
}

TRAINSCOPE_LAW_CLONES void movedTimes(const FloatRows& x, int softness, const uint32_t* index,
                                      const OriginFigures& origin, const float* waveLimit, float clockRatio, bool cross,
                                      size_t count, float n, float* t) {
    softness == 4 ? movedTimesOf<4>(x, index, origin, waveLimit, clockRatio, cross, count, n, t)
                  : movedTimesOf<2>(x, index, origin, waveLimit, clockRatio, cross, count, n, t);
}

TRAINSCOPE_LAW_CLONES void gather(const float* __restrict values, const uint32_t* __restrict index, size_t count,
                                  float* __restrict out) {
    for (size_t i = 0; i < count; ++i) out[i] = values[index[i]];
}

TRAINSCOPE_LAW_CLONES void precisionMovedTimes(const FloatRows& p, int softness, const float* common,
                                               const float* inverseAtCommon, size_t count, float n, float* t) {
    softness == 4 ? precisionMovedOf<4>(p, common, inverseAtCommon, count, n, t)
                  : precisionMovedOf<2>(p, common, inverseAtCommon, count, n, t);
}

TRAINSCOPE_LAW_CLONES void quadrature(const float* __restrict a, const float* __restrict b, float c, size_t count,
                                      float* __restrict f) {
    for (size_t i = 0; i < count; ++i) f[i] = std::sqrt(a[i] + b[i] + c);
}

TRAINSCOPE_LAW_CLONES void sumsWithError(const float* __restrict t, const float* __restrict f, const RowUseRun* runs,
                                         size_t runCount, double* __restrict out) {
    for (size_t r = 0; r < runCount; ++r) {
        const size_t begin = runs[r].begin, end = runs[r].end;
        float s = 0, w = 0;
        if (end - begin < 64) {  // short (a gradient bucket's few layers): vector set-up costs more
            for (size_t i = begin; i < end; ++i) {
                s += t[i];
                w += t[i] * f[i];
            }
        } else {  // reassociated (omp simd): the order of a sum of layer times does not matter
#pragma omp simd reduction(+ : s, w)
            for (size_t i = begin; i < end; ++i) {
                s += t[i];
                w += t[i] * f[i];
            }
        }
        out[2 * r] = s, out[2 * r + 1] = w;
    }
}

}  // namespace ts::predictors
