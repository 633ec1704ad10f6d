#pragma once
#include <stdexcept>
#include <string>

namespace ts {

// A problem with a user's input. what() is one line: "<source>: <problem>".
// Every importer throws only this; the CLI prints it and exits with status 2.
class ModelError : public std::runtime_error {
public:
    ModelError(std::string source, std::string problem)
        : std::runtime_error(source.empty() ? problem : source + ": " + problem),
          source_(std::move(source)), problem_(std::move(problem)) {}
    const std::string& source() const { return source_; }
    const std::string& problem() const { return problem_; }

private:
    std::string source_;
    std::string problem_;
};

// Thrown by shape inference and the builder for one operation; importers catch it
// and rethrow a ModelError naming the file and the node.
class ShapeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The GPU (or its driver, or the CUDA support of this build) cannot do what was asked:
// no device, out of memory, a CUDA call failed. what() is one sentence for the user.
class DeviceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Hard limits that protect against hostile inputs (absurd shapes, deep nesting).
namespace limits {
inline constexpr int64_t kMaxDimValue = int64_t(1) << 40;         // a single dimension
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 42;   // ~4.4e12 elements
inline constexpr int kMaxRank = 16;
inline constexpr int kMaxOperations = 2'000'000;
inline constexpr int kMaxNesting = 64;                             // JSON / subgraph depth
inline constexpr int64_t kMaxKnownValueElements = 4096;            // int data tracked for shape math
}  // namespace limits

}  // namespace ts
