// Inputs the fuzzers (tests/fuzz, docs/fuzzing.md) once broke a reader with. Each reader must
// either accept the file or refuse it with a ts::ModelError; any other exception fails the test,
// and a crash or sanitizer report fails the whole binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/scaling/kernel_measurements.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string readText(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Calls `read` on every file of tests/data/fuzz-regressions/<reader>/.
void expectAcceptedOrModelError(const std::string& reader, const std::function<void(const fs::path&)>& read) {
    const fs::path dir = fs::path(TRAINSCOPE_TEST_DATA_DIR) / "fuzz-regressions" / reader;
    if (!fs::is_directory(dir)) GTEST_SKIP() << "no regression inputs for " << reader;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        SCOPED_TRACE(f.string());
        try {
            read(f);
        } catch (const ModelError& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "not one line: " << e.what();
        } catch (const std::exception& e) {
            ADD_FAILURE() << "not a ModelError: " << e.what();
        }
    }
}

TEST(FuzzRegressions, Onnx) {
    expectAcceptedOrModelError("onnx", [](const fs::path& f) { importOnnx(f.string(), {}); });
}

TEST(FuzzRegressions, JsonModel) {
    expectAcceptedOrModelError("json_model",
                               [](const fs::path& f) { importJsonModelText(readText(f), f.filename().string()); });
}

TEST(FuzzRegressions, GpuDatabase) {
    expectAcceptedOrModelError("gpu_database",
                               [](const fs::path& f) { GpuDatabase::fromJson(readText(f), f.filename().string()); });
}

TEST(FuzzRegressions, GpuOverrides) {
    expectAcceptedOrModelError("gpu_overrides", [](const fs::path& f) {
        GpuDatabase db = GpuDatabase::builtin();
        db.applyOverrides(readText(f), f.filename().string());
    });
}

TEST(FuzzRegressions, KernelCsv) {
    expectAcceptedOrModelError("kernel_csv", [](const fs::path& f) {
        predictors::readKernelMeasurements({f.string()}, GpuDatabase::builtin());
    });
}

}  // namespace
}  // namespace ts
