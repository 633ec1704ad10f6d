// Files are replaced whole or not at all: a writer that fails half-way leaves the old file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "trainscope/core/atomic_file.h"
#include "trainscope/core/errors.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct AtomicFileTest : ::testing::Test {
    fs::path dir = fs::temp_directory_path() / ("trainscope-atomic-" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }
    size_t entries() const { return size_t(std::distance(fs::directory_iterator(dir), fs::directory_iterator())); }
};

TEST_F(AtomicFileTest, WritesAndReplaces) {
    const fs::path file = dir / "sub" / "profile.json";
    writeFileAtomically(file.string(), "first");
    EXPECT_EQ(slurp(file), "first");
    writeFileAtomically(file.string(), "second, longer");
    EXPECT_EQ(slurp(file), "second, longer");
    EXPECT_EQ(size_t(std::distance(fs::directory_iterator(file.parent_path()), fs::directory_iterator())), 1u);
}

TEST_F(AtomicFileTest, AnInterruptedWriteLeavesTheOldFileAndNoTemporary) {
    const fs::path file = dir / "gpus.json";
    writeFileAtomically(file.string(), "good content");
    EXPECT_THROW(writeFileAtomically(file.string(),
                                     [](std::ostream& out) {
                                         out << std::string(1 << 20, 'x');  // half a file, then the writer fails
                                         throw std::runtime_error("interrupted");
                                     }),
                 std::runtime_error);
    EXPECT_EQ(slurp(file), "good content");
    EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, AnUnwritableDirectoryIsAClearError) {
    const fs::path blocker = dir / "not-a-directory";
    writeFileAtomically(blocker.string(), "x");
    try {
        writeFileAtomically((blocker / "out.json").string(), "y");
        FAIL() << "expected a ModelError";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("out.json"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cannot be written"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(blocker), "x");
}

}  // namespace
}  // namespace ts
