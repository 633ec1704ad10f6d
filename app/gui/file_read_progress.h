#pragma once
// How far this process has read into a file it has open, for a progress bar over a reader that
// reports none (readKinetoTrace streams a trace through its own std::ifstream). On Linux the
// kernel tells the offset of every open descriptor (/proc/self/fdinfo); elsewhere, and before the
// reader has opened the file, the fraction is unknown. Plain C++ only.
#include <cstdint>
#include <string>

namespace ts::gui {

class FileReadProgress {
public:
    explicit FileReadProgress(std::string path);
    // Fraction of the file's bytes read so far, in [0, 1]; negative when unknown.
    double fraction();
    int64_t fileBytes() const { return size_; }

private:
    std::string path_;
    int64_t size_ = 0;
    int fd_ = -1;  // the reader's descriptor once found
};

}  // namespace ts::gui
