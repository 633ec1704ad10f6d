// The profile file (docs/profile-format.md): every field survives a write and a read exactly,
// anything malformed is refused with one line naming the file and the field, writing is atomic,
// and the Chrome trace of a timeline has one row per track with host rows first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "trainscope/core/errors.h"
#include "trainscope/core/profile_file.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

TimingStat timing(double median, double cv, double min, double max, int repeats) {
    return {median, cv, min, max, repeats};
}

KernelRecord kernel(const std::string& name, int gx, double us, bool tensorCore) {
    KernelRecord k;
    k.name = name;
    k.grid[0] = gx, k.grid[1] = 3, k.grid[2] = 2;
    k.block[0] = 256, k.block[1] = 2, k.block[2] = 1;
    k.registersPerThread = 72;
    k.staticSharedBytes = 16384;
    k.dynamicSharedBytes = 98304;
    k.durationUs = us;
    k.launches = 4;
    k.tensorCore = tensorCore;
    return k;
}

// Every field set, none to its default, with doubles that do not print short (1/3, 0.1 + 0.2).
Profile richProfile() {
    Profile p;
    p.complete = false;
    p.incompleteReason = "cancelled (Ctrl-C) during batch 64";
    DeviceProperties d;
    d.index = 1;
    d.name = "NVIDIA H100 80GB HBM3";
    d.uuid = "GPU-5d2a7a1c-0000-1111-2222-333344445555";
    d.pciBusId = "0000:3b:00.0";
    d.ccMajor = 9, d.ccMinor = 0, d.sms = 132;
    d.totalMemoryBytes = (uint64_t(1) << 63) + 12345;  // beyond int64 and beyond a double's 53 bits
    d.maxSmClockMHz = 1980, d.memoryClockMHz = 2619, d.memoryBusWidthBits = 5120;
    d.l2CacheBytes = 52428800, d.maxThreadsPerSm = 2048, d.maxBlocksPerSm = 32;
    d.registersPerSm = 65536, d.registersPerBlock = 65535, d.maxThreadsPerBlock = 1024, d.warpSize = 33;
    d.sharedMemoryPerSmBytes = 233472, d.sharedMemoryPerBlockBytes = 49152;
    d.sharedMemoryPerBlockOptinBytes = 232448, d.reservedSharedMemoryPerBlockBytes = 1024;
    d.eccEnabled = true, d.pciGeneration = 5, d.pciLinkWidth = 16;
    p.environment = {"cuda:1",
                     "NVIDIA H100 80GB HBM3",
                     d,
                     16,
                     "gpu-node-7",
                     "2026-11-20T09:15:02Z",
                     {"0.4.0", "2.9.1+cu130", "13.0", "9.13.0", "13.0", "2025.3.1"}};
    p.scenario = {"zoo:gpt2-small?seq=128",         "gpt2-small", 128, "amp-bf16", "adamw",
                  "cross-entropy on random labels", true};
    p.kernelsRecorded = true;
    p.kernelsMissingReason = "recorded for batch 32 only";
    p.notes = {"clocks were not locked", "second note, with \"quotes\" and a tab\t"};

    ProfileRun fits;
    fits.batch = 32;
    fits.complete = true;
    fits.iteration = timing(1.0 / 3, 0.1 + 0.2, 0.3333, 0.34, 50);
    fits.parts = {{"layers forward", 0.125}, {"optimizer step", 1e-7}, {"unattributed", -0.0421}};
    fits.memory = {1.5e9, 1.5e9 + 1, 3e9, 12345678901.0, 6291456, 0.5, 7.25e9, 8e9, 5.5e8};
    fits.wallSeconds = 12.345678901234567;
    LayerProfile conv;
    conv.op = 0;
    conv.name = "transformer.h.0.attn/MatMul";
    conv.type = "MatMul";
    conv.modulePath = "transformer.h.0.attn";
    conv.outputShape = {32, 128, 2304};
    conv.forward = timing(0.0123, 0.011, 0.012, 0.0131, 49);
    conv.backward = timing(0.0246, 0.02, 0.024, 0.03, 48);
    conv.hasBackward = true;
    conv.savedBytes = 9437184;
    conv.outputBytes = 28311552;
    conv.forwardKernels = {kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 18, 11.75, true)};
    conv.backwardKernels = {kernel("void at::native::elementwise_kernel<128, 4>(int, float*)", 1, 2.5, false),
                            kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n", 36, 10.0 / 7, true)};
    conv.note = "backward measured with the input gradient only";
    LayerProfile embedding;
    embedding.op = 7;
    embedding.name = "transformer.wte/Gather";
    embedding.type = "Gather";
    embedding.outputShape = {};
    embedding.forward = timing(0.002, 0, 0.002, 0.002, 1);
    embedding.backward = timing(0.5, 0.25, 0.125, 1, 0);  // kept although has_backward is false
    embedding.hasBackward = false;
    fits.layers = {conv, embedding};

    ProfileRun oom;
    oom.batch = 64;
    oom.fits = false;
    oom.error = "CUDA out of memory. Tried to allocate 2.00 GiB";
    oom.complete = false;
    oom.memory.peakAllocated = 8.1e10;
    oom.wallSeconds = 0.75;
    p.runs = {fits, oom};
    return p;
}

Profile cpuProfile() {
    Profile p;
    p.environment.device = "cpu";
    p.environment.deviceName = "AMD EPYC 7B13";
    p.environment.cpuThreads = 2;
    p.environment.software.trainscope = "0.4.0";
    p.environment.software.libtorch = "2.9.1+cpu";
    p.scenario.model = "zoo:resnet18?image=32";
    p.scenario.modelName = "resnet18";
    p.scenario.precision = "fp32";
    p.scenario.optimizer = "sgd";
    p.kernelsMissingReason = "CPU run: no GPU kernels";
    ProfileRun r;
    r.batch = 2;
    r.iteration = timing(40.5, 0.02, 39.9, 41.2, 5);
    LayerProfile l;
    l.op = 3;
    l.name = "conv1/Conv";
    l.type = "Conv";
    l.outputShape = {2, 64, 16, 16};
    l.forward = timing(1.25, 0.01, 1.2, 1.3, 5);
    r.layers = {l};
    p.runs = {r};
    return p;
}

void expectSame(const TimingStat& a, const TimingStat& b, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(a.medianMs, b.medianMs);
    EXPECT_EQ(a.cv, b.cv);
    EXPECT_EQ(a.minMs, b.minMs);
    EXPECT_EQ(a.maxMs, b.maxMs);
    EXPECT_EQ(a.repeats, b.repeats);
}

void expectSame(const std::vector<KernelRecord>& a, const std::vector<KernelRecord>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE(a[i].name);
        EXPECT_EQ(a[i].name, b[i].name);
        for (int d = 0; d < 3; ++d) EXPECT_EQ(a[i].grid[d], b[i].grid[d]);
        for (int d = 0; d < 3; ++d) EXPECT_EQ(a[i].block[d], b[i].block[d]);
        EXPECT_EQ(a[i].registersPerThread, b[i].registersPerThread);
        EXPECT_EQ(a[i].staticSharedBytes, b[i].staticSharedBytes);
        EXPECT_EQ(a[i].dynamicSharedBytes, b[i].dynamicSharedBytes);
        EXPECT_EQ(a[i].durationUs, b[i].durationUs);
        EXPECT_EQ(a[i].launches, b[i].launches);
        EXPECT_EQ(a[i].tensorCore, b[i].tensorCore);
    }
}

void expectSame(const DeviceProperties& a, const DeviceProperties& b) {
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.uuid, b.uuid);
    EXPECT_EQ(a.pciBusId, b.pciBusId);
    EXPECT_EQ(a.ccMajor, b.ccMajor);
    EXPECT_EQ(a.ccMinor, b.ccMinor);
    EXPECT_EQ(a.sms, b.sms);
    EXPECT_EQ(a.totalMemoryBytes, b.totalMemoryBytes);
    EXPECT_EQ(a.maxSmClockMHz, b.maxSmClockMHz);
    EXPECT_EQ(a.memoryClockMHz, b.memoryClockMHz);
    EXPECT_EQ(a.memoryBusWidthBits, b.memoryBusWidthBits);
    EXPECT_EQ(a.l2CacheBytes, b.l2CacheBytes);
    EXPECT_EQ(a.maxThreadsPerSm, b.maxThreadsPerSm);
    EXPECT_EQ(a.maxBlocksPerSm, b.maxBlocksPerSm);
    EXPECT_EQ(a.registersPerSm, b.registersPerSm);
    EXPECT_EQ(a.registersPerBlock, b.registersPerBlock);
    EXPECT_EQ(a.maxThreadsPerBlock, b.maxThreadsPerBlock);
    EXPECT_EQ(a.warpSize, b.warpSize);
    EXPECT_EQ(a.sharedMemoryPerSmBytes, b.sharedMemoryPerSmBytes);
    EXPECT_EQ(a.sharedMemoryPerBlockBytes, b.sharedMemoryPerBlockBytes);
    EXPECT_EQ(a.sharedMemoryPerBlockOptinBytes, b.sharedMemoryPerBlockOptinBytes);
    EXPECT_EQ(a.reservedSharedMemoryPerBlockBytes, b.reservedSharedMemoryPerBlockBytes);
    EXPECT_EQ(a.eccEnabled, b.eccEnabled);
    EXPECT_EQ(a.pciGeneration, b.pciGeneration);
    EXPECT_EQ(a.pciLinkWidth, b.pciLinkWidth);
}

// Field by field, so that a field the writer forgot fails here even though the JSON of the
// profile read back would equal the JSON it was read from.
void expectSame(const Profile& a, const Profile& b) {
    EXPECT_EQ(a.formatVersion, b.formatVersion);
    EXPECT_EQ(a.complete, b.complete);
    EXPECT_EQ(a.incompleteReason, b.incompleteReason);
    EXPECT_EQ(a.kernelsRecorded, b.kernelsRecorded);
    EXPECT_EQ(a.kernelsMissingReason, b.kernelsMissingReason);
    EXPECT_EQ(a.notes, b.notes);
    const ProfileEnvironment &ea = a.environment, &eb = b.environment;
    EXPECT_EQ(ea.device, eb.device);
    EXPECT_EQ(ea.deviceName, eb.deviceName);
    EXPECT_EQ(ea.cpuThreads, eb.cpuThreads);
    EXPECT_EQ(ea.host, eb.host);
    EXPECT_EQ(ea.startedAt, eb.startedAt);
    EXPECT_EQ(ea.software.trainscope, eb.software.trainscope);
    EXPECT_EQ(ea.software.libtorch, eb.software.libtorch);
    EXPECT_EQ(ea.software.cudaRuntime, eb.software.cudaRuntime);
    EXPECT_EQ(ea.software.cudnn, eb.software.cudnn);
    EXPECT_EQ(ea.software.driver, eb.software.driver);
    EXPECT_EQ(ea.software.cupti, eb.software.cupti);
    ASSERT_EQ(ea.gpu.has_value(), eb.gpu.has_value());
    if (ea.gpu) expectSame(*ea.gpu, *eb.gpu);
    const ProfileScenario &sa = a.scenario, &sb = b.scenario;
    EXPECT_EQ(sa.model, sb.model);
    EXPECT_EQ(sa.modelName, sb.modelName);
    EXPECT_EQ(sa.seq, sb.seq);
    EXPECT_EQ(sa.precision, sb.precision);
    EXPECT_EQ(sa.optimizer, sb.optimizer);
    EXPECT_EQ(sa.loss, sb.loss);
    EXPECT_EQ(sa.cudnnBenchmark, sb.cudnnBenchmark);
    ASSERT_EQ(a.runs.size(), b.runs.size());
    for (size_t r = 0; r < a.runs.size(); ++r) {
        SCOPED_TRACE("runs[" + std::to_string(r) + "]");
        const ProfileRun &ra = a.runs[r], &rb = b.runs[r];
        EXPECT_EQ(ra.batch, rb.batch);
        EXPECT_EQ(ra.fits, rb.fits);
        EXPECT_EQ(ra.error, rb.error);
        EXPECT_EQ(ra.complete, rb.complete);
        expectSame(ra.iteration, rb.iteration, "iteration");
        ASSERT_EQ(ra.parts.size(), rb.parts.size());
        for (size_t i = 0; i < ra.parts.size(); ++i) {
            EXPECT_EQ(ra.parts[i].name, rb.parts[i].name);
            EXPECT_EQ(ra.parts[i].ms, rb.parts[i].ms);
        }
        EXPECT_EQ(ra.memory.weights, rb.memory.weights);
        EXPECT_EQ(ra.memory.gradients, rb.memory.gradients);
        EXPECT_EQ(ra.memory.optimizerState, rb.memory.optimizerState);
        EXPECT_EQ(ra.memory.activations, rb.memory.activations);
        EXPECT_EQ(ra.memory.inputs, rb.memory.inputs);
        EXPECT_EQ(ra.memory.workspace, rb.memory.workspace);
        EXPECT_EQ(ra.memory.peakAllocated, rb.memory.peakAllocated);
        EXPECT_EQ(ra.memory.peakReserved, rb.memory.peakReserved);
        EXPECT_EQ(ra.memory.cudaContext, rb.memory.cudaContext);
        EXPECT_EQ(ra.wallSeconds, rb.wallSeconds);
        ASSERT_EQ(ra.layers.size(), rb.layers.size());
        for (size_t i = 0; i < ra.layers.size(); ++i) {
            const LayerProfile &la = ra.layers[i], &lb = rb.layers[i];
            SCOPED_TRACE(la.name);
            EXPECT_EQ(la.op, lb.op);
            EXPECT_EQ(la.name, lb.name);
            EXPECT_EQ(la.type, lb.type);
            EXPECT_EQ(la.modulePath, lb.modulePath);
            EXPECT_EQ(la.outputShape, lb.outputShape);
            expectSame(la.forward, lb.forward, "forward");
            expectSame(la.backward, lb.backward, "backward");
            EXPECT_EQ(la.hasBackward, lb.hasBackward);
            EXPECT_EQ(la.savedBytes, lb.savedBytes);
            EXPECT_EQ(la.outputBytes, lb.outputBytes);
            expectSame(la.forwardKernels, lb.forwardKernels);
            expectSame(la.backwardKernels, lb.backwardKernels);
            EXPECT_EQ(la.note, lb.note);
        }
    }
}

struct ProfileFileTest : ::testing::Test {
    fs::path dir = fs::temp_directory_path() / ("trainscope-profile-" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }
    size_t entries() const { return size_t(std::distance(fs::directory_iterator(dir), fs::directory_iterator())); }

    // Writes `doc` to dir/name and returns the error message reading it gives ("" if none).
    std::string readError(const std::string& name, const std::string& text) {
        const fs::path file = dir / name;
        spit(file, text);
        try {
            readProfile(file.string());
        } catch (const ModelError& e) {
            return e.what();
        }
        return "";
    }
};

TEST_F(ProfileFileTest, EveryFieldOfARichProfileSurvivesAFile) {
    const Profile written = richProfile();
    const fs::path file = dir / "profile.json";
    writeProfile(written, file.string());
    const Profile read = readProfile(file.string());
    expectSame(written, read);
    EXPECT_EQ(profileToJson(read), profileToJson(written));
    EXPECT_EQ(entries(), 1u);  // no temporary file left beside it

    // Spot checks on values that print long or sit at the edges of their types.
    EXPECT_EQ(read.runs[0].iteration.medianMs, 1.0 / 3);
    EXPECT_EQ(read.runs[0].iteration.cv, 0.1 + 0.2);
    EXPECT_EQ(read.runs[0].layers[0].backwardKernels[1].durationUs, 10.0 / 7);
    EXPECT_EQ(read.environment.gpu->totalMemoryBytes, (uint64_t(1) << 63) + 12345);
    EXPECT_FALSE(read.runs[1].fits);
    EXPECT_EQ(read.runs[1].error, "CUDA out of memory. Tried to allocate 2.00 GiB");
    EXPECT_EQ(read.runs[0].parts[2].ms, -0.0421);
    EXPECT_EQ(read.runs[0].layers[0].forwardKernels[0].grid[0], 18);
    EXPECT_EQ(read.notes[1], "second note, with \"quotes\" and a tab\t");
}

TEST_F(ProfileFileTest, TheFileStartsWithItsFormatAndVersionAndUsesUnitsInKeys) {
    const fs::path file = dir / "profile.json";
    writeProfile(richProfile(), file.string());
    const std::string text = slurp(file);
    EXPECT_EQ(text.rfind("{\n  \"format\": \"trainscope-profile\",\n  \"version\": 1,", 0), 0u) << text.substr(0, 80);
    const json j = json::parse(text);
    EXPECT_TRUE(j["runs"][0]["iteration"].contains("median_ms"));
    EXPECT_TRUE(j["runs"][0]["memory"].contains("peak_allocated_bytes"));
    EXPECT_TRUE(j["runs"][0]["layers"][0]["forward_kernels"][0].contains("duration_us"));
    EXPECT_EQ(j["environment"]["gpu"]["compute_capability"], "9.0");
}

TEST_F(ProfileFileTest, ACpuProfileHasNoGpuOrKernelSectionsAndRoundTrips) {
    const Profile written = cpuProfile();
    const json j = profileToJson(written);
    EXPECT_FALSE(j["environment"].contains("gpu"));
    EXPECT_FALSE(j["environment"]["software"].contains("cuda_runtime"));
    EXPECT_FALSE(j["runs"][0]["layers"][0].contains("forward_kernels"));
    EXPECT_FALSE(j["runs"][0]["layers"][0].contains("backward"));
    const fs::path file = dir / "cpu.json";
    writeProfile(written, file.string());
    const Profile read = readProfile(file.string());
    EXPECT_FALSE(read.environment.gpu.has_value());
    expectSame(written, read);
}

TEST_F(ProfileFileTest, UnknownKeysAreIgnoredAndOptionalSectionsMayBeNull) {
    json j = profileToJson(richProfile());
    j["written_by_a_later_version"] = {{"anything", 1}};
    j["runs"][0]["energy_joules"] = 12.5;
    j["runs"][0]["layers"][0]["forward"]["p99_ms"] = 0.02;
    j["environment"]["gpu"]["clock_locked"] = true;
    const Profile p = profileFromJson(j, "later.json");
    expectSame(richProfile(), p);

    j["environment"]["gpu"] = nullptr;
    j["runs"][0]["layers"][0]["forward_kernels"] = nullptr;
    const Profile q = profileFromJson(j, "later.json");
    EXPECT_FALSE(q.environment.gpu.has_value());
    EXPECT_TRUE(q.runs[0].layers[0].forwardKernels.empty());
}

// Each case changes one thing in a good document; the error must name the file and the field.
TEST_F(ProfileFileTest, MalformedDocumentsAreRefusedNamingTheFileAndTheField) {
    struct Case {
        const char* name;
        std::function<void(json&)> damage;
        const char* expected;  // fragment of the message after "FILE: "
    };
    const std::vector<Case> cases = {
        {"wrong format", [](json& j) { j["format"] = "trainscope-calibration"; },
         "not a TrainScope profile: expected \"format\": \"trainscope-profile\", found \"trainscope-calibration\""},
        {"no format", [](json& j) { j.erase("format"); }, "there is no \"format\""},
        {"format not a string", [](json& j) { j["format"] = json::array(); }, "found a value of type array"},
        {"newer version", [](json& j) { j["version"] = 2; },
         "version: the file is format version 2, written by a newer TrainScope; this TrainScope reads profile "
         "format version 1"},
        {"version zero", [](json& j) { j["version"] = 0; }, "version: there is no profile format version 0"},
        {"version as text", [](json& j) { j["version"] = "1"; }, "version: expected a whole number, got string"},
        {"no runs", [](json& j) { j.erase("runs"); }, "runs: is missing"},
        {"runs not a list", [](json& j) { j["runs"] = json::object(); }, "runs: expected a list, got object"},
        {"string deep inside", [](json& j) { j["runs"][1]["iteration"]["median_ms"] = "fast"; },
         "runs[1].iteration.median_ms: expected a number, got string"},
        {"string in a layer", [](json& j) { j["runs"][0]["layers"][1]["forward"]["median_ms"] = "0.1"; },
         "runs[0].layers[1].forward.median_ms: expected a number, got string"},
        {"negative median", [](json& j) { j["runs"][0]["layers"][0]["forward"]["median_ms"] = -0.5; },
         "runs[0].layers[0].forward.median_ms: must not be negative, got -0.5"},
        {"negative bytes", [](json& j) { j["runs"][0]["memory"]["activations_bytes"] = -1; },
         "runs[0].memory.activations_bytes: must not be negative"},
        {"negative kernel time", [](json& j) { j["runs"][0]["layers"][0]["forward_kernels"][0]["duration_us"] = -3; },
         "runs[0].layers[0].forward_kernels[0].duration_us: must not be negative"},
        {"median above max", [](json& j) { j["runs"][0]["iteration"]["median_ms"] = 99.0; },
         "runs[0].iteration: expected min_ms <= median_ms <= max_ms"},
        {"fractional repeats", [](json& j) { j["runs"][0]["iteration"]["repeats"] = 2.5; },
         "runs[0].iteration.repeats: expected a whole number, got number"},
        {"int overflow", [](json& j) { j["runs"][0]["layers"][0]["forward_kernels"][0]["launches"] = 1e12; },
         "launches: expected a whole number"},
        {"int too large", [](json& j) { j["environment"]["gpu"]["sms"] = int64_t(1) << 40; },
         "environment.gpu.sms: is too large (at most 2147483647)"},
        {"zero batch", [](json& j) { j["runs"][0]["batch"] = 0; }, "runs[0].batch: must be at least 1, got 0"},
        {"missing memory field", [](json& j) { j["runs"][1]["memory"].erase("peak_reserved_bytes"); },
         "runs[1].memory.peak_reserved_bytes: is missing"},
        {"bool as number", [](json& j) { j["runs"][0]["fits"] = 1; },
         "runs[0].fits: expected true or false, got number"},
        {"layer not an object", [](json& j) { j["runs"][0]["layers"][1] = 42; },
         "runs[0].layers[1]: expected an object, got number"},
        {"grid of two",
         [](json& j) {
             j["runs"][0]["layers"][0]["backward_kernels"][1]["grid"] = {4, 4};
         },
         "runs[0].layers[0].backward_kernels[1].grid: expected 3 numbers (x, y, z), got 2"},
        {"absurd rank", [](json& j) { j["runs"][0]["layers"][0]["output_shape"] = std::vector<int>(17, 1); },
         "runs[0].layers[0].output_shape: has 17 entries, more than the 16 a profile can have"},
        {"compute capability", [](json& j) { j["environment"]["gpu"]["compute_capability"] = "nine"; },
         "environment.gpu.compute_capability: expected \"MAJOR.MINOR\" such as \"9.0\", got \"nine\""},
        {"not an object",
         [](json& j) {
             j = json::array({1, 2});
         },
         "not a TrainScope profile: expected a JSON object, got array"},
    };
    const std::string good = profileToJson(richProfile()).dump();
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        json j = json::parse(good);
        c.damage(j);
        const std::string message = readError("profile.json", j.dump());
        const std::string prefix = (dir / "profile.json").string() + ": ";
        EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
        EXPECT_NE(message.find(c.expected), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST_F(ProfileFileTest, FilesThatAreNotProfilesGiveOneLineErrorsNamingTheFile) {
    const std::string good = profileToJson(richProfile()).dump(2);
    std::string junk =
        "\x7f"
        "ELF\x02\x01\x01";
    junk += std::string("\0\0\xff\xfe\x1b[31m", 9);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {readError("truncated.json", good.substr(0, good.size() / 2)), "truncated.json: not valid JSON"},
        {readError("empty.json", ""), "empty.json: the file is empty"},
        {readError("binary.json", junk), "binary.json: not valid JSON"},
        {readError("deep.json", std::string(100, '[') + std::string(100, ']')),
         "deep.json: JSON nesting deeper than 64 levels"},
        {readError("huge-number.json", "{\"format\": \"trainscope-profile\", \"version\": 1e400}"),
         "huge-number.json: not valid JSON"},
    };
    for (const auto& [message, expected] : cases) {
        EXPECT_NE(message.find(expected), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        for (char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "unprintable byte in: " << message;
    }
    try {
        readProfile(dir.string());
        FAIL() << "a directory was read";
    } catch (const ModelError& e) {
        EXPECT_EQ(std::string(e.what()), dir.string() + ": is a directory, not a profile file");
    }
    EXPECT_THROW(
        {
            try {
                readProfile((dir / "absent.json").string());
            } catch (const ModelError& e) {
                EXPECT_NE(std::string(e.what()).find("absent.json: no such file"), std::string::npos) << e.what();
                throw;
            }
        },
        ModelError);
}

TEST_F(ProfileFileTest, AFileLargerThan512MiBIsRefusedBeforeReading) {
    const fs::path file = dir / "huge.json";
    spit(file, "{");
    fs::resize_file(file, (std::uintmax_t(512) << 20) + 1);  // sparse: costs no disk
    try {
        readProfile(file.string());
        FAIL() << "a 512 MiB file was read";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("larger than the 512 MiB a profile file may have"), std::string::npos)
            << e.what();
    }
}

TEST_F(ProfileFileTest, ANonFiniteFigureIsRefusedBeforeAnythingIsWritten) {
    Profile p = richProfile();
    p.runs[0].layers[1].forward.cv = std::nan("");
    const fs::path file = dir / "nan.json";
    try {
        writeProfile(p, file.string());
        FAIL() << "NaN was written";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("nan.json: cannot be written: runs[0].layers[1].forward.cv: is not a "
                                             "finite number"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(entries(), 0u);
}

// The writer holds itself to the reader's rules, so that no file it writes is refused later.
TEST_F(ProfileFileTest, AProfileTheReaderWouldRefuseIsNotWritten) {
    Profile p = richProfile();
    p.runs[0].memory.workspace = -4096;
    p.runs[1].layers = {p.runs[0].layers[0]};
    p.runs[1].layers[0].forwardKernels[0].grid[1] = 0;
    const fs::path file = dir / "bad.json";
    try {
        writeProfile(p, file.string());
        FAIL() << "a negative size was written";
    } catch (const ModelError& e) {
        EXPECT_EQ(std::string(e.what()), file.string() +
                                             ": cannot be written, it would not read back: "
                                             "runs[0].memory.workspace_bytes: must not be negative, got -4096");
    }
    p.runs[0].memory.workspace = 0;
    try {
        writeProfile(p, file.string());
        FAIL() << "a grid of 0 was written";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("runs[1].layers[0].forward_kernels[0].grid[1]: must be at least 1, got 0"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(entries(), 0u);
}

TEST_F(ProfileFileTest, AnUnwritablePathIsAClearErrorAndLeavesNoPartialFile) {
    const fs::path blocker = dir / "a-file";
    spit(blocker, "x");
    try {
        writeProfile(richProfile(), (blocker / "profile.json").string());
        FAIL() << "wrote below a regular file";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("profile.json: cannot be written"), std::string::npos) << e.what();
    }
    // A directory in the way: the rename fails and the temporary file is removed.
    const fs::path occupied = dir / "occupied.json";
    fs::create_directories(occupied / "inside");
    EXPECT_THROW(writeProfile(richProfile(), occupied.string()), ModelError);
    EXPECT_TRUE(fs::is_directory(occupied / "inside"));
    EXPECT_EQ(entries(), 2u);  // a-file and occupied.json, nothing else
}

TEST_F(ProfileFileTest, BrokenUtf8InANameIsReplacedNotFatal) {
    Profile p = cpuProfile();
    p.runs[0].layers[0].name = "conv\xff\xfe";
    const fs::path file = dir / "utf8.json";
    writeProfile(p, file.string());
    EXPECT_EQ(readProfile(file.string()).runs[0].layers[0].name, "conv\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
}

TEST(ProfileFileData, BadProfilesInTestDataAreRefusedWithTheExpectedMessage) {
    const fs::path dir = fs::path(TRAINSCOPE_TEST_DATA_DIR) / "bad-profiles";
    std::ifstream expected(dir / "expected.tsv");
    ASSERT_TRUE(expected) << "missing " << (dir / "expected.tsv");
    std::string line;
    int checked = 0;
    while (std::getline(expected, line)) {
        if (line.empty() || line[0] == '#') continue;
        const size_t tab = line.find('\t');
        ASSERT_NE(tab, std::string::npos) << line;
        const fs::path file = dir / line.substr(0, tab);
        SCOPED_TRACE(file.string());
        try {
            readProfile(file.string());
            ADD_FAILURE() << "accepted";
        } catch (const ModelError& e) {
            EXPECT_EQ(std::string(e.what()).rfind(file.string() + ": ", 0), 0u) << e.what();
            EXPECT_NE(std::string(e.what()).find(line.substr(tab + 1)), std::string::npos) << e.what();
        }
        ++checked;
    }
    EXPECT_GE(checked, 5);
}

// The example in docs/profile-format.md is a complete profile this reader accepts.
TEST(ProfileFileData, TheDocumentedExampleIsAValidProfile) {
    std::ifstream doc(fs::path(TRAINSCOPE_SOURCE_DIR) / "docs" / "profile-format.md");
    ASSERT_TRUE(doc);
    std::string line, example;
    bool inside = false;
    while (std::getline(doc, line)) {
        if (!inside && line.rfind("```json", 0) == 0)
            inside = true;
        else if (inside && line.rfind("```", 0) == 0)
            break;
        else if (inside)
            example += line + "\n";
    }
    ASSERT_FALSE(example.empty());
    const Profile p = profileFromJson(json::parse(example), "profile-format.md");
    ASSERT_EQ(p.runs.size(), 2u);
    EXPECT_FALSE(p.runs[1].fits);
    EXPECT_TRUE(p.environment.gpu.has_value());
    EXPECT_FALSE(p.runs[0].layers.empty());
}

Timeline sampleTimeline() {
    Timeline t;
    // The GPU stream's first span comes before any host span: host rows must still come first.
    t.spans = {{"sm90_xmma_gemm", "kernel", "gpu stream 7", 5.0, 11.75, "fc1/Gemm"},
               {"fc1/Gemm", "forward", "host", 0.0, 20.5, "fc1/Gemm"},
               {"relu", "kernel", "gpu stream 13", 17.0, 1.25, ""},
               {"optimizer step", "optimizer", "host", 30.0, 100.125, ""},
               {"elementwise", "kernel", "gpu stream 7", 40.0, 2.0, ""},
               {"data loader", "", "host thread 2", 1.0, 3.0, ""}};
    return t;
}

TEST(ProfileTrace, OneCompleteEventPerSpanOneNamedRowPerTrackHostRowsFirst) {
    const json trace = timelineToTraceJson(sampleTimeline(), "resnet18, batch 32, H100");
    EXPECT_EQ(trace["displayTimeUnit"], "ms");
    EXPECT_EQ(trace["otherData"]["title"], "resnet18, batch 32, H100");
    std::map<int, std::string> names;
    std::map<int, int> sortIndex;
    std::vector<json> spans;
    for (const json& e : trace["traceEvents"]) {
        EXPECT_EQ(e["pid"], 1);
        const int tid = e["tid"].get<int>();
        if (e["ph"] == "M" && e["name"] == "thread_name")
            names[tid] = e["args"]["name"].get<std::string>();
        else if (e["ph"] == "M" && e["name"] == "thread_sort_index")
            sortIndex[tid] = e["args"]["sort_index"].get<int>();
        else if (e["ph"] == "M")
            EXPECT_EQ(e["name"], "process_name");
        else
            spans.push_back(e);
    }
    const std::map<int, std::string> expectedNames = {
        {1, "host"}, {2, "host thread 2"}, {3, "gpu stream 7"}, {4, "gpu stream 13"}};
    EXPECT_EQ(names, expectedNames);
    for (const auto& [tid, index] : sortIndex) EXPECT_EQ(index, tid);
    EXPECT_EQ(sortIndex.size(), 4u);

    ASSERT_EQ(spans.size(), 6u);
    const Timeline t = sampleTimeline();
    for (size_t i = 0; i < spans.size(); ++i) {
        const json& e = spans[i];
        SCOPED_TRACE(t.spans[i].name);
        EXPECT_EQ(e["ph"], "X");
        EXPECT_EQ(e["name"], t.spans[i].name);
        EXPECT_EQ(e["ts"].get<double>(), t.spans[i].startUs);
        EXPECT_EQ(e["dur"].get<double>(), t.spans[i].durationUs);
        EXPECT_EQ(names[e["tid"].get<int>()], t.spans[i].track);
        EXPECT_EQ(e.contains("cat"), !t.spans[i].category.empty());
        if (!t.spans[i].category.empty()) {
            EXPECT_EQ(e["cat"], t.spans[i].category);
        }
        EXPECT_EQ(e.contains("args"), !t.spans[i].layer.empty());
        if (!t.spans[i].layer.empty()) {
            EXPECT_EQ(e["args"]["layer"], t.spans[i].layer);
        }
    }
}

TEST_F(ProfileFileTest, AWrittenTraceIsOneEventPerLineAndParsesToTheSameDocument) {
    const fs::path file = dir / "trace.json";
    writeTrace(sampleTimeline(), "title", file.string());
    const std::string text = slurp(file);
    EXPECT_EQ(json::parse(text), timelineToTraceJson(sampleTimeline(), "title"));
    // process name, 4 x (thread name, sort index), 6 spans: one line each, plus the frame.
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 15 + 3);
}

TEST_F(ProfileFileTest, ATraceWithANonFiniteTimeIsRefusedNamingTheSpan) {
    Timeline t = sampleTimeline();
    t.spans[4].durationUs = std::numeric_limits<double>::infinity();
    const fs::path file = dir / "trace.json";
    try {
        writeTrace(t, "title", file.string());
        FAIL() << "infinity was written";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("trace.json: cannot be written: span 4 (\"elementwise\")"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(fs::exists(file));
}

}  // namespace
}  // namespace ts
