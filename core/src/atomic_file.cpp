#include "trainscope/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "trainscope/core/errors.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

// fsync through a plain descriptor: std::ofstream cannot flush to the disk itself.
bool syncToDisk(const fs::path& p) {
    int fd = ::open(p.c_str(), O_RDONLY);
    if (fd < 0) return false;
    bool ok = ::fsync(fd) == 0;
    ::close(fd);
    return ok;
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    fs::create_directories(dir, ec);
    std::random_device random;
    const fs::path tmp = dir / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                                std::to_string(random()));
    struct RemoveOnFailure {
        const fs::path& p;
        bool keep = false;
        ~RemoveOnFailure() {
            std::error_code ignored;
            if (!keep) fs::remove(p, ignored);
        }
    } guard{tmp};
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw ModelError(path, std::string("cannot be written: ") + std::strerror(errno));
        write(out);
        out.flush();
        if (!out) throw ModelError(path, "cannot be written (disk full?)");
    }
    if (!syncToDisk(tmp)) throw ModelError(path, std::string("cannot be written: ") + std::strerror(errno));
    fs::rename(tmp, target, ec);
    if (ec) throw ModelError(path, "cannot be written: " + ec.message());
    guard.keep = true;
    syncToDisk(dir);  // make the rename itself durable; best effort
}

void writeFileAtomically(const std::string& path, const std::string& content) {
    writeFileAtomically(path, [&](std::ostream& out) { out << content; });
}

}  // namespace ts
