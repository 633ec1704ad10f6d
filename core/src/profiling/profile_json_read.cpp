// JSON -> Profile (docs/profile-format.md), strictly: every required field must be there with
// its type, sizes and times must not be negative, arrays must be of a sane length. Each error is
// ModelError(source, "<json path>: <problem>"), e.g. "runs[2].layers[5].forward.median_ms:
// expected a number, got string". Unknown keys are ignored, so that a later TrainScope can add
// fields without breaking this reader (a change that breaks it raises "version").
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "profile_fields.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/profile_file.h"

namespace ts {
namespace {

using nlohmann::json;
using namespace profilefile;

// Printable ASCII only, at most `max` characters: parts of the input quoted in an error message
// must not carry control characters or broken UTF-8 to a terminal.
std::string printable(const std::string& s, size_t max = 60) {
    std::string out;
    for (char c : s.substr(0, max)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return s.size() > max ? out + "..." : out;
}

// A number as the document would show it: "-1", not "-1.0".
std::string numberText(double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(int64_t(v));
    return json(v).dump();
}

// One value of the document and where it is, for messages that name the field.
class Node {
public:
    Node(const json& value, std::string path, const std::string& source)
        : value_(value), path_(std::move(path)), source_(source) {}

    [[noreturn]] void fail(const std::string& problem) const {
        throw ModelError(source_, path_.empty() ? problem : path_ + ": " + problem);
    }

    // A member that must be present (and not null).
    Node at(const char* key) const {
        std::optional<Node> n = find(key);
        if (!n) Node(json(), childPath(key), source_).fail("is missing");
        return *n;
    }
    // A member that may be absent or null.
    std::optional<Node> find(const char* key) const {
        expectObject();
        auto it = value_.find(key);
        if (it == value_.end() || it->is_null()) return std::nullopt;
        return Node(*it, childPath(key), source_);
    }

    std::vector<Node> items(size_t maxItems) const {
        if (!value_.is_array()) fail("expected a list, got " + typeName());
        if (value_.size() > maxItems)
            fail("has " + std::to_string(value_.size()) + " entries, more than the " + std::to_string(maxItems) +
                 " a profile can have");
        std::vector<Node> out;
        out.reserve(value_.size());
        for (size_t i = 0; i < value_.size(); ++i)
            out.emplace_back(value_[i], path_ + "[" + std::to_string(i) + "]", source_);
        return out;
    }

    std::string text() const {
        if (!value_.is_string()) fail("expected a string, got " + typeName());
        return value_.get<std::string>();
    }
    bool flag() const {
        if (!value_.is_boolean()) fail("expected true or false, got " + typeName());
        return value_.get<bool>();
    }
    double number() const {
        if (!value_.is_number()) fail("expected a number, got " + typeName());
        double v = value_.get<double>();
        if (!std::isfinite(v)) fail("expected a finite number");
        return v;
    }
    double nonNegative() const {
        double v = number();
        if (v < 0) fail("must not be negative, got " + numberText(v));
        return v;
    }
    int64_t integer(int64_t min, int64_t max) const {
        if (!value_.is_number_integer()) fail("expected a whole number, got " + typeName());
        if (value_.is_number_unsigned() && value_.get<uint64_t>() > uint64_t(max)) tooLarge(max);
        int64_t v = value_.get<int64_t>();
        if (v > max) tooLarge(max);
        if (v < min)
            fail(min == 0 ? "must not be negative, got " + std::to_string(v)
                          : "must be at least " + std::to_string(min) + ", got " + std::to_string(v));
        return v;
    }
    int intValue(int min = 0) const { return int(integer(min, kMaxInt)); }
    uint64_t unsignedValue() const {
        if (value_.is_number_unsigned()) return value_.get<uint64_t>();
        return uint64_t(integer(0, std::numeric_limits<int64_t>::max()));
    }

    // Conveniences for members.
    std::string text(const char* key) const { return at(key).text(); }
    std::string optionalText(const char* key) const {
        std::optional<Node> n = find(key);
        return n ? n->text() : std::string();
    }
    bool flag(const char* key) const { return at(key).flag(); }
    double nonNegative(const char* key) const { return at(key).nonNegative(); }
    int intValue(const char* key, int min = 0) const { return at(key).intValue(min); }

    const std::string& path() const { return path_; }

private:
    std::string childPath(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
    std::string typeName() const { return value_.type_name(); }
    void expectObject() const {
        if (!value_.is_object()) fail("expected an object, got " + typeName());
    }
    [[noreturn]] void tooLarge(int64_t max) const { fail("is too large (at most " + std::to_string(max) + ")"); }

    const json& value_;
    std::string path_;
    const std::string& source_;
};

TimingStat readTiming(const Node& n) {
    TimingStat t;
    for (const auto& f : kTimingFields) t.*f.member = n.nonNegative(f.key);
    t.repeats = n.intValue("repeats");
    if (t.repeats > 0 && !(t.minMs <= t.medianMs && t.medianMs <= t.maxMs))
        n.fail("expected min_ms <= median_ms <= max_ms, got " + numberText(t.minMs) + ", " + numberText(t.medianMs) +
               ", " + numberText(t.maxMs));
    return t;
}

void readDims(const Node& n, int (&dims)[3]) {
    std::vector<Node> items = n.items(3);
    if (items.size() != 3) n.fail("expected 3 numbers (x, y, z), got " + std::to_string(items.size()));
    for (int i = 0; i < 3; ++i) dims[i] = items[i].intValue(1);
}

std::vector<KernelRecord> readKernels(const std::optional<Node>& list) {
    std::vector<KernelRecord> out;
    if (!list) return out;
    for (const Node& n : list->items(kMaxKernelsPerPass)) {
        KernelRecord k;
        k.name = n.text("name");
        readDims(n.at("grid"), k.grid);
        readDims(n.at("block"), k.block);
        for (const auto& f : kKernelIntFields) k.*f.member = n.intValue(f.key);
        k.durationUs = n.nonNegative("duration_us");
        k.launches = n.intValue("launches", 1);
        k.tensorCore = n.flag("tensor_core");
        out.push_back(std::move(k));
    }
    return out;
}

LayerProfile readLayer(const Node& n) {
    LayerProfile l;
    l.op = n.intValue("op", -1);
    l.name = n.text("name");
    l.type = n.text("type");
    l.modulePath = n.text("module_path");
    for (const Node& d : n.at("output_shape").items(size_t(limits::kMaxRank)))
        l.outputShape.push_back(d.integer(0, limits::kMaxDimValue));
    l.forward = readTiming(n.at("forward"));
    l.hasBackward = n.flag("has_backward");
    if (std::optional<Node> b = n.find("backward")) l.backward = readTiming(*b);
    l.savedBytes = n.nonNegative("saved_bytes");
    l.outputBytes = n.nonNegative("output_bytes");
    l.forwardKernels = readKernels(n.find("forward_kernels"));
    l.backwardKernels = readKernels(n.find("backward_kernels"));
    l.note = n.optionalText("note");
    return l;
}

ProfileRun readRun(const Node& n) {
    ProfileRun r;
    r.batch = n.at("batch").integer(1, limits::kMaxDimValue);
    r.fits = n.flag("fits");
    r.error = n.optionalText("error");
    r.complete = n.flag("complete");
    r.wallSeconds = n.nonNegative("wall_seconds");
    r.iteration = readTiming(n.at("iteration"));
    for (const Node& part : n.at("parts").items(kMaxParts))
        // A residual share ("unattributed") is negative when the layers measured one by one add
        // up to more than the whole iteration, so a part may be below zero.
        r.parts.push_back({part.text("name"), part.at("ms").number()});
    Node memory = n.at("memory");
    for (const auto& f : kMemoryFields) r.memory.*f.member = memory.nonNegative(f.key);
    for (const Node& layer : n.at("layers").items(size_t(limits::kMaxOperations))) r.layers.push_back(readLayer(layer));
    return r;
}

void readComputeCapability(const Node& n, DeviceProperties& d) {
    const std::string cc = n.text();
    const size_t dot = cc.find('.');
    auto digits = [](const std::string& s) {
        return !s.empty() && s.size() <= 3 && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (dot == std::string::npos || !digits(cc.substr(0, dot)) || !digits(cc.substr(dot + 1)))
        n.fail("expected \"MAJOR.MINOR\" such as \"9.0\", got \"" + printable(cc) + "\"");
    d.ccMajor = std::stoi(cc.substr(0, dot));
    d.ccMinor = std::stoi(cc.substr(dot + 1));
}

DeviceProperties readDevice(const Node& n) {
    DeviceProperties d;
    for (const auto& f : kDeviceTextFields) d.*f.member = n.text(f.key);
    readComputeCapability(n.at("compute_capability"), d);
    d.totalMemoryBytes = n.at("total_memory_bytes").unsignedValue();
    for (const auto& f : kDeviceIntFields) d.*f.member = n.intValue(f.key);
    d.eccEnabled = n.flag("ecc_enabled");
    return d;
}

ProfileEnvironment readEnvironment(const Node& n) {
    ProfileEnvironment e;
    e.device = n.text("device");
    e.deviceName = n.text("device_name");
    if (std::optional<Node> gpu = n.find("gpu")) e.gpu = readDevice(*gpu);
    e.cpuThreads = n.intValue("cpu_threads");
    e.host = n.text("host");
    e.startedAt = n.text("started_at");
    Node software = n.at("software");
    for (const auto& f : kSoftwareFields) e.software.*f.member = software.optionalText(f.key);
    return e;
}

ProfileScenario readScenario(const Node& n) {
    ProfileScenario s;
    for (const auto& f : kScenarioTextFields) s.*f.member = n.text(f.key);
    s.seq = n.at("seq").integer(0, limits::kMaxDimValue);
    s.cudnnBenchmark = n.flag("cudnn_benchmark");
    return s;
}

void checkFormatAndVersion(const Node& root, const json& j) {
    auto format = j.find("format");
    if (format == j.end() || *format != json(kFormat)) {
        std::string found = format == j.end()     ? "there is no \"format\""
                            : format->is_string() ? "found \"" + printable(format->get<std::string>()) + "\""
                                                  : std::string("found a value of type ") + format->type_name();
        root.fail(std::string("not a TrainScope profile: expected \"format\": \"") + kFormat + "\", " + found);
    }
    const Node version = root.at("version");
    const int64_t v = version.integer(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    const std::string reads = "this TrainScope reads profile format version " + std::to_string(Profile::kFormatVersion);
    if (v > Profile::kFormatVersion)
        version.fail("the file is format version " + std::to_string(v) + ", written by a newer TrainScope; " + reads +
                     " (update TrainScope to read it)");
    if (v < Profile::kFormatVersion)
        version.fail("there is no profile format version " + std::to_string(v) + "; " + reads);
}

}  // namespace

Profile profileFromJson(const json& j, const std::string& source) {
    const Node root(j, "", source);
    if (!j.is_object())
        root.fail(std::string("not a TrainScope profile: expected a JSON object, got ") + j.type_name());
    checkFormatAndVersion(root, j);
    Profile p;
    p.formatVersion = Profile::kFormatVersion;
    p.complete = root.flag("complete");
    p.incompleteReason = root.optionalText("incomplete_reason");
    p.environment = readEnvironment(root.at("environment"));
    p.scenario = readScenario(root.at("scenario"));
    const Node kernels = root.at("kernels");
    p.kernelsRecorded = kernels.flag("recorded");
    p.kernelsMissingReason = kernels.optionalText("missing_reason");
    if (std::optional<Node> notes = root.find("notes"))
        for (const Node& note : notes->items(kMaxNotes)) p.notes.push_back(note.text());
    for (const Node& run : root.at("runs").items(kMaxRuns)) p.runs.push_back(readRun(run));
    return p;
}

}  // namespace ts
