// Users add or override GPUs and prices in files of the database's format, without rebuilding;
// malformed files are refused with a message naming the file, the entry and the problem.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/gpu_json.h"
#include "trainscope/core/gpu_user_file.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string userFile(const std::string& gpusJson, const std::string& extra = "") {
    return R"({"format": "trainscope-gpu-database", "version": 1,)" + extra + R"( "gpus": )" + gpusJson + "}";
}

class TempDir {
public:
    TempDir() : path_(fs::temp_directory_path() / ("trainscope-test-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(counter_++))) {
        fs::create_directories(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    std::string write(const std::string& name, const std::string& text) const {
        fs::create_directories((path_ / name).parent_path());
        std::ofstream(path_ / name) << text;
        return (path_ / name).string();
    }
    std::string path() const { return path_.string(); }

private:
    fs::path path_;
    static inline int counter_ = 0;
};

// Sets an environment variable for the scope of a test.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(GpuUserFiles, AUserPriceIsWrittenKeepingTheRestOfTheFileAndCanBeRemoved) {
    TempDir dir;
    const std::string path = dir.write("gpus.json", userFile(R"([{"id": "t4", "sms": 41}])"));
    setUserPrice(path, "h100-sxm", 1.5, "2026-11-25");
    GpuDatabase db = GpuDatabase::builtin();
    db.applyOverrideFile(path);
    const Price* p = db.get("h100-sxm").cheapestPrice();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->usdPerGpuHour, 1.5);
    EXPECT_EQ(p->date, "2026-11-25");
    EXPECT_EQ(db.sources().count(kUserPriceSource), 1u);
    EXPECT_EQ(*db.get("t4").sms, 41);  // the file's other entry is kept
    setUserPrice(path, "h100-sxm", std::nullopt, "2026-11-25");
    GpuDatabase back = GpuDatabase::builtin();
    back.applyOverrideFile(path);
    EXPECT_EQ(back.get("h100-sxm").prices.size(), GpuDatabase::builtin().get("h100-sxm").prices.size());
    EXPECT_EQ(*back.get("t4").sms, 41);
    // A file that is not a GPU file is refused and left alone.
    const std::string other = dir.write("other.json", R"({"hello": 1})");
    EXPECT_THROW(setUserPrice(other, "t4", 1.0, "2026-11-25"), ModelError);
    std::ifstream in(other);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), R"({"hello": 1})");
    // A new file is created, directories included.
    const std::string fresh = dir.path() + "/sub/gpus.json";
    setUserPrice(fresh, "l4", 0.6, "2026-11-25");
    GpuDatabase created = GpuDatabase::builtin();
    created.applyOverrideFile(fresh);
    EXPECT_EQ(created.get("l4").cheapestPrice()->usdPerGpuHour, 0.6);
}

TEST(GpuUserFiles, OverrideChangesOnlyTheGivenFieldsAndReplacesPrices) {
    GpuDatabase db = GpuDatabase::builtin();
    const GpuSpec before = *db.matchDevice("NVIDIA H100 80GB HBM3");
    db.applyOverrides(userFile(R"([{"id": ")" + before.id + R"(", "memory_bandwidth_gbs": 3000,
        "tensor_tflops": {"bf16": {"value": 900, "source": "my-lab", "note": "our clocks"}},
        "prices": [{"provider": "MyCloud", "usd_per_gpu_hour": 2.10, "source": "my-lab", "date": "2026-11"}]}])",
                                   R"( "sources": {"my-lab": {"title": "our measurements", "url": "https://lab.example"}},)"),
                          "/home/u/my-gpus.json");
    const GpuSpec& after = *db.matchDevice("NVIDIA H100 80GB HBM3");
    EXPECT_EQ(*after.memoryBandwidthGBs, 3000);
    EXPECT_EQ(after.memoryBandwidthGBs.source, "/home/u/my-gpus.json");  // a bare number is sourced to the file
    EXPECT_EQ(*after.peakTflops(ComputePrecision::Bf16), 900);
    EXPECT_EQ(after.peakTflops(ComputePrecision::Bf16).source, "my-lab");
    EXPECT_EQ(*after.peakTflops(ComputePrecision::Fp16), *before.peakTflops(ComputePrecision::Fp16));  // untouched
    EXPECT_EQ(*after.sms, *before.sms);
    ASSERT_EQ(after.prices.size(), 1u);
    EXPECT_EQ(after.prices[0].provider, "MyCloud");
    EXPECT_NE(after.origin.find("/home/u/my-gpus.json"), std::string::npos);
    EXPECT_EQ(db.sources().at("my-lab").url, "https://lab.example");
    EXPECT_EQ(db.gpus().size(), GpuDatabase::builtin().gpus().size());
}

TEST(GpuUserFiles, ACalibrationWrittenForAKnownGpuIsReadBack) {
    // What `calibrate` writes for a GPU the database knows: only its id and the calibration.
    CalibrationResult r;
    r.device.name = "NVIDIA H100 80GB HBM3";
    r.driverVersion = 13000;
    r.runtimeVersion = 13000;
    r.date = "2026-11-21T10:00:00Z";
    r.measurements = {{"dram_copy", 2900.5, "GB/s", 0.004, 20, "1 GiB"},
                      {"tensor_fp8", std::nullopt, "TFLOP/s", 0, 0, "cuBLASLt found no algorithm"}};
    nlohmann::json calibration = calibrationToJson(r);
    calibration["versus_datasheet"] = {{"dram_copy", {{"datasheet", 3350}, {"ratio", 0.866}}}};
    nlohmann::json file = {{"format", kGpuDatabaseFormat}, {"version", kGpuDatabaseVersion},
                           {"gpus", {{{"id", "h100-sxm"}, {"calibration", calibration}}}}};
    GpuDatabase db = GpuDatabase::builtin();
    db.applyOverrides(file.dump(2), "calibration.json");
    const GpuSpec& g = *db.find("h100-sxm");
    ASSERT_TRUE(g.calibration.has_value());
    EXPECT_EQ(g.calibration->measured.at("dram_copy"), 2900.5);
    EXPECT_EQ(g.calibration->units.at("dram_copy"), "GB/s");
    EXPECT_EQ(g.calibration->measured.count("tensor_fp8"), 0u);  // not measured, not invented
    EXPECT_EQ(g.calibration->date, "2026-11-21T10:00:00Z");
    EXPECT_EQ(*g.memoryBandwidthGBs, 3350);  // the datasheet figure stays beside it
}

TEST(GpuUserFiles, NewGpuIsAdded) {
    GpuDatabase db = GpuDatabase::builtin();
    db.applyOverrides(userFile(R"([{"id": "rtx-5090", "name": "GeForce RTX 5090", "device_names": ["NVIDIA GeForce RTX 5090"],
        "compute_capability": "9.0", "segment": "geforce", "sms": 170, "memory_gb": 32,
        "memory_bandwidth_gbs": 1792, "fp32_tflops": 104.8, "tensor_tflops": {"bf16": 209.5}}])"),
                      "mine.json");
    const GpuSpec* g = db.matchDevice("NVIDIA GeForce RTX 5090");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->id, "rtx-5090");
    EXPECT_EQ(*g->sms, 170);
    EXPECT_NEAR(*g->ridgePoint(ComputePrecision::Bf16), 209.5e12 / 1792e9, 1e-6);
    EXPECT_EQ(g->limits.maxThreadsPerSm, 2048);
    EXPECT_EQ(db.gpus().size(), GpuDatabase::builtin().gpus().size() + 1);
}

TEST(GpuUserFiles, LoadReadsTheConfigFileTheEnvironmentAndExtraFilesInOrder) {
    TempDir dir;
    const std::string t4 = GpuDatabase::builtin().matchDevice("Tesla T4")->id;
    auto price = [&](double usd) {
        return userFile(R"([{"id": ")" + t4 + R"(", "prices": [{"provider": "P", "usd_per_gpu_hour": )" +
                        std::to_string(usd) + R"(, "source": "x", "date": "2026"}]}])",
                        R"( "sources": {"x": {"title": "x", "url": "https://x"}},)");
    };
    dir.write("config/trainscope/gpus.json", price(0.30));
    ScopedEnv xdg("XDG_CONFIG_HOME", dir.path() + "/config");
    EXPECT_NEAR(GpuDatabase::load().find(t4)->prices.at(0).usdPerGpuHour, 0.30, 1e-9);
    {
        ScopedEnv env("TRAINSCOPE_GPU_DB", dir.write("env.json", price(0.40)));
        EXPECT_NEAR(GpuDatabase::load().find(t4)->prices.at(0).usdPerGpuHour, 0.40, 1e-9);
        GpuDatabase withExtra = GpuDatabase::load({dir.write("extra.json", price(0.50))});
        EXPECT_NEAR(withExtra.find(t4)->prices.at(0).usdPerGpuHour, 0.50, 1e-9);
        EXPECT_EQ(withExtra.appliedFiles().size(), 3u);
    }
    EXPECT_THROW(GpuDatabase::load({dir.path() + "/missing.json"}), ModelError);
}

struct Malformed {
    const char* name;
    std::string text;
    const char* fragment;
};

class GpuUserFilesMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(GpuUserFilesMalformed, IsRefusedWithAClearMessage) {
    const Malformed& m = GetParam();
    GpuDatabase db = GpuDatabase::builtin();
    const size_t before = db.gpus().size();
    try {
        db.applyOverrides(m.text, "broken.json");
        FAIL() << "accepted: " << m.text;
    } catch (const ModelError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("broken.json"), std::string::npos) << what;
        EXPECT_NE(what.find(m.fragment), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
    }
    EXPECT_EQ(db.gpus().size(), before);  // a refused file changes nothing
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuUserFilesMalformed,
    ::testing::Values(
        Malformed{"not_json", "{\"format\": ", "not valid JSON"},
        Malformed{"not_object", "[1, 2]", "JSON object"},
        Malformed{"wrong_format", R"({"format": "something-else", "version": 1})", "not a GPU database"},
        Malformed{"wrong_version", R"({"format": "trainscope-gpu-database", "version": 7})", "version"},
        Malformed{"gpus_not_list", R"({"format": "trainscope-gpu-database", "version": 1, "gpus": {}})", "must be a list"},
        Malformed{"missing_id", userFile(R"([{"name": "x"}])"), "id"},
        Malformed{"new_gpu_missing_fields", userFile(R"([{"id": "new-gpu", "name": "New", "compute_capability": "9.0"}])"), "sms"},
        Malformed{"typo_field", userFile(R"([{"id": "t4", "memory_bandwith_gbs": 300}])"), "memory_bandwith_gbs"},
        Malformed{"negative", userFile(R"([{"id": "t4", "memory_bandwidth_gbs": -5}])"), ">= 0"},
        Malformed{"string_number", userFile(R"([{"id": "t4", "sms": "forty"}])"), "expected a number"},
        Malformed{"unknown_source", userFile(R"([{"id": "t4", "sms": {"value": 40, "source": "nowhere"}}])"), "nowhere"},
        Malformed{"value_without_reason", userFile(R"([{"id": "t4", "sms": {"source": "x"}}])"), "no value"},
        Malformed{"unknown_cc", userFile(R"([{"id": "n", "name": "N", "compute_capability": "4.2", "sms": 1,
            "memory_gb": 1, "memory_bandwidth_gbs": 1, "fp32_tflops": 1}])"), "4.2"},
        Malformed{"bad_cc", userFile(R"([{"id": "t4", "compute_capability": "eight"}])"), "MAJOR.MINOR"},
        Malformed{"bad_price", userFile(R"([{"id": "t4", "prices": [{"provider": "p", "usd_per_gpu_hour": 0,
            "source": "x", "date": "2026"}]}])", R"( "sources": {"x": {"title": "x"}},)"), "usd_per_gpu_hour"},
        Malformed{"duplicate_device_name", userFile(R"([{"id": "n", "name": "N", "device_names": ["Tesla T4"],
            "compute_capability": "7.5", "sms": 1, "memory_gb": 1, "memory_bandwidth_gbs": 1, "fp32_tflops": 1}])"),
                  "Tesla T4"},
        Malformed{"unsupported_non_precision", userFile(R"([{"id": "t4", "sms": {"value": null, "unsupported": true}}])"),
                  "only a precision"}),
    [](const ::testing::TestParamInfo<Malformed>& info) { return std::string(info.param.name); });

TEST(GpuUserFiles, BuiltInDatabaseRejectsAMalformedReplacement) {
    EXPECT_THROW(GpuDatabase::fromJson("{}", "x.json"), ModelError);
    EXPECT_THROW(GpuDatabase::fromJson(R"({"format": "trainscope-gpu-database", "version": 1,
        "gpus": [{"id": "a", "name": "A", "compute_capability": "8.0", "sms": {"value": 1, "source": "s"},
        "memory_gb": 1, "memory_bandwidth_gbs": 1, "fp32_tflops": 1}]})", "x.json"),
                 ModelError);  // no architectures, no sources
}

}  // namespace
}  // namespace ts
