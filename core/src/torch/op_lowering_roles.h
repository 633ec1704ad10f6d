#pragma once
// Internal: what the consumers of a value say about the contents it needs (no LibTorch here).
// The executor gives inputs, parameters, buffers and constants contents that every consumer
// accepts: ids below the table they index, PyTorch's default initialisation for the layer slot a
// parameter fills, ones where a consumer divides.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts::torchexec {

// The exclusive upper bound every consumer accepts for integer ids (a Gather's table size, a
// loss's class count), followed through reshapes, casts and concatenations; none when unbounded.
std::optional<int64_t> indexBound(const Graph& g, int value, int64_t n, int64_t s);
// The sequence length when the value holds the lengths of a recurrent layer or ReverseSequence.
std::optional<int64_t> sequenceLength(const Graph& g, int value, int64_t n, int64_t s);
// Whether some consumer divides by the value, takes its logarithm or multiplies by it.
bool needsNonZero(const Graph& g, int value);
bool nameSuggestsMask(const std::string& name);

enum class Fill { Uniform, Normal, Ones, Zeros, Value };
struct Rule {
    Fill fill;
    double a = 0;  // Uniform: bound (+-a); Normal: standard deviation; Value: the value
};
// PyTorch's fan-in of a weight: size(1) times the receptive field.
int64_t defaultFanIn(const std::vector<int64_t>& shape);
Rule uniformFanIn(int64_t fanIn);  // +-1/sqrt(fan_in)
// PyTorch's default initialisation for the layer slot a parameter (or buffer) of shape `shape`
// fills: the first consumer that decides, followed through views and casts.
std::optional<Rule> roleOf(const Graph& g, int value, const std::vector<int64_t>& shape, int64_t n, int64_t s);

}  // namespace ts::torchexec
