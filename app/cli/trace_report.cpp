#include "trace_report.h"

#include <cstdio>
#include <iostream>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"

namespace ts::cli {
namespace {

std::string fixed(double v, int decimals = 2) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string percent(double part, double whole) {
    return whole > 0 ? fixed(100 * part / whole, 1) + "%" : "-";
}

// Kernel names run to hundreds of characters of template arguments: the head is what names them.
std::string shortened(const std::string& s, size_t n = 90) {
    return s.size() > n ? s.substr(0, n - 3) + "..." : s;
}

std::string dims(const int v[3]) {
    if (v[0] == 0) return "-";  // copies, sets, and kernels whose configuration the trace lacks
    return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

double total(const TraceSummary& s, double TraceStepSummary::*field) {
    double sum = 0;
    for (const TraceStepSummary& st : s.steps) sum += st.*field;
    return sum;
}

}  // namespace

nlohmann::json traceSummaryJson(const TraceSummary& s) {
    nlohmann::json j;
    j["trace"] = {{"source", s.source},
                  {"events", s.events},
                  {"operators", s.operators},
                  {"gpu_activities", s.gpuActivities},
                  {"record_shapes", s.recordShapes},
                  {"with_stack", s.withStack},
                  {"rocm", s.rocm}};
    j["gpu"] = {{"name", s.gpuName},
                {"database_id", s.gpuId.empty() ? nlohmann::json() : nlohmann::json(s.gpuId)},
                {"match", s.gpuMatch}};
    j["median_step_ms"] = s.medianStepMs;
    j["steps"] = nlohmann::json::array();
    for (const TraceStepSummary& st : s.steps)
        j["steps"].push_back({{"number", st.number},
                              {"cpu_ms", st.cpuMs},
                              {"gpu_window_ms", st.gpuWindowMs},
                              {"gpu_busy_ms", st.busyMs},
                              {"gpu_idle_ms", st.idleMs},
                              {"gpu_activity_ms", st.kernelMs},
                              {"communication_ms", st.communicationMs},
                              {"exposed_communication_ms", st.exposedCommunicationMs},
                              {"host_bound_ms", st.hostBoundMs},
                              {"gpu_activities", st.kernels}});
    j["operators"] = nlohmann::json::array();
    for (const TraceOperatorTotal& o : s.topOperators)
        j["operators"].push_back(
            {{"name", o.name}, {"calls", o.calls}, {"gpu_ms", o.gpuMs}, {"cpu_ms", o.cpuMs}, {"kernels", o.kernels}});
    j["kernels"] = nlohmann::json::array();
    for (const TraceKernelTotal& k : s.topKernels)
        j["kernels"].push_back(
            {{"name", k.name},
             {"class", kernelClassName(k.kind)},
             {"calls", k.calls},
             {"gpu_ms", k.gpuMs},
             {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
             {"block", {k.block[0], k.block[1], k.block[2]}},
             {"registers_per_thread", k.registersPerThread},
             {"shared_memory_bytes", k.sharedMemoryBytes},
             {"occupancy_percent", k.occupancyPercent < 0 ? nlohmann::json() : nlohmann::json(k.occupancyPercent)}});
    j["classes"] = nlohmann::json::array();
    for (const TraceClassTotal& c : s.classes)
        j["classes"].push_back({{"class", kernelClassName(c.kind)}, {"calls", c.calls}, {"gpu_ms", c.gpuMs}});
    j["host_bound_stretches"] = nlohmann::json::array();
    for (const HostBoundStretch& h : s.hostBound)
        j["host_bound_stretches"].push_back({{"step", h.step},
                                             {"start_ms", h.startMs},
                                             {"duration_ms", h.durationMs},
                                             {"next_operator", h.nextOperator}});
    j["notes"] = s.notes;
    return j;
}

void printTraceSummary(std::ostream& os, const TraceSummary& s) {
    os << "PyTorch profiler trace " << s.source << "\n";
    os << "  " << s.events << " events, " << s.operators << " CPU operators, " << s.gpuActivities
       << " GPU activities analysed; shapes " << (s.recordShapes ? "recorded" : "not recorded") << ", Python stack "
       << (s.withStack ? "recorded" : "not recorded") << "\n";
    os << "  GPU: " << (s.gpuName.empty() ? "none" : s.gpuName);
    if (!s.gpuId.empty())
        os << " -> database entry " << s.gpuId << " (" << s.gpuMatch << ")";
    else
        os << " (" << s.gpuMatch << ")";
    os << "\n";
    for (const std::string& n : s.notes) os << "  note: " << n << "\n";

    if (!s.steps.empty()) {
        os << "\nSteps (ms; busy = union of the GPU's activities; host-bound = idle until the host launched)\n";
        char line[256];
        std::snprintf(line, sizeof line, "  %-8s %9s %9s %9s %9s %7s %9s %9s %9s\n", "step", "cpu", "gpu span", "busy",
                      "idle", "idle%", "comm", "exposed", "host-bnd");
        os << line;
        for (const TraceStepSummary& st : s.steps) {
            std::snprintf(line, sizeof line, "  %-8s %9.2f %9.2f %9.2f %9.2f %7s %9.2f %9.2f %9.2f\n",
                          st.number < 0 ? "all" : std::to_string(st.number).c_str(), st.cpuMs, st.gpuWindowMs,
                          st.busyMs, st.idleMs, percent(st.idleMs, st.gpuWindowMs).c_str(), st.communicationMs,
                          st.exposedCommunicationMs, st.hostBoundMs);
            os << line;
        }
        os << "  median step " << fixed(s.medianStepMs) << " ms";
        const double comm = total(s, &TraceStepSummary::communicationMs);
        if (comm > 0)
            os << "; communication " << fixed(comm) << " ms, of which exposed "
               << fixed(total(s, &TraceStepSummary::exposedCommunicationMs)) << " ms ("
               << percent(total(s, &TraceStepSummary::exposedCommunicationMs), comm) << ")";
        os << "\n";
    }
    const double gpuMs = [&] {
        double sum = 0;
        for (const TraceClassTotal& c : s.classes) sum += c.gpuMs;
        return sum;
    }();
    if (!s.classes.empty()) {
        os << "\nKernel classes (GPU ms over the steps)\n";
        for (const TraceClassTotal& c : s.classes) {
            char line[160];
            std::snprintf(line, sizeof line, "  %-14s %10.2f %7s %8lld calls\n", kernelClassName(c.kind), c.gpuMs,
                          percent(c.gpuMs, gpuMs).c_str(), static_cast<long long>(c.calls));
            os << line;
        }
    }
    if (!s.topOperators.empty()) {
        os << "\nTop operators (by GPU time of the kernels they launched, then host time)\n";
        for (const TraceOperatorTotal& o : s.topOperators) {
            char line[256];
            std::snprintf(line, sizeof line, "  %10.2f ms GPU %10.2f ms CPU %7lld calls %7lld kernels  %s\n", o.gpuMs,
                          o.cpuMs, static_cast<long long>(o.calls), static_cast<long long>(o.kernels),
                          shortened(o.name, 70).c_str());
            os << line;
        }
    }
    if (!s.topKernels.empty()) {
        os << "\nTop kernels (by GPU time; launch configuration of the first call)\n";
        for (const TraceKernelTotal& k : s.topKernels) {
            char line[400];
            std::snprintf(line, sizeof line,
                          "  %10.2f ms %6lld calls %-13s grid %-12s block %-10s regs %3d smem %6d  %s\n", k.gpuMs,
                          static_cast<long long>(k.calls), kernelClassName(k.kind), dims(k.grid).c_str(),
                          dims(k.block).c_str(), k.registersPerThread, k.sharedMemoryBytes, shortened(k.name).c_str());
            os << line;
        }
    }
    if (!s.hostBound.empty()) {
        os << "\nLongest host-bound stretches (GPU idle until the host launched)\n";
        for (const HostBoundStretch& h : s.hostBound) {
            char line[256];
            std::snprintf(line, sizeof line, "  step %-6s at %8.3f ms for %8.3f ms, then %s\n",
                          h.step < 0 ? "all" : std::to_string(h.step).c_str(), h.startMs, h.durationMs,
                          h.nextOperator.empty() ? "(operator unknown)" : shortened(h.nextOperator, 70).c_str());
            os << line;
        }
    }
}

int runInspectTrace(const std::string& path, bool json, int top) {
    const KinetoTrace trace = readKinetoTrace(path);
    const TraceSummary summary = summarizeTrace(trace, GpuDatabase::load(), size_t(top));
    if (json)
        std::cout << traceSummaryJson(summary).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else
        printTraceSummary(std::cout, summary);
    return 0;
}

}  // namespace ts::cli
