#include "file_read_progress.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace ts::gui {

namespace fs = std::filesystem;

FileReadProgress::FileReadProgress(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    const auto size = fs::file_size(path_, ec);
    if (!ec) size_ = int64_t(size);
}

namespace {

// The "pos:" line of /proc/self/fdinfo/FD; -1 when it cannot be read.
int64_t descriptorOffset(int fd) {
    std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
    std::string key;
    int64_t value = -1;
    while (info >> key >> value)
        if (key == "pos:") return value;
    return -1;
}

}  // namespace

double FileReadProgress::fraction() {
    if (size_ <= 0) return -1;
    std::error_code ec;
    const fs::path target = fs::weakly_canonical(path_, ec);
    if (ec) return -1;
    if (fd_ >= 0) {
        // The descriptor may have been closed and its number reused: check it still names the file.
        const fs::path now = fs::read_symlink("/proc/self/fd/" + std::to_string(fd_), ec);
        if (ec || now != target) fd_ = -1;
    }
    if (fd_ < 0) {
        for (const fs::directory_entry& e : fs::directory_iterator("/proc/self/fd", ec)) {
            std::error_code linkError;
            if (fs::read_symlink(e.path(), linkError) == target && !linkError) {
                fd_ = std::stoi(e.path().filename().string());
                break;
            }
        }
    }
    if (fd_ < 0) return -1;
    const int64_t offset = descriptorOffset(fd_);
    if (offset < 0) return -1;
    return std::min(1.0, double(offset) / double(size_));
}

}  // namespace ts::gui
