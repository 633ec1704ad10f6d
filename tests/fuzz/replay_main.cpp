// Replays files through a fuzz target's LLVMFuzzerTestOneInput without libFuzzer: the driver the
// ordinary (g++) build links with each target (fuzz_replay_TARGET), so that ctest feeds every seed
// of tests/fuzz/corpus/TARGET and every old finding of tests/data/fuzz-regressions/TARGET to its
// reader on every run (docs/fuzzing.md). Under scripts/sanitize.sh the same replay runs with ASan
// and UBSan.
//
//   fuzz_replay_TARGET FILE_OR_DIRECTORY...
//
// Directories are read recursively, files in name order. Exit status 0 when every input went
// through; 1, naming the input, when one let an exception other than ts::ModelError escape (the
// targets catch only that one) or when a path cannot be read. A crash is a crash, as in libFuzzer.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: " << argv[0] << " FILE_OR_DIRECTORY...\n";
        return 2;
    }
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg = argv[i];
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<fs::path> found;
            for (const auto& e : fs::recursive_directory_iterator(arg, ec))
                if (e.is_regular_file()) found.push_back(e.path());
            if (ec) {
                std::cerr << arg.string() << ": cannot list: " << ec.message() << "\n";
                return 1;
            }
            std::sort(found.begin(), found.end());
            files.insert(files.end(), found.begin(), found.end());
        } else if (fs::is_regular_file(arg, ec)) {
            files.push_back(arg);
        } else {
            std::cerr << arg.string() << ": no such file or directory\n";
            return 1;
        }
    }
    const auto start = std::chrono::steady_clock::now();
    size_t bytes = 0;
    for (const fs::path& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) {
            std::cerr << f.string() << ": cannot read\n";
            return 1;
        }
        const std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        bytes += data.size();
        try {
            LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
        } catch (const std::exception& e) {
            std::cerr << f.string() << ": the reader let an exception escape: " << e.what() << "\n";
            return 1;
        } catch (...) {
            std::cerr << f.string() << ": the reader let a non-standard exception escape\n";
            return 1;
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "replayed " << files.size() << " inputs (" << bytes << " bytes) in " << seconds << " s\n";
    return 0;
}
