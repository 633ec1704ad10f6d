// Turning copied CUPTI kernel records into KernelActivity: readable names and the pushed id each
// kernel belongs to. No CUPTI here, so this is built and tested everywhere.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>

#include "profiling/kernel_tracer_internal.h"

namespace ts::profiling::detail {
namespace {

// Only Itanium-mangled names are demangled: __cxa_demangle also reads type encodings, so a plain
// kernel name such as "f" would come back as "float".
std::string demangled(const std::string& name) {
    if (!name.starts_with("_Z")) return name;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                     &std::free);
    if (status != 0 || !text) return name;
    std::string result(text.get());
    // Kernels return void; the demangled return type says nothing.
    if (result.starts_with("void ")) result.erase(0, 5);
    return result;
}

// "f<...>(int, float)" -> "f<...>": the parameter list repeats the template arguments.
std::string withoutParameterList(const std::string& name) {
    if (name.empty() || name.back() != ')') return name;
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
        if (name[i] == ')') {
            ++depth;
        } else if (name[i] == '(' && --depth == 0) {
            return i > 0 ? name.substr(0, i) : name;
        }
    }
    return name;
}

std::string shortened(const std::string& name) {
    if (name.size() <= kMaxKernelNameLength) return name;
    std::string result = withoutParameterList(name);
    if (result.size() > kMaxKernelNameLength) {
        result.resize(kMaxKernelNameLength - 3);
        result += "...";
    }
    return result;
}

}  // namespace

std::string readableKernelName(const std::string& name) {
    return shortened(demangled(name));
}

uint64_t attributedId(uint32_t correlationId, const Correlations& correlations) {
    if (auto pushed = correlations.externalIds.find(correlationId);
        pushed != correlations.externalIds.end() && pushed->second != 0)
        return pushed->second;
    auto call = correlations.apiStartNs.find(correlationId);
    if (call == correlations.apiStartNs.end()) return 0;
    const uint64_t when = call->second;
    // Ranges come from one thread's push/pop, so they nest: the innermost one holding `when` is the
    // one that began last.
    const PushedRange* innermost = nullptr;
    for (const PushedRange& range : correlations.ranges) {
        if (range.beginNs <= when && when <= range.endNs && (!innermost || range.beginNs >= innermost->beginNs))
            innermost = &range;
    }
    return innermost ? innermost->id : 0;
}

std::vector<KernelActivity> attributeKernels(const std::vector<LaunchedKernel>& kernels,
                                             const Correlations& correlations) {
    // Start time first; launch order among equal (or unknown, 0) start times.
    std::vector<std::size_t> order(kernels.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const LaunchedKernel& x = kernels[a];
        const LaunchedKernel& y = kernels[b];
        return x.startNs != y.startNs ? x.startNs < y.startNs : x.correlationId < y.correlationId;
    });

    std::vector<KernelActivity> activities;
    activities.reserve(kernels.size());
    for (std::size_t index : order) {
        const LaunchedKernel& launched = kernels[index];
        KernelActivity activity;
        const std::string fullName = demangled(launched.name);
        // Decided on the full name: a CUTLASS mainloop that marks tensor-core use can sit past the cut.
        activity.kernel.tensorCore = isTensorCoreKernel(fullName);
        activity.kernel.name = shortened(fullName);
        for (int axis = 0; axis < 3; ++axis) {
            activity.kernel.grid[axis] = launched.grid[axis];
            activity.kernel.block[axis] = launched.block[axis];
        }
        activity.kernel.registersPerThread = launched.registersPerThread;
        activity.kernel.staticSharedBytes = launched.staticSharedBytes;
        activity.kernel.dynamicSharedBytes = launched.dynamicSharedBytes;
        activity.kernel.durationUs =
            launched.endNs > launched.startNs ? static_cast<double>(launched.endNs - launched.startNs) / 1e3 : 0.0;
        activity.kernel.launches = 1;
        activity.externalId = attributedId(launched.correlationId, correlations);
        activity.startNs = launched.startNs;
        activity.endNs = launched.endNs;
        activity.streamId = launched.streamId;
        activities.push_back(std::move(activity));
    }
    return activities;
}

}  // namespace ts::profiling::detail
