#pragma once
// Shared by the libFuzzer targets. The readers of ONNX models and kernel-measurement CSV files
// take paths, so those targets write each input to a per-process temporary file and go through
// exactly the code a user's file goes through.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ts::fuzz {

inline std::string& tempPath() {
    static std::string path;
    return path;
}

// A file in $TMPDIR (or /tmp) named after this process, overwritten on every call and removed
// when the fuzzer exits normally.
inline const std::string& writeTempFile(const uint8_t* data, size_t size, const char* extension) {
    std::string& path = tempPath();
    if (path.empty()) {
        const char* dir = std::getenv("TMPDIR");
        path = std::string(dir && *dir ? dir : "/tmp") + "/trainscope-fuzz-" + std::to_string(::getpid()) + extension;
        std::atexit([] { std::remove(tempPath().c_str()); });
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();  // the harness cannot work; not a finding in the reader
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path;
}

}  // namespace ts::fuzz
