// Profile files on disk: read with a size limit and a one-line error for anything that is not a
// profile, written atomically so that an interrupted write never leaves half a file.
#include "trainscope/core/profile_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "profile_json.h"
#include "trainscope/core/atomic_file.h"
#include "trainscope/core/errors.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

// Far beyond any real profile; a bigger file is a mistake, and parsing it would take several
// times its size in memory.
constexpr std::uintmax_t kMaxProfileBytes = std::uintmax_t(512) << 20;

std::string readProfileText(const std::string& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw ModelError(path, "no such file");
    if (fs::is_directory(status)) throw ModelError(path, "is a directory, not a profile file");
    if (!fs::is_regular_file(status)) throw ModelError(path, "is not a regular file, so not a profile file");
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) throw ModelError(path, "cannot read the file size (" + ec.message() + ")");
    if (size == 0) throw ModelError(path, "the file is empty, not a profile");
    if (size > kMaxProfileBytes)
        throw ModelError(path, "the file is " + std::to_string(size >> 20) +
                                   " MiB, larger than the 512 MiB a profile file may have");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ModelError(path, std::string("cannot be read: ") + std::strerror(errno));
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad()) throw ModelError(path, "cannot be read (I/O error)");
    return text.str();
}

// The parser's message with its "[json.exception.parse_error.101] " prefix removed and any
// byte of the input it quotes made printable.
std::string parserMessage(const std::string& what) {
    std::string message = what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos
                              ? what.substr(what.find("] ") + 2)
                              : what;
    for (char& c : message)
        if (c < 0x20 || c >= 0x7f) c = '?';
    return message;
}

// Chrome's trace viewer and Perfetto take one event per line as well as anything else; it keeps
// large traces readable with grep and diff.
void streamTrace(const nlohmann::ordered_json& trace, std::ostream& out) {
    const auto dump = [](const nlohmann::ordered_json& j) {
        return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    };
    out << "{\"traceEvents\": [\n";
    const auto& events = trace["traceEvents"];
    for (size_t i = 0; i < events.size(); ++i) out << dump(events[i]) << (i + 1 < events.size() ? ",\n" : "\n");
    out << "],\n\"displayTimeUnit\": " << dump(trace["displayTimeUnit"])
        << ",\n\"otherData\": " << dump(trace["otherData"]) << "}\n";
}

// JSON text -> document; a ModelError naming `source` when it is not JSON (truncated, binary)
// or nests deeper than limits::kMaxNesting.
nlohmann::json parseProfileText(const std::string& text, const std::string& source) {
    try {
        // Refuse deep nesting while parsing, before it costs memory or stack.
        auto depthGuard = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
            if (depth > limits::kMaxNesting)
                throw ModelError(
                    "", "JSON nesting deeper than " + std::to_string(limits::kMaxNesting) + " levels, not a profile");
            return true;
        };
        return nlohmann::json::parse(text, depthGuard);
    } catch (const ModelError& e) {
        throw ModelError(source, e.problem());
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
        throw ModelError(source, "not valid JSON (a truncated or damaged file?): " + parserMessage(e.what()));
    }
}

}  // namespace

bool isProfileFile(const std::string& path) {
    if (path.size() < 5 || path.compare(path.size() - 5, 5, ".json") != 0) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::string head(256, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    return head.find("\"trainscope-profile\"") != std::string::npos;
}

Profile readProfile(const std::string& path) {
    return profileFromJson(parseProfileText(readProfileText(path), path), path);
}

void writeProfile(const Profile& p, const std::string& path) {
    nlohmann::ordered_json doc;
    try {
        doc = profilefile::orderedProfileJson(p);
    } catch (const std::invalid_argument& e) {
        throw ModelError(path, std::string("cannot be written: ") + e.what());
    }
    // Whatever is written must read back: a figure the reader refuses (a negative size, a kernel
    // grid of 0) is reported now, naming the field, rather than leaving a file nobody can open.
    try {
        profileFromJson(nlohmann::json(doc), "");
    } catch (const ModelError& e) {
        throw ModelError(path, "cannot be written, it would not read back: " + e.problem());
    }
    // Strings that are not valid UTF-8 (a kernel name, a host name) are written with U+FFFD in
    // place of the broken bytes rather than refusing the whole profile.
    const std::string text = doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    writeFileAtomically(path, text + "\n");
}

void writeTrace(const Timeline& t, const std::string& title, const std::string& path) {
    nlohmann::ordered_json trace;
    try {
        trace = profilefile::orderedTraceJson(t, title);
    } catch (const std::invalid_argument& e) {
        throw ModelError(path, std::string("cannot be written: ") + e.what());
    }
    writeFileAtomically(path, [&](std::ostream& out) { streamTrace(trace, out); });
}

}  // namespace ts
