#pragma once
// What the streaming pass over a Kineto trace keeps (kineto_reader.cpp) before the join
// (kineto_trace.cpp): one compact record per event of a kept category, names interned.
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trainscope/core/kineto_trace.h"

namespace ts::kineto {

enum class HostKind : uint8_t { Operator, Annotation, Step, ModuleScope, Runtime };

struct HostEvent {
    HostKind kind = HostKind::Operator;
    int32_t thread = 0;
    int32_t name = -1;
    int32_t inputShapes = -1;
    int32_t inputTypes = -1;
    int32_t moduleHierarchy = -1;  // older traces' "Module Hierarchy" argument
    int64_t correlation = -1;      // runtime calls
    int64_t stepNumber = 0;        // ProfilerStep#N
    double ts = 0;
    double dur = 0;
};

// Lookup by string_view without building a std::string for every name seen.
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct RawTrace {
    KinetoTrace trace;  // strings, threads, kernels (unjoined), collectives, devices
    std::vector<HostEvent> host;
    bool sawTraceEvents = false;
    bool hipRuntime = false;
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> stringIndex;
    std::unordered_map<std::string, int32_t> threadIndex;

    int32_t intern(std::string_view s);
    int32_t threadOf(const std::string& pid, const std::string& tid);
};

// Parses the (already inflated) JSON text from `in`; throws ModelError(source, ...).
RawTrace parseTraceStream(std::istream& in, const std::string& source);

// Joins launches, kernels, operators, scopes and steps into the final trace.
KinetoTrace joinTrace(RawTrace raw);

}  // namespace ts::kineto
