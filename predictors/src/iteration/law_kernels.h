#pragma once
// The profile path's inner loops over measured layer passes, in single precision and structure of
// arrays so that they vectorise (law_kernels.cpp is built for that; AVX2 clones where the CPU has
// it). Softness 4 or 2 only: the scaling table uses nothing else, and the callers send other
// rows one by one.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "trainscope/predictors/iteration/iteration_model.h"
#include "trainscope/predictors/iteration/operation_times.h"

namespace ts::predictors {

// Rows of one softness, t(n) = soft(floor, max(compute, memory) + fixed) + cast, as floats.
struct FloatRows {
    std::vector<float> fp, c0, c1, c2, m0, m1, m2, fixed, k0, k1, k2;  // fp: floor^softness
    void add(const TimeRow& r);
    size_t size() const { return fp.size(); }
};

// The origin's figures at one batch size, per 2 op + pass, that the target's times start from.
struct OriginFigures {
    const float* t;     // its time
    const float* r;     // its efficiency against the model (cross path)
    const float* grid;  // its dominant kernel's grid
};

// The target's time at the precision both GPUs model, for the passes index[0..count) (row i of
// x is pass index[i]): on another GPU (`cross`) the origin's time moved by the cross path,
// soft(floor, kernel x r) + cast, or scaled by `clockRatio` where the grid is at most
// waveLimit[i] (smaller than a wave on both GPUs); on the measured GPU the origin's time itself.
void movedTimes(const FloatRows& x, int softness, const uint32_t* index, const OriginFigures& origin,
                const float* waveLimit, float clockRatio, bool cross, size_t count, float n, float* t);

// out[i] = values[index[i]].
void gather(const float* values, const uint32_t* index, size_t count, float* out);

// t[i] = common[i] x (row p's time) x inverseAtCommon[i]: the move to another precision.
void precisionMovedTimes(const FloatRows& p, int softness, const float* common, const float* inverseAtCommon,
                         size_t count, float n, float* t);

// t[i] = 1 / (the row's time at batch n).
void inverseRowTimes(const FloatRows& x, int softness, float n, float* t);

// f[i] = sqrt(a[i] + b[i] + c): relative errors combined in quadrature.
void quadrature(const float* a, const float* b, float c, size_t count, float* f);

// Per run r: out[2r] = sum of t[i], out[2r + 1] = sum of t[i] x f[i] over the run's i.
void sumsWithError(const float* t, const float* f, const RowUseRun* runs, size_t runCount, double* out);

}  // namespace ts::predictors
