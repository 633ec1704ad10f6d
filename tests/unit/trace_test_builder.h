#pragma once
// Hand-built PyTorch profiler traces for the trace prediction tests: steps, operators with their
// recorded shapes, launches with their kernels (any launch configuration), collectives and runtime
// calls, read back through readKinetoTraceText like a file. Every time is the caller's, so a test
// can work each expected figure out by hand.
#include <nlohmann/json.hpp>
#include <string>

#include "trainscope/core/kineto_trace.h"

namespace ts::predictors {

class TraceBuilder {
public:
    using json = nlohmann::json;

    void step(int number, double ts, double dur) {
        events_.push_back({{"ph", "X"},
                           {"cat", "user_annotation"},
                           {"name", "ProfilerStep#" + std::to_string(number)},
                           {"pid", 1},
                           {"tid", 1},
                           {"ts", ts},
                           {"dur", dur}});
    }
    // An operator on the host at [ts, ts + dur], with its recorded shapes where given.
    void op(const std::string& name, double ts, double dur, json dims = nullptr, json types = nullptr, int tid = 1) {
        json e = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
        if (!dims.is_null()) e["args"] = {{"Input Dims", dims}, {"Input type", types}};
        events_.push_back(e);
    }
    // A launch at `launch` (3 us) of a kernel running [start, start + dur] with this configuration.
    void launch(double launch, double start, double dur, const std::string& name, json grid = {2048, 1, 1},
                json block = {256, 1, 1}, int registers = 32, int sharedBytes = 0, int stream = 7, int tid = 1) {
        const int c = ++correlation_;
        events_.push_back({{"ph", "X"},
                           {"cat", "cuda_runtime"},
                           {"name", "cudaLaunchKernel"},
                           {"pid", 1},
                           {"tid", tid},
                           {"ts", launch},
                           {"dur", 3},
                           {"args", {{"correlation", c}}}});
        events_.push_back({{"ph", "X"},
                           {"cat", "kernel"},
                           {"name", name},
                           {"pid", 0},
                           {"tid", stream},
                           {"ts", start},
                           {"dur", dur},
                           {"args",
                            {{"device", 0},
                             {"stream", stream},
                             {"correlation", c},
                             {"grid", grid},
                             {"block", block},
                             {"registers per thread", registers},
                             {"shared memory", sharedBytes}}}});
    }
    // An operator at [ts, ts + 8] that launches at ts + 2 a kernel running [start, start + dur].
    void kernel(double ts, double start, double dur, int stream = 7,
                const std::string& name = "void at::native::vectorized_elementwise_kernel<4>",
                const std::string& opName = "aten::add", json dims = nullptr, json types = nullptr) {
        op(opName, ts, 8, dims, types);
        launch(ts + 2, start, dur, name, {2048, 1, 1}, {256, 1, 1}, 32, 0, stream);
    }
    // An NCCL all-reduce of `elements` floats over `group` GPUs at [start, start + dur], launched at ts.
    void allReduce(double ts, double start, double dur, int64_t elements, int group) {
        const int c = ++correlation_;
        events_.push_back({{"ph", "X"},
                           {"cat", "cuda_runtime"},
                           {"name", "cudaLaunchKernel"},
                           {"pid", 1},
                           {"tid", 1},
                           {"ts", ts},
                           {"dur", 3},
                           {"args", {{"correlation", c}}}});
        events_.push_back({{"ph", "X"},
                           {"cat", "kernel"},
                           {"name", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"},
                           {"pid", 0},
                           {"tid", 20},
                           {"ts", start},
                           {"dur", dur},
                           {"args",
                            {{"device", 0},
                             {"stream", 20},
                             {"correlation", c},
                             {"grid", {8, 1, 1}},
                             {"block", {544, 1, 1}},
                             {"Collective name", "allreduce"},
                             {"In msg nelems", elements},
                             {"Out msg nelems", elements},
                             {"Group size", group},
                             {"dtype", "Float"}}}});
    }
    void runtimeCall(const std::string& name, double ts, double dur) {
        events_.push_back({{"ph", "X"},
                           {"cat", "cuda_runtime"},
                           {"name", name},
                           {"pid", 1},
                           {"tid", 1},
                           {"ts", ts},
                           {"dur", dur},
                           {"args", {{"correlation", ++correlation_}}}});
    }
    KinetoTrace read() const {
        json doc = {{"schemaVersion", 1},
                    {"deviceProperties",
                     {{{"id", 0},
                       {"name", "NVIDIA A100-SXM4-80GB"},
                       {"totalGlobalMem", 85899345920.0},
                       {"computeMajor", 8},
                       {"computeMinor", 0},
                       {"numSms", 108},
                       {"warpSize", 32}}}},
                    {"traceEvents", events_}};
        return readKinetoTraceText(doc.dump(), "built.json");
    }

private:
    json events_ = json::array();
    int correlation_ = 0;
};

}  // namespace ts::predictors
