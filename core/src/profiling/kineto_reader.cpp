// The streaming pass over a Kineto trace: an inflating stream buffer (zlib, gzip or plain) under
// nlohmann-json's SAX parser, and a SAX handler that keeps one compact record per event of the
// categories TrainScope uses. The document is never built: memory is the kept records.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_set>

#include "inflating_buffer.h"
#include "kineto_raw.h"
#include "trainscope/core/errors.h"

namespace ts {
namespace kineto {
namespace {

// One event's fields as they stream past; reset for every event.
struct PendingEvent {
    std::string ph, cat, name, pid, tid;
    std::optional<double> ts, dur;
    int64_t correlation = -1, device = -1, stream = 0;
    int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    int64_t registers = 0, sharedMemory = 0;
    double blocksPerSm = -1, warpsPerSm = -1, occupancy = -1, bytes = 0;
    std::string inputDims, inputTypes, moduleHierarchy, collective, dtype;
    int64_t inElements = 0, outElements = 0, groupSize = 0;
    bool hasInputDims = false, hasInputTypes = false;
    std::string argProblem;  // the first argument of a wrong type or out of range
    void reset() {           // keeps the strings' capacity: one event after another reuses them
        for (std::string* s : {&ph, &cat, &name, &pid, &tid, &inputDims, &inputTypes, &moduleHierarchy, &collective,
                               &dtype, &argProblem})
            s->clear();
        ts.reset();
        dur.reset();
        correlation = device = -1;
        stream = registers = sharedMemory = inElements = outElements = groupSize = 0;
        for (int i = 0; i < 3; ++i) grid[i] = block[i] = 0;
        blocksPerSm = warpsPerSm = occupancy = -1;
        bytes = 0;
        hasInputDims = hasInputTypes = false;
    }
};

using Json = nlohmann::json;

// Whether a JSON integer held as a double converts to int64_t defined (2^63 is 9.22e18).
bool fitsInt64(double x) {
    return std::abs(x) < 9.2e18;
}

class TraceSax : public nlohmann::json_sax<Json> {
public:
    TraceSax(RawTrace& raw, std::string source) : raw_(raw), source_(std::move(source)) {}

    bool null() override { return scalar(Value{Value::Null}); }
    bool boolean(bool v) override { return scalar(Value{Value::Number, v ? 1.0 : 0.0}); }
    bool number_integer(number_integer_t v) override { return scalar(Value{Value::Number, double(v), true}); }
    bool number_unsigned(number_unsigned_t v) override { return scalar(Value{Value::Number, double(v), true}); }
    bool number_float(number_float_t v, const string_t&) override { return scalar(Value{Value::Number, v}); }
    bool string(string_t& v) override {
        if (v.size() > tracelimits::kMaxStringBytes) fail("holds a string longer than 1 MB");
        Value value{Value::String};
        value.text = &v;
        return scalar(value);
    }
    bool binary(binary_t&) override { return scalar(Value{Value::Null}); }

    bool start_object(std::size_t) override { return open(false); }
    bool start_array(std::size_t) override { return open(true); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        if (capture_) {
            captureText(Json(k).dump(-1, ' ', false, Json::error_handler_t::replace) + ":");
            return true;
        }
        if (depth_ == 1)
            rootKey_ = k;
        else if (depth_ == eventDepth_)
            eventKey_ = k;
        else if (depth_ == argsDepth_) {
            argKey_ = k;
            argUsed_ = usedArgs().count(k) > 0;
        } else if (depth_ == deviceDepth_)
            deviceKey_ = k;
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
        std::string what = e.what();
        const size_t colon = what.find("] ");
        if (colon != std::string::npos) what = what.substr(colon + 2);
        throw ModelError(source_, "not valid JSON near byte " + std::to_string(position) +
                                      " (a truncated or damaged file?): " + what);
    }

    void finish() {
        if (!raw_.sawTraceEvents) fail("is not a PyTorch profiler trace: it has no \"traceEvents\" array");
    }

private:
    struct Value {
        enum Kind { Null, Number, String } kind = Null;
        double number = 0;
        bool integral = false;
        std::string* text = nullptr;
    };

    [[noreturn]] void fail(const std::string& problem) const { throw ModelError(source_, problem); }
    std::string where() const {
        return "event " + std::to_string(eventNumber_) + (p_.name.empty() ? "" : " (\"" + shortName() + "\")");
    }
    std::string shortName() const { return p_.name.size() > 60 ? p_.name.substr(0, 57) + "..." : p_.name; }

    bool open(bool array) {
        if (++depth_ > limits::kMaxNesting) fail("is nested deeper than 64 levels");
        if (capture_) {
            captureText(array ? "[" : "{");
            return true;
        }
        if (depth_ == 1) {
            if (array) {  // a bare array of events (Chrome's JSON array format)
                eventsArrayDepth_ = 1;
                raw_.sawTraceEvents = true;
            }
        } else if (depth_ == 2 && eventsArrayDepth_ == 0 && rootKey_ == "traceEvents") {
            if (!array) fail("\"traceEvents\" is not an array");
            eventsArrayDepth_ = 2;
            raw_.sawTraceEvents = true;
        } else if (depth_ == 2 && rootKey_ == "deviceProperties" && array) {
            devicesArrayDepth_ = 2;
        } else if (eventsArrayDepth_ && depth_ == eventsArrayDepth_ + 1) {
            if (array) fail("event " + std::to_string(raw_.trace.eventsRead + 1) + " is an array, not an object");
            eventDepth_ = depth_;
            eventNumber_ = raw_.trace.eventsRead + 1;
            p_.reset();
        } else if (eventDepth_ && depth_ == eventDepth_ + 1 && eventKey_ == "args") {
            if (array) fail(where() + ": \"args\" is not an object");
            argsDepth_ = depth_;
        } else if (eventDepth_ && depth_ == eventDepth_ + 1 &&
                   (eventKey_ == "ph" || eventKey_ == "cat" || eventKey_ == "name")) {
            fail(where() + ": \"" + eventKey_ + "\" is not a string");
        } else if (eventDepth_ && depth_ == eventDepth_ + 1 && (eventKey_ == "ts" || eventKey_ == "dur")) {
            argProblem("\"" + eventKey_ + "\" is not a number");
        } else if (argsDepth_ && depth_ == argsDepth_ + 1 && isCapturedArg(argKey_)) {
            capture_ = true;
            captureDepth_ = depth_;
            captured_.clear();
            capturedNumbers_.clear();
            captureText(array ? "[" : "{");
        } else if (devicesArrayDepth_ && depth_ == devicesArrayDepth_ + 1 && !array) {
            deviceDepth_ = depth_;
            raw_.trace.devices.emplace_back();
            if (raw_.trace.devices.size() > 1024) fail("lists more than 1024 devices");
        }
        return true;
    }

    bool close() {
        if (capture_) {
            captured_ += closingOf(depth_);
            if (depth_ == captureDepth_) {
                capture_ = false;
                storeCapture();
            }
        } else if (depth_ == eventDepth_) {
            finishEvent();
            eventDepth_ = 0;
        } else if (depth_ == argsDepth_) {
            argsDepth_ = 0;
        } else if (depth_ == deviceDepth_) {
            deviceDepth_ = 0;
        } else if (depth_ == eventsArrayDepth_) {
            eventsArrayDepth_ = 0;
        } else if (depth_ == devicesArrayDepth_) {
            devicesArrayDepth_ = 0;
        }
        --depth_;
        return true;
    }

    // Captured arguments keep their JSON text; closing brackets are recorded as opened.
    char closingOf(int depth) {
        const char c = openers_[size_t(depth)];
        return c == '[' ? ']' : '}';
    }
    void captureString(const std::string& s) {
        const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
            return c != '"' && c != '\\' && (unsigned char)c >= 0x20 && (unsigned char)c < 0x80;
        });
        if (!plain) {
            captureText(Json(s).dump(-1, ' ', false, Json::error_handler_t::replace));
            return;
        }
        if (!captured_.empty() && needsComma()) captured_ += ',';
        captured_ += '"';
        captured_ += s;
        captured_ += '"';
        if (captured_.size() > tracelimits::kMaxStringBytes) fail(where() + ": an argument longer than 1 MB");
    }
    void captureText(std::string_view s) {
        if (s.empty()) return;
        const char first = s[0];
        if (first == '[' || first == '{') {
            if (!captured_.empty() && needsComma()) captured_ += ',';
            if (openers_.size() <= size_t(depth_)) openers_.resize(size_t(depth_) + 1);
            openers_[size_t(depth_)] = first;
        } else if (!captured_.empty() && needsComma()) {
            captured_ += ',';
        }
        captured_ += s;
        if (captured_.size() > tracelimits::kMaxStringBytes) fail(where() + ": an argument longer than 1 MB");
    }
    bool needsComma() const {
        const char c = captured_.back();
        return c != '[' && c != '{' && c != ':';
    }
    static bool isCapturedArg(const std::string& k) {
        return k == "Input Dims" || k == "Input type" || k == "grid" || k == "block";
    }

    bool scalar(const Value& v) {
        if (capture_) {
            if (v.kind == Value::Number) {
                capturedNumbers_.push_back(v.number);
                // An integer past int64_t's range (an unsigned one near 2^64) is written as a double:
                // converting it would be undefined behaviour (found by fuzz_kineto).
                if (v.integral && fitsInt64(v.number)) {
                    char digits[24];
                    const auto end = std::to_chars(digits, digits + sizeof digits, int64_t(v.number)).ptr;
                    captureText(std::string_view(digits, size_t(end - digits)));
                } else {
                    std::ostringstream s;
                    s << v.number;
                    captureText(s.str());
                }
            } else if (v.kind == Value::String) {
                captureString(*v.text);
            } else {
                captureText("null");
            }
            return true;
        }
        if (depth_ == 1 && rootKey_ == "schemaVersion" && v.kind == Value::Number)
            raw_.trace.schemaVersion = int(std::clamp(v.number, -1e6, 1e6));
        else if (depth_ == eventDepth_)
            eventField(v);
        else if (depth_ == argsDepth_)
            argField(v);
        else if (depth_ == deviceDepth_)
            deviceField(v);
        else if (eventsArrayDepth_ && depth_ == eventsArrayDepth_)
            fail("event " + std::to_string(raw_.trace.eventsRead + 1) + " is not an object");
        return true;
    }

    std::string& stringField(const Value& v, const char* field) {
        if (v.kind != Value::String) fail(where() + ": \"" + field + "\" is not a string");
        return *v.text;
    }
    // An argument's problem matters only for an event that is kept (its category may come later):
    // the first one is remembered and reported when the event ends.
    void argProblem(const std::string& problem) {
        if (p_.argProblem.empty()) p_.argProblem = problem;
    }
    double numberField(const Value& v, const std::string& field, double lo, double hi) {
        if (v.kind != Value::Number) {
            argProblem("\"" + field + "\" is not a number");
            return lo;
        }
        if (!(v.number >= lo && v.number <= hi)) {
            std::ostringstream s;
            s << "\"" << field << "\" is " << v.number << ", outside " << lo << " to " << hi;
            argProblem(s.str());
            return lo;
        }
        return v.number;
    }
    static std::string idText(const Value& v) {
        if (v.kind == Value::String) return *v.text;
        // An id past int64_t's range (an unsigned one near 2^64) keeps its double's text (found by
        // fuzz_kineto: the conversion was undefined behaviour).
        if (v.kind == Value::Number && v.integral && fitsInt64(v.number)) return std::to_string(int64_t(v.number));
        if (v.kind == Value::Number) return std::to_string(v.number);
        return "";
    }

    void eventField(const Value& v) {
        const std::string& k = eventKey_;
        if (k == "ph")
            p_.ph = stringField(v, "ph");
        else if (k == "cat")
            p_.cat = stringField(v, "cat");
        else if (k == "name")
            p_.name = std::move(stringField(v, "name"));
        else if (k == "pid")
            p_.pid = idText(v);
        else if (k == "tid")
            p_.tid = idText(v);
        else if (k == "ts")
            p_.ts = numberOf(v, "ts");
        else if (k == "dur")
            p_.dur = numberOf(v, "dur");
        else if (k == "args" && v.kind != Value::Null)
            fail(where() + ": \"args\" is not an object");
    }
    std::optional<double> numberOf(const Value& v, const char* field) {
        if (v.kind == Value::Number) return v.number;
        argProblem(std::string("\"") + field + "\" is not a number");
        return std::nullopt;
    }

    // The arguments read; the others ("External id", "Ev Idx", "queued"...) are skipped at once.
    static const std::unordered_set<std::string_view>& usedArgs() {
        static const std::unordered_set<std::string_view> used = {"correlation",
                                                                  "device",
                                                                  "stream",
                                                                  "registers per thread",
                                                                  "shared memory",
                                                                  "blocks per SM",
                                                                  "warps per SM",
                                                                  "est. achieved occupancy %",
                                                                  "bytes",
                                                                  "Module Hierarchy",
                                                                  "Collective name",
                                                                  "dtype",
                                                                  "In msg nelems",
                                                                  "Out msg nelems",
                                                                  "Group size",
                                                                  "Input Dims",
                                                                  "Input type",
                                                                  "grid",
                                                                  "block"};
        return used;
    }

    void argField(const Value& v) {
        if (!argUsed_) return;
        const std::string& k = argKey_;
        constexpr double kMaxId = double(int64_t(1) << 62);
        constexpr double kMaxInt = double(std::numeric_limits<int32_t>::max());
        if (k == "correlation")
            p_.correlation = int64_t(numberField(v, k, 0, kMaxId));
        else if (k == "device") {
            if (v.kind == Value::Number) p_.device = int64_t(numberField(v, k, 0, 65535));
        } else if (k == "stream") {
            if (v.kind == Value::Number) p_.stream = int64_t(numberField(v, k, -kMaxInt, 2 * kMaxInt + 1));
        } else if (k == "registers per thread")
            p_.registers = int64_t(numberField(v, k, 0, 65536));
        else if (k == "shared memory")
            p_.sharedMemory = int64_t(numberField(v, k, 0, kMaxInt));
        else if (k == "blocks per SM")
            p_.blocksPerSm = numberField(v, k, 0, 1e12);
        else if (k == "warps per SM")
            p_.warpsPerSm = numberField(v, k, 0, 1e12);
        else if (k == "est. achieved occupancy %")
            p_.occupancy = numberField(v, k, 0, 100);
        else if (k == "bytes")
            p_.bytes = numberField(v, k, 0, 1e18);
        else if (k == "Module Hierarchy" && v.kind == Value::String)
            p_.moduleHierarchy = *v.text;
        else if (k == "Collective name" && v.kind == Value::String)
            p_.collective = *v.text;
        else if (k == "dtype" && v.kind == Value::String)
            p_.dtype = *v.text;
        else if (k == "In msg nelems")
            p_.inElements = int64_t(numberField(v, k, 0, kMaxId));
        else if (k == "Out msg nelems")
            p_.outElements = int64_t(numberField(v, k, 0, kMaxId));
        else if (k == "Group size")
            p_.groupSize = int64_t(numberField(v, k, 0, 1e7));
        else if (isCapturedArg(k) && v.kind != Value::Null)
            argProblem("\"" + k + "\" is not a list");
    }

    void storeCapture() {
        if (argKey_ == "Input Dims") {
            p_.inputDims = captured_;
            p_.hasInputDims = true;
        } else if (argKey_ == "Input type") {
            p_.inputTypes = captured_;
            p_.hasInputTypes = true;
        } else {  // grid or block: three positive sizes
            int64_t* out = argKey_ == "grid" ? p_.grid : p_.block;
            if (capturedNumbers_.size() != 3 || captured_.find('[', 1) != std::string::npos) {
                argProblem("\"" + argKey_ + "\" is not a list of three numbers");
                return;
            }
            for (int i = 0; i < 3; ++i) {
                const double d = capturedNumbers_[size_t(i)];
                if (!(d >= 0 && d <= double(std::numeric_limits<int32_t>::max())) || d != std::floor(d)) {
                    argProblem("\"" + argKey_ + "\" holds " + std::to_string(d) + ", not a size");
                    return;
                }
                out[i] = int64_t(d);
            }
        }
    }

    void deviceField(const Value& v) {
        DeviceProperties& d = raw_.trace.devices.back();
        const std::string& k = deviceKey_;
        if (k == "name") {
            if (v.kind == Value::String) d.name = *v.text;
            return;
        }
        if (v.kind != Value::Number) return;
        const double x = v.number;
        auto asInt = [&](double hi) {
            if (!(x >= 0 && x <= hi)) fail("deviceProperties: \"" + k + "\" is out of range");
            return int(x);
        };
        if (k == "id")
            d.index = asInt(65535);
        else if (k == "totalGlobalMem") {
            if (!(x >= 0 && x < 1e16)) fail("deviceProperties: \"totalGlobalMem\" is out of range");
            d.totalMemoryBytes = uint64_t(x);
        } else if (k == "computeMajor")
            d.ccMajor = asInt(1000);
        else if (k == "computeMinor")
            d.ccMinor = asInt(1000);
        else if (k == "numSms")
            d.sms = asInt(1e6);
        else if (k == "maxThreadsPerBlock")
            d.maxThreadsPerBlock = asInt(1e6);
        else if (k == "maxThreadsPerMultiprocessor")
            d.maxThreadsPerSm = asInt(1e6);
        else if (k == "regsPerBlock")
            d.registersPerBlock = asInt(1e9);
        else if (k == "regsPerMultiprocessor")
            d.registersPerSm = asInt(1e9);
        else if (k == "warpSize")
            d.warpSize = asInt(1024);
        else if (k == "sharedMemPerBlock")
            d.sharedMemoryPerBlockBytes = asInt(1e9);
        else if (k == "sharedMemPerMultiprocessor" || k == "maxSharedMemoryPerMultiProcessor")
            d.sharedMemoryPerSmBytes = asInt(1e9);
        else if (k == "sharedMemPerBlockOptin")
            d.sharedMemoryPerBlockOptinBytes = asInt(1e9);
    }

    void finishEvent();

    RawTrace& raw_;
    std::string source_;
    int depth_ = 0;
    int eventsArrayDepth_ = 0, eventDepth_ = 0, argsDepth_ = 0, devicesArrayDepth_ = 0, deviceDepth_ = 0;
    std::string rootKey_, eventKey_, argKey_, deviceKey_;
    bool argUsed_ = false;
    bool capture_ = false;
    int captureDepth_ = 0;
    std::string captured_;
    std::vector<double> capturedNumbers_;
    std::vector<char> openers_;
    PendingEvent p_;
    int64_t eventNumber_ = 0;
    bool haveOrigin_ = false;
    std::vector<int8_t> classOfName_;  // by interned name, -1 unknown
};

void TraceSax::finishEvent() {
    RawTrace& raw = raw_;
    ++raw.trace.eventsRead;
    if (p_.ph != "X") return;  // flows, instants, counters and metadata carry nothing used here
    const std::string& cat = p_.cat;
    const bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
    const bool runtime = cat == "cuda_runtime" || cat == "cuda_driver";
    const bool step = (cat == "user_annotation" || cat == "cpu_op") && p_.name.rfind("ProfilerStep#", 0) == 0;
    const bool module = cat == "python_function" && p_.name.rfind("nn.Module: ", 0) == 0;
    if (cat == "python_function") raw.trace.withStack = true;
    if (!gpu && !runtime && !step && !module && cat != "cpu_op" && cat != "user_annotation") return;
    if (runtime && p_.correlation < 0) return;  // a runtime call that launched nothing traced
    if (!p_.argProblem.empty()) fail(where() + ": " + p_.argProblem);
    if (!p_.ts) fail(where() + ": a complete event without \"ts\"");
    if (!p_.dur) fail(where() + ": a complete event without \"dur\"");
    // Microseconds: 1e17 us is three thousand years, 1e12 us eleven days.
    if (!(std::fabs(*p_.ts) <= 1e17))
        fail(where() + ": \"ts\" " + std::to_string(*p_.ts) + " is not a time in microseconds");
    if (!(*p_.dur >= 0 && *p_.dur <= 1e12))
        fail(where() + ": \"dur\" " + std::to_string(*p_.dur) + " is negative or longer than eleven days");
    if (int64_t(raw.host.size() + raw.trace.kernels.size()) >= tracelimits::kMaxEvents)
        fail("has more than " + std::to_string(tracelimits::kMaxEvents) +
             " operator and kernel events, more than TrainScope reads; record fewer steps (torch.profiler's schedule)");
    if (!haveOrigin_) {
        raw.trace.originUs = *p_.ts;
        haveOrigin_ = true;
    }
    const double ts = *p_.ts - raw.trace.originUs;

    if (gpu) {
        TraceKernel k;
        k.name = raw.intern(p_.name);
        if (cat == "gpu_memcpy")
            k.kind = KernelClass::Memcpy;
        else if (cat == "gpu_memset")
            k.kind = KernelClass::Memset;
        else {
            if (size_t(k.name) >= classOfName_.size()) classOfName_.resize(size_t(k.name) + 1, -1);
            int8_t& c = classOfName_[size_t(k.name)];
            if (c < 0) c = int8_t(classifyKernelName(p_.name));
            k.kind = KernelClass(c);
            if (!p_.collective.empty()) k.kind = KernelClass::Communication;
        }
        if (p_.device >= 0)
            k.device = int32_t(p_.device);
        else if (!p_.pid.empty() &&
                 std::from_chars(p_.pid.data(), p_.pid.data() + p_.pid.size(), k.device).ec != std::errc())
            k.device = 0;
        k.stream = int32_t(p_.stream);
        k.correlation = p_.correlation;
        k.startUs = ts;
        k.durationUs = *p_.dur;
        for (int i = 0; i < 3; ++i) {
            k.grid[i] = int32_t(p_.grid[i]);
            k.block[i] = int32_t(p_.block[i]);
        }
        k.registersPerThread = int32_t(p_.registers);
        k.sharedMemoryBytes = int32_t(p_.sharedMemory);
        k.blocksPerSm = float(p_.blocksPerSm);
        k.warpsPerSm = float(p_.warpsPerSm);
        k.occupancyPercent = float(p_.occupancy);
        k.bytes = p_.bytes;
        if (k.kind == KernelClass::Communication) {
            TraceCollective c;
            c.name = p_.collective.empty() ? p_.name.substr(0, 40) : p_.collective;
            c.inElements = p_.inElements;
            c.outElements = p_.outElements;
            c.groupSize = int(p_.groupSize);
            c.dtype = p_.dtype;
            k.collective = int32_t(raw.trace.collectives.size());
            raw.trace.collectives.push_back(std::move(c));
        }
        raw.trace.kernels.push_back(k);
        return;
    }
    HostEvent h;
    h.thread = raw.threadOf(p_.pid, p_.tid);
    h.ts = ts;
    h.dur = *p_.dur;
    if (runtime) {
        h.kind = HostKind::Runtime;
        h.correlation = p_.correlation;
        if (p_.name.rfind("hip", 0) == 0) raw.hipRuntime = true;
    } else if (step) {
        h.kind = HostKind::Step;
        const char* first = p_.name.data() + 13;
        if (std::from_chars(first, p_.name.data() + p_.name.size(), h.stepNumber).ec != std::errc())
            h.kind = HostKind::Annotation;
        h.name = raw.intern(p_.name);
    } else if (module) {
        h.kind = HostKind::ModuleScope;
        h.name = raw.intern(std::string_view(p_.name).substr(11));
    } else {
        h.kind = cat == "cpu_op" ? HostKind::Operator : HostKind::Annotation;
        h.name = raw.intern(p_.name);
        if (p_.hasInputDims) h.inputShapes = raw.intern(p_.inputDims);
        if (p_.hasInputTypes) h.inputTypes = raw.intern(p_.inputTypes);
        if (!p_.moduleHierarchy.empty()) h.moduleHierarchy = raw.intern(p_.moduleHierarchy);
    }
    raw.host.push_back(h);
}

}  // namespace

RawTrace parseTraceStream(std::istream& in, const std::string& source) {
    RawTrace raw;
    raw.trace.source = source;
    TraceSax sax(raw, source);
    try {
        Json::sax_parse(in, &sax);
    } catch (const Json::exception& e) {  // parse_error is handled by the handler; anything else lands here
        throw ModelError(source, std::string("not valid JSON: ") + e.what());
    }
    sax.finish();
    return raw;
}

}  // namespace kineto

KinetoTrace readKinetoTrace(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw ModelError(path, "cannot be opened");
    InflatingBuffer buffer(file, path);
    std::istream in(&buffer);
    return kineto::joinTrace(kineto::parseTraceStream(in, path));
}

KinetoTrace readKinetoTraceText(const std::string& text, const std::string& source) {
    std::istringstream file(text);
    InflatingBuffer buffer(file, source);
    std::istream in(&buffer);
    return kineto::joinTrace(kineto::parseTraceStream(in, source));
}

}  // namespace ts
