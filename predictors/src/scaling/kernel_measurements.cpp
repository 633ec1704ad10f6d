#include "trainscope/predictors/scaling/kernel_measurements.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "scaling/csv_reader.h"
#include "trainscope/core/errors.h"

namespace ts::predictors {
namespace {

namespace fs = std::filesystem;

struct Accum {
    double latencySum = 0;
    KernelMeasurement first;
};
// opClass -> sizes -> GPU id -> rows
using ConfigMap = std::map<std::vector<double>, std::map<std::string, Accum>>;

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ModelError(path, "cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::optional<double> parseNumber(const std::string& s) {
    double v = 0;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    while (b < e && *b == ' ') ++b;
    while (e > b && e[-1] == ' ') --e;
    auto [ptr, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || ptr != e || !std::isfinite(v)) return std::nullopt;
    return v;
}

KernelWork workOf(const std::string& op, const std::vector<double>& s) {
    if (op == "linear" || op == "bmm") return gemmWork(op, s[0], s[1], s[2], s[3]);
    if (op == "conv") return convWork(s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
    return memoryWork(op, s[0] * s[1]);
}

class FileReader {
public:
    FileReader(const std::string& path, const GpuDatabase& db, std::map<std::string, ConfigMap>& out,
               std::map<std::string, const GpuSpec*>& specs, MeasurementSet& set)
        : path_(path), db_(db), out_(out), specs_(specs), set_(set) {}

    void read() {
        CsvReader csv(readText(path_), path_);
        std::vector<std::string> f;
        if (!csv.next(f)) throw ModelError(path_, "line 1: the file is empty (expected a header row)");
        for (size_t i = 0; i < f.size(); ++i)
            if (!columns_.emplace(f[i], i).second)
                throw ModelError(path_, "line 1: column '" + f[i].substr(0, 40) + "' appears twice in the header");
        headerFields_ = f.size();  // columns_ may hold an alias more
        if (columns_.count("Kernel_Szie") == 0 && columns_.count("Kernel_Size"))
            columns_["Kernel_Szie"] = columns_["Kernel_Size"];  // the artifact's spelling is the canonical one
        for (const char* c : {"OPName", "Latency", "Device", "Kernel Name", "Grid x", "Grid y", "Grid z", "Block x",
                              "Block y", "Block z"})
            column(c, 1);
        std::map<std::string, int64_t> unknown;
        while (csv.next(f)) {
            const int line = csv.line();
            if (f.size() == 1 && f[0].empty()) continue;  // a line that holds nothing (`""`): no row
            if (f.size() != headerFields_)
                throw ModelError(path_, "line " + std::to_string(line) + ": " + std::to_string(f.size()) +
                                            (f.size() == 1 ? " field" : " fields") + " where the header has " +
                                            std::to_string(headerFields_));
            ++set_.rows;
            const std::string& op = field(f, "OPName", line);
            const std::vector<std::string>& sizeCols = sizeColumnsOfAt(op, line);
            const std::string& device = field(f, "Device", line);
            const GpuSpec* gpu = db_.matchDevice(device);
            if (!gpu) {
                ++unknown[device];
                continue;
            }
            specs_[gpu->id] = gpu;
            std::vector<double> sizes;
            for (const std::string& c : sizeCols) sizes.push_back(number(f, c, line, true));
            const double latency = number(f, "Latency", line, true);
            if (latency <= 0) throw ModelError(path_, "line " + std::to_string(line) + ": Latency must be positive");
            Accum& a = out_[op][sizes][gpu->id];
            if (a.first.samples == 0) {
                const std::string& name = field(f, "Kernel Name", line);
                auto [it, added] = names_.try_emplace(name, nullptr);
                if (added) it->second = std::make_shared<const std::string>(name);
                a.first.kernelName = it->second;
                const char* g[] = {"Grid x", "Grid y", "Grid z"};
                const char* b[] = {"Block x", "Block y", "Block z"};
                for (int i = 0; i < 3; ++i) {
                    a.first.grid[i] = launchDim(f, g[i], line);
                    a.first.block[i] = launchDim(f, b[i], line);
                }
            }
            a.latencySum += latency;
            ++a.first.samples;
        }
        for (const auto& [device, rows] : unknown) set_.unknownDevices.push_back({device, path_, rows});
    }

private:
    size_t column(const std::string& name, int line) const {
        auto it = columns_.find(name);
        if (it == columns_.end())
            throw ModelError(path_, "line " + std::to_string(line) + ": missing column '" + name + "'");
        return it->second;
    }
    // The named field of a row, bounded by the row itself (read() checks its length against the
    // header, but the read does not rely on that).
    const std::string& field(const std::vector<std::string>& f, const std::string& name, int line) const {
        const size_t i = column(name, line);
        if (i >= f.size())
            throw ModelError(path_, "line " + std::to_string(line) + ": no field for column '" + name + "'");
        return f[i];
    }
    const std::vector<std::string>& sizeColumnsOfAt(const std::string& op, int line) const {
        try {
            return sizeColumnsOf(op);
        } catch (const ModelError& e) {
            throw ModelError(path_, "line " + std::to_string(line) + ": " + e.problem());
        }
    }
    // A numeric field; an empty optional one (grid, block) is 0 = unknown.
    double number(const std::vector<std::string>& f, const std::string& name, int line, bool required) const {
        const std::string& s = field(f, name, line);
        if (!required && s.empty()) return 0;
        std::optional<double> v = parseNumber(s);
        if (!v || (required && *v < 0))
            throw ModelError(path_, "line " + std::to_string(line) + ": " + name + " '" + s.substr(0, 40) +
                                        "' is not a " + (required ? "non-negative number" : "number"));
        return *v;
    }

    // A grid or block size: empty (0 = unknown) or an integer CUDA could launch, checked before the
    // conversion, which is undefined for values an int64_t cannot hold.
    int64_t launchDim(const std::vector<std::string>& f, const std::string& name, int line) const {
        const double v = number(f, name, line, false);
        if (v < 0 || v > double(INT32_MAX) || v != std::floor(v))
            throw ModelError(path_, "line " + std::to_string(line) + ": " + name + " '" +
                                        field(f, name, line).substr(0, 40) + "' is not an integer from 0 to " +
                                        std::to_string(INT32_MAX));
        return int64_t(v);
    }

    std::string path_;
    const GpuDatabase& db_;
    std::map<std::string, ConfigMap>& out_;
    std::map<std::string, const GpuSpec*>& specs_;
    MeasurementSet& set_;
    std::map<std::string, size_t> columns_;
    size_t headerFields_ = 0;
    std::unordered_map<std::string, std::shared_ptr<const std::string>> names_;
};

std::vector<std::string> csvFiles(const std::vector<std::string>& paths) {
    std::vector<std::string> files;
    for (const std::string& p : paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            std::vector<std::string> found;
            for (const auto& e : fs::recursive_directory_iterator(p, ec))
                if (e.is_regular_file() && e.path().extension() == ".csv") found.push_back(e.path().string());
            std::sort(found.begin(), found.end());
            if (found.empty()) throw ModelError(p, "no .csv files in this directory");
            files.insert(files.end(), found.begin(), found.end());
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else {
            throw ModelError(p, "no such file or directory");
        }
    }
    return files;
}

}  // namespace

const std::vector<std::string>& knownOperatorClasses() {
    static const std::vector<std::string> k = {"linear", "bmm", "conv", "ln",   "softmax",
                                               "add",    "mul", "gelu", "relu", "tanh"};
    return k;
}

const std::vector<std::string>& sizeColumnsOf(const std::string& opClass) {
    static const std::vector<std::string> gemm = {"B", "M", "N", "K"};
    static const std::vector<std::string> conv = {"B",          "Input_Channel", "Output_Channel", "Kernel_Szie",
                                                  "Input_Size", "Stride",        "Padding"};
    static const std::vector<std::string> rows = {"B", "H"};
    if (opClass == "linear" || opClass == "bmm") return gemm;
    if (opClass == "conv") return conv;
    const auto& k = knownOperatorClasses();
    if (std::find(k.begin(), k.end(), opClass) != k.end()) return rows;
    throw ModelError("", "operator '" + opClass +
                             "' is not one of linear, bmm, conv, ln, softmax, add, mul, gelu, "
                             "relu, tanh");
}

KernelWork MeasuredConfig::launchedOn(size_t gpu) const {
    KernelWork w = work;
    const KernelMeasurement& m = *byGpu.at(gpu);
    if (m.kernelName) w.kernelName = *m.kernelName;
    w.grid = m.grid;
    w.block = m.block;
    return w;
}

const OperatorMeasurements* MeasurementSet::find(const std::string& opClass) const {
    for (const OperatorMeasurements& o : ops)
        if (o.opClass == opClass) return &o;
    return nullptr;
}

MeasurementSet readKernelMeasurements(const std::vector<std::string>& paths, const GpuDatabase& db) {
    MeasurementSet set;
    std::map<std::string, ConfigMap> byClass;
    std::map<std::string, const GpuSpec*> specs;
    set.files = csvFiles(paths);
    for (const std::string& file : set.files) FileReader(file, db, byClass, specs, set).read();

    for (const std::string& op : knownOperatorClasses()) {
        auto it = byClass.find(op);
        if (it == byClass.end()) continue;
        OperatorMeasurements om;
        om.opClass = op;
        om.sizeColumns = sizeColumnsOf(op);
        // GPUs in database order, so tables come out the same whatever order the files had.
        std::map<std::string, size_t> index;
        for (const GpuSpec& g : db.gpus()) {
            bool present = false;
            for (const auto& [sizes, perGpu] : it->second) present = present || perGpu.count(g.id);
            if (!present) continue;
            index[g.id] = om.gpus.size();
            om.gpus.push_back(*specs.at(g.id));
        }
        for (const auto& [sizes, perGpu] : it->second) {
            MeasuredConfig c;
            c.sizes = sizes;
            c.work = workOf(op, sizes);
            c.byGpu.resize(om.gpus.size());
            for (const auto& [id, a] : perGpu) {
                KernelMeasurement m = a.first;
                m.latencyMs = a.latencySum / a.first.samples;
                c.byGpu[index.at(id)] = m;
                om.rows += a.first.samples;
            }
            om.configs.push_back(std::move(c));
        }
        set.ops.push_back(std::move(om));
    }
    return set;
}

}  // namespace ts::predictors
