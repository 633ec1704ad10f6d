// The PyTorch profiler (Kineto) trace reader: a tiny hand-written trace whose every figure is
// counted by hand in the comments; the traces recorded on this machine's CPU against figures a
// Python script computed from the same JSON (tests/data/traces/expected.json); the shared
// GPU traces; and bad input refused with one line.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/trace_summary.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

// Times in microseconds. Step 7 = [1000, 1100], step 8 = [1100, 1200].
//  step 7: aten::linear [1010, 1040] > aten::addmm [1012, 1032] > launch #1 at 1015 -> gemm [1030, 1050]
//          aten::relu [1045, 1055] > launch #2 at 1047 -> elementwise [1070, 1080]
//          busy 20 + 10 = 30, idle 100 - 30 = 70; host-bound: [1000, 1030] (launched at 1015, after the
//          GPU went idle at 1000) and [1080, 1100] (end of step) = 50; [1050, 1070] is not (launched at 1047).
//  step 8: c10d::allreduce_ [1110, 1120] > launch #3 at 1112 -> nccl [1120, 1160] on stream 20
//          aten::mul [1130, 1140] > launch #4 at 1132 -> elementwise [1140, 1150] on stream 7
//          memcpy launch #5 at 1162 (no operator) -> memcpy [1165, 1170]
//          busy [1120, 1160] + [1165, 1170] = 45, idle 55; communication 40, overlapped by compute 10,
//          exposed 30; host-bound [1100, 1120] + [1160, 1165] + [1170, 1200] = 55.
const char* kTinyTrace = R"TRACE({
 "schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920,
   "computeMajor": 8, "computeMinor": 0, "numSms": 108, "warpSize": 32}],
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 1000, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#8", "pid": 1, "tid": 1, "ts": 1100, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 1, "ts": 1001, "dur": 90},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 1, "ts": 1005, "dur": 40},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 1010, "dur": 30,
   "args": {"Input Dims": [[4, 8], [16, 8], [16]], "Input type": ["float", "float", "float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 1012, "dur": 20},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1015, "dur": 5,
   "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_32x32_nn", "pid": 0, "tid": 7, "ts": 1030, "dur": 20,
   "args": {"device": 0, "stream": 7, "correlation": 1, "grid": [4, 1, 1], "block": [128, 1, 1],
            "registers per thread": 64, "shared memory": 1024, "est. achieved occupancy %": 25}},
  {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 1015, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 1045, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1047, "dur": 3,
   "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0, "tid": 7,
   "ts": 1070, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 2, "grid": [1, 1, 1], "block": [64, 1, 1]}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": 1110, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1112, "dur": 2,
   "args": {"correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "pid": 0, "tid": 20,
   "ts": 1120, "dur": 40, "args": {"device": 0, "stream": 20, "correlation": 3, "grid": [8, 1, 1], "block": [544, 1, 1],
   "Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000, "Group size": 2, "dtype": "Float"}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 1130, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1132, "dur": 2,
   "args": {"correlation": 4}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::elementwise_kernel<128, 2>", "pid": 0, "tid": 7,
   "ts": 1140, "dur": 10, "args": {"device": 0, "stream": 7, "correlation": 4, "grid": [2, 1, 1], "block": [128, 1, 1]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 1162, "dur": 2,
   "args": {"correlation": 5}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 1165, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 5, "bytes": 4096}},
  {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "python"}}
 ]
})TRACE";

const TraceOperator& opNamed(const KinetoTrace& t, const std::string& name) {
    for (const TraceOperator& op : t.operators)
        if (t.str(op.name) == name) return op;
    throw std::runtime_error("no operator " + name);
}

TEST(KinetoTrace, TinyTraceJoinsKernelsToOperatorsAndSteps) {
    const KinetoTrace t = readKinetoTraceText(kTinyTrace, "tiny.json");
    EXPECT_EQ(t.eventsRead, 21);
    ASSERT_EQ(t.steps.size(), 2u);
    EXPECT_EQ(t.steps[0].number, 7);
    EXPECT_EQ(t.steps[1].number, 8);
    ASSERT_EQ(t.operators.size(), 5u);
    ASSERT_EQ(t.kernels.size(), 5u);
    EXPECT_EQ(t.unjoinedKernels, 0);
    EXPECT_TRUE(t.recordShapes);
    EXPECT_TRUE(t.withStack);
    EXPECT_FALSE(t.rocm);
    EXPECT_EQ(t.gpuDevice, 0);

    const TraceOperator& addmm = opNamed(t, "aten::addmm");
    EXPECT_EQ(addmm.depth, 1);
    EXPECT_EQ(t.str(addmm.scope), "forward/Linear_0");
    EXPECT_EQ(t.str(opNamed(t, "aten::relu").scope), "forward");
    EXPECT_EQ(t.str(opNamed(t, "aten::linear").inputShapes), "[[4,8],[16,8],[16]]");
    EXPECT_EQ(t.str(opNamed(t, "aten::linear").inputTypes), "[\"float\",\"float\",\"float\"]");
    EXPECT_EQ(opNamed(t, "aten::mul").step, 1);

    const TraceKernel& gemm = t.kernels[0];
    EXPECT_EQ(t.str(gemm.name), "ampere_sgemm_32x32_nn");
    EXPECT_EQ(gemm.kind, KernelClass::Gemm);
    EXPECT_EQ(t.str(t.operators[size_t(gemm.op)].name), "aten::addmm");  // the innermost operator
    EXPECT_DOUBLE_EQ(gemm.launchUs, 15);                                 // times from the first event (1000)
    EXPECT_EQ(gemm.grid[0], 4);
    EXPECT_EQ(gemm.block[0], 128);
    EXPECT_EQ(gemm.registersPerThread, 64);
    EXPECT_EQ(gemm.sharedMemoryBytes, 1024);
    EXPECT_FLOAT_EQ(gemm.occupancyPercent, 25);
    const TraceKernel& nccl = t.kernels[2];
    EXPECT_EQ(nccl.kind, KernelClass::Communication);
    ASSERT_GE(nccl.collective, 0);
    EXPECT_EQ(t.collectives[size_t(nccl.collective)].name, "allreduce");
    EXPECT_EQ(t.collectives[size_t(nccl.collective)].inElements, 1000);
    EXPECT_EQ(t.collectives[size_t(nccl.collective)].groupSize, 2);
    EXPECT_EQ(t.kernels[4].kind, KernelClass::Memcpy);
    EXPECT_EQ(t.kernels[4].op, -1);  // launched outside every operator
    EXPECT_DOUBLE_EQ(t.kernels[4].bytes, 4096);
}

TEST(KinetoTrace, TinyTraceSummaryMatchesTheHandCount) {
    const KinetoTrace t = readKinetoTraceText(kTinyTrace, "tiny.json");
    const TraceSummary s = summarizeTrace(t, GpuDatabase::builtin());
    EXPECT_EQ(s.gpuId, "a100-sxm4-80gb");
    ASSERT_EQ(s.steps.size(), 2u);
    const TraceStepSummary& a = s.steps[0];
    EXPECT_NEAR(a.cpuMs, 0.100, 1e-9);
    EXPECT_NEAR(a.gpuWindowMs, 0.100, 1e-9);
    EXPECT_NEAR(a.busyMs, 0.030, 1e-9);
    EXPECT_NEAR(a.idleMs, 0.070, 1e-9);
    EXPECT_NEAR(a.hostBoundMs, 0.050, 1e-9);
    EXPECT_NEAR(a.communicationMs, 0, 1e-9);
    const TraceStepSummary& b = s.steps[1];
    EXPECT_NEAR(b.busyMs, 0.045, 1e-9);
    EXPECT_NEAR(b.idleMs, 0.055, 1e-9);
    EXPECT_NEAR(b.communicationMs, 0.040, 1e-9);
    EXPECT_NEAR(b.exposedCommunicationMs, 0.030, 1e-9);
    EXPECT_NEAR(b.hostBoundMs, 0.055, 1e-9);
    EXPECT_NEAR(s.medianStepMs, 0.100, 1e-9);

    ASSERT_FALSE(s.classes.empty());
    EXPECT_EQ(s.classes[0].kind, KernelClass::Communication);
    double elementwise = 0;
    for (const TraceClassTotal& c : s.classes)
        if (c.kind == KernelClass::Elementwise) elementwise = c.gpuMs;
    EXPECT_NEAR(elementwise, 0.020, 1e-9);
    ASSERT_FALSE(s.topOperators.empty());
    EXPECT_EQ(s.topOperators[0].name, "c10d::allreduce_");
    EXPECT_NEAR(s.topOperators[0].gpuMs, 0.040, 1e-9);
    ASSERT_FALSE(s.hostBound.empty());
    EXPECT_NEAR(s.hostBound[0].durationMs, 0.030, 1e-9);  // [1000, 1030] and [1170, 1200] tie; the first kept
    EXPECT_EQ(s.hostBound[0].nextOperator, "aten::addmm");
}

TEST(KinetoTrace, TinyTraceBecomesAProfile) {
    const Profile p = profileFromKinetoTrace(readKinetoTraceText(kTinyTrace, "tiny.json"));
    EXPECT_EQ(p.environment.device, "cuda:0");
    EXPECT_EQ(p.environment.deviceName, "NVIDIA A100-SXM4-80GB");
    ASSERT_TRUE(p.environment.gpu);
    EXPECT_EQ(p.environment.gpu->sms, 108);
    ASSERT_EQ(p.runs.size(), 1u);
    EXPECT_EQ(p.runs[0].iteration.repeats, 2);
    EXPECT_NEAR(p.runs[0].iteration.medianMs, 0.100, 1e-9);
    // addmm, relu, allreduce_, mul launched GPU work; the memcpy had no operator.
    EXPECT_EQ(p.runs[0].layers.size(), 4u);
    for (const LayerProfile& l : p.runs[0].layers)
        if (l.name == "aten::addmm") {
            ASSERT_EQ(l.forwardKernels.size(), 1u);
            EXPECT_EQ(l.forwardKernels[0].grid[0], 4);
            EXPECT_EQ(l.forwardKernels[0].registersPerThread, 64);
            EXPECT_DOUBLE_EQ(l.forwardKernels[0].durationUs, 20);
            EXPECT_EQ(l.modulePath, "forward/Linear_0");
        }
}

std::string gzipped(const std::string& text) {
    const fs::path path = fs::temp_directory_path() / ("trainscope-kineto-" + std::to_string(::getpid()) + ".gz");
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, text.data(), unsigned(text.size()));
    gzclose(f);
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    fs::remove(path);
    return ss.str();
}

TEST(KinetoTrace, GzipAndZlibReadTheSameAsPlain) {
    const std::string gz = gzipped(kTinyTrace);
    EXPECT_EQ(readKinetoTraceText(gz, "tiny.json.gz").kernels.size(), 5u);
    std::string z(compressBound(uLong(std::strlen(kTinyTrace))), '\0');
    uLongf n = uLongf(z.size());
    ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(z.data()), &n, reinterpret_cast<const Bytef*>(kTinyTrace),
                        uLong(std::strlen(kTinyTrace)), 9),
              Z_OK);
    z.resize(n);
    EXPECT_EQ(readKinetoTraceText(z, "tiny.json.z").kernels.size(), 5u);
    // Two gzip members one after the other (concatenated files) read as one text.
    const std::string half = std::string(kTinyTrace);
    const std::string two = gzipped(half.substr(0, 300)) + gzipped(half.substr(300));
    EXPECT_EQ(readKinetoTraceText(two, "two.json.gz").kernels.size(), 5u);
}

std::string refusal(const std::string& text) {
    try {
        readKinetoTraceText(text, "bad.json");
    } catch (const ModelError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        EXPECT_EQ(e.source(), "bad.json");
        return e.problem();
    }
    return "(accepted)";
}

std::string withEvent(const std::string& event) {
    return R"({"traceEvents": [)" + event + "]}";
}

TEST(KinetoTrace, BadInputIsRefusedWithOneLine) {
    const std::string text = kTinyTrace;
    EXPECT_NE(refusal(text.substr(0, text.size() / 2)).find("not valid JSON"), std::string::npos);
    const std::string gz = gzipped(text);
    EXPECT_NE(refusal(gz.substr(0, gz.size() / 2)).find("truncated"), std::string::npos);
    std::string damaged = gz;
    for (size_t i = 20; i < 60; ++i) damaged[i] = char(0xff);
    EXPECT_NE(refusal(damaged).find("gzip"), std::string::npos);
    EXPECT_NE(refusal("{\"schemaVersion\": 1}").find("no \"traceEvents\""), std::string::npos);
    EXPECT_NE(refusal("[1, 2]").find("not an object"), std::string::npos);
    EXPECT_NE(refusal(R"({"traceEvents": {}})").find("not an array"), std::string::npos);
    EXPECT_NE(refusal("{\"x\": " + std::string(100, '[') + std::string(100, ']') + "}").find("nested deeper"),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1})"))
                  .find("\"ts\" is not a number"),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "cpu_op", "name": "op", "ts": 1})")).find("without \"dur\""),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -5})")).find("negative"),
              std::string::npos);
    EXPECT_NE(
        refusal(withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1e300, "dur": 1})")).find("not a time"),
        std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e400})")).find("JSON"),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,
                                    "args": {"grid": [1, 2]}})"))
                  .find("three numbers"),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,
                                    "args": {"grid": [1e12, 1, 1]}})"))
                  .find("not a size"),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,
                                    "args": {"correlation": -3}})"))
                  .find("correlation"),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "cpu_op", "name": 5, "ts": 1, "dur": 1})")).find("not a string"),
              std::string::npos);
    EXPECT_NE(refusal(withEvent(R"({"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 1, "args": 3})"))
                  .find("not an object"),
              std::string::npos);
}

TEST(KinetoTrace, MissingIdsLeaveKernelsUnjoinedButCounted) {
    const KinetoTrace t = readKinetoTraceText(
        withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2},
                     {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 9, "dur": 2,
                      "args": {"correlation": 77}})"),
        "ids.json");
    EXPECT_EQ(t.kernels.size(), 2u);
    EXPECT_EQ(t.unjoinedKernels, 2);
    EXPECT_EQ(t.kernels[0].op, -1);
    bool noted = false;
    for (const std::string& n : t.notes) noted = noted || n.find("no launch") != std::string::npos;
    EXPECT_TRUE(noted);
}

// Process and thread ids are read as text: one past int64_t's range (an unsigned 64-bit id) keeps
// its double's text rather than a conversion that was undefined behaviour (found by fuzz_kineto),
// and the kernel on it still counts (scripts/sanitize.sh checks float-to-integer conversions, which
// GCC's -fsanitize=undefined leaves out, so that its build fails here without the fix).
TEST(KinetoTrace, IdsBeyondInt64AreKeptAsText) {
    const KinetoTrace t = readKinetoTraceText(
        withEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 18446744073709551615,
                      "tid": 9999999999999945152, "ts": 5, "dur": 2})"),
        "ids.json");
    EXPECT_EQ(t.kernels.size(), 1u);
}

TEST(KinetoTrace, TraceFilesAreRecognisedByTheirOpening) {
    const fs::path dir = fs::path(TRAINSCOPE_TEST_DATA_DIR) / "traces";
    EXPECT_TRUE(isKinetoTraceFile((dir / "cpu_cnn_shapes.json.gz").string()));
    EXPECT_FALSE(isKinetoTraceFile((dir / "record_traces.py").string()));
    EXPECT_FALSE(isKinetoTraceFile((fs::path(TRAINSCOPE_TEST_DATA_DIR) / "nonexistent.json").string()));
}

// tests/data/traces/expected.json: figures tests/data/traces/expected.py computed with Python's json
// module from the same files (steps, operators per step, kernels).
TEST(KinetoTrace, RecordedCpuTracesMatchPythonsCount) {
    const fs::path dir = fs::path(TRAINSCOPE_TEST_DATA_DIR) / "traces";
    std::ifstream in(dir / "expected.json");
    ASSERT_TRUE(in) << "tests/data/traces/expected.json";
    const nlohmann::json expected = nlohmann::json::parse(in);
    for (const auto& [file, e] : expected.items()) {
        SCOPED_TRACE(file);
        const KinetoTrace t = readKinetoTrace((dir / file).string());
        ASSERT_EQ(t.steps.size(), e["steps"].size());
        for (size_t i = 0; i < t.steps.size(); ++i) {
            EXPECT_EQ(t.steps[i].number, e["steps"][i]["number"].get<int64_t>());
            EXPECT_NEAR(t.steps[i].durationUs, e["steps"][i]["dur_us"].get<double>(), 1e-3);
        }
        EXPECT_EQ(int64_t(t.operators.size()), e["cpu_ops"].get<int64_t>());
        std::vector<int64_t> perStep(t.steps.size(), 0);
        for (const TraceOperator& op : t.operators)
            if (op.step >= 0) ++perStep[size_t(op.step)];
        for (size_t i = 0; i < t.steps.size(); ++i) EXPECT_EQ(perStep[i], e["steps"][i]["cpu_ops"].get<int64_t>());
        EXPECT_EQ(t.recordShapes, e["record_shapes"].get<bool>());
        EXPECT_EQ(t.withStack, e["with_stack"].get<bool>());
        EXPECT_TRUE(t.kernels.empty());
        int64_t modules = 0;
        for (const TraceOperator& op : t.operators)
            if (t.str(op.scope).find("_0") != std::string::npos) ++modules;
        if (e["with_stack"].get<bool>()) {
            EXPECT_GT(modules, 0);
        }
    }
}

}  // namespace
}  // namespace ts
