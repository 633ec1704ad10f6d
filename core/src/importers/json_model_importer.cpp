// The hand-written JSON model format (docs/model-format.md): PyTorch-style layers with
// shapes inferred, for architectures that exist only on paper.
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "trainscope/core/builder.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

namespace ts {
namespace {

using json = nlohmann::json;
constexpr int kFormatVersion = 1;
constexpr std::uintmax_t kMaxFileBytes = 64u << 20;

struct LayerError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

int64_t getInt(const json& j, const char* key, int64_t def, bool required = false) {
    auto it = j.find(key);
    if (it == j.end()) {
        if (required) throw LayerError(std::string("needs \"") + key + "\"");
        return def;
    }
    if (!it->is_number_integer()) throw LayerError(std::string("\"") + key + "\" must be an integer");
    int64_t v = it->get<int64_t>();
    if (v < 0 || v > limits::kMaxDimValue) throw LayerError(std::string("\"") + key + "\" is out of range");
    return v;
}

double getFloat(const json& j, const char* key, double def) {
    auto it = j.find(key);
    if (it == j.end()) return def;
    if (!it->is_number()) throw LayerError(std::string("\"") + key + "\" must be a number");
    return it->get<double>();
}

bool getBool(const json& j, const char* key, bool def) {
    auto it = j.find(key);
    if (it == j.end()) return def;
    if (!it->is_boolean()) throw LayerError(std::string("\"") + key + "\" must be true or false");
    return it->get<bool>();
}

// kernel_size / stride / padding: an integer or [h, w].
std::vector<int64_t> getPair(const json& j, const char* key, int64_t def) {
    auto it = j.find(key);
    if (it == j.end()) return {def, def};
    if (it->is_number_integer()) {
        int64_t v = getInt(j, key, def);
        return {v, v};
    }
    if (it->is_array() && it->size() == 2 && (*it)[0].is_number_integer() && (*it)[1].is_number_integer()) {
        std::vector<int64_t> v{(*it)[0].get<int64_t>(), (*it)[1].get<int64_t>()};
        for (int64_t x : v)
            if (x < 0 || x > limits::kMaxDimValue) throw LayerError(std::string("\"") + key + "\" is out of range");
        return v;
    }
    throw LayerError(std::string("\"") + key + "\" must be an integer or [h, w]");
}

Shape parseShape(const json& j, const std::string& what) {
    if (!j.is_array()) throw LayerError(what + " must be a list of dimensions");
    if (j.size() > static_cast<size_t>(limits::kMaxRank)) throw LayerError(what + " has too many dimensions");
    Shape s;
    for (const json& d : j) {
        if (d.is_number_integer()) {
            int64_t v = d.get<int64_t>();
            if (v < 0 && v != -1) throw LayerError(what + " has a negative dimension " + std::to_string(v));
            if (v > limits::kMaxDimValue) throw LayerError(what + " has an absurd dimension " + std::to_string(v));
            s.push_back(Dim(v));
        } else if (d.is_string()) {
            try {
                s.push_back(Dim::parse(d.get<std::string>()));
            } catch (const std::exception& e) {
                throw LayerError(what + ": " + e.what());
            }
        } else {
            throw LayerError(what + " has a dimension that is neither a number nor \"N\"/\"S\"");
        }
    }
    return s;
}

class JsonModelReader {
public:
    JsonModelReader(const json& doc, std::string source, SymbolDefaults defaults)
        : doc_(doc), source_(std::move(source)), b_(doc.value("name", std::string("model")), defaults) {}

    Graph read() {
        const json& inputs = require(doc_, "inputs", "the model");
        if (!inputs.is_array() || inputs.empty()) fail("\"inputs\" must be a non-empty list");
        for (const json& in : inputs) {
            if (!in.is_object() || !in.contains("name") || !in["name"].is_string())
                fail("every input needs a \"name\"");
            std::string name = in["name"];
            DType dtype = DType::Float32;
            if (in.contains("dtype")) {
                auto t = in["dtype"].is_string() ? parseDType(in["dtype"].get<std::string>()) : std::nullopt;
                if (!t) fail("input '" + name + "' has an unknown dtype");
                dtype = *t;
            }
            Shape shape;
            try {
                shape = parseShape(require(in, "shape", "input '" + name + "'"), "shape of input '" + name + "'");
            } catch (const LayerError& e) {
                fail(e.what());
            }
            int v = b_.input(name, shape, dtype);
            names_[name] = v;
            last_ = v;
        }
        const json& layers = require(doc_, "layers", "the model");
        readLayers(layers, 1);
        std::vector<int> outs;
        if (doc_.contains("outputs")) {
            if (!doc_["outputs"].is_array()) fail("\"outputs\" must be a list of layer names");
            for (const json& o : doc_["outputs"]) outs.push_back(lookup(o, "outputs"));
        } else {
            outs.push_back(last_);
        }
        Graph g = b_.finish(outs);
        g.source = source_;
        g.format = "json";
        return g;
    }

private:
    [[noreturn]] void fail(const std::string& problem) const { throw ModelError(source_, problem); }

    const json& require(const json& j, const char* key, const std::string& where) const {
        if (!j.is_object() || !j.contains(key)) fail(where + " needs \"" + key + "\"");
        return j.at(key);
    }

    int lookup(const json& ref, const std::string& where) const {
        if (!ref.is_string()) throw LayerError(where + " must name a layer or input");
        std::string name = ref.get<std::string>();
        // Innermost scope first: "conv1" inside "block" may mean "block.conv1".
        std::string scope = b_.currentPath();
        while (true) {
            std::string full = scope.empty() ? name : scope + "." + name;
            auto it = names_.find(full);
            if (it != names_.end()) return it->second;
            if (scope.empty()) break;
            size_t dot = scope.rfind('.');
            scope = dot == std::string::npos ? "" : scope.substr(0, dot);
        }
        throw LayerError(where + " refers to '" + name + "', which is no earlier layer or input");
    }

    std::vector<int> layerInputs(const json& layer) const {
        std::vector<int> ins;
        if (layer.contains("inputs")) {
            if (!layer["inputs"].is_array()) throw LayerError("\"inputs\" must be a list");
            for (const json& r : layer["inputs"]) ins.push_back(lookup(r, "\"inputs\""));
        } else if (layer.contains("input")) {
            ins.push_back(lookup(layer["input"], "\"input\""));
        } else {
            ins.push_back(last_);  // a sequential model: the previous layer's output
        }
        return ins;
    }

    void readLayers(const json& layers, int depth) {
        if (depth > limits::kMaxNesting) fail("layers are nested too deeply");
        if (!layers.is_array()) fail("\"layers\" must be a list");
        for (const json& layer : layers) {
            if (!layer.is_object() || !layer.contains("name") || !layer["name"].is_string())
                fail("every layer needs a \"name\"");
            std::string name = layer["name"];
            if (name.empty() || name.find('.') != std::string::npos)
                fail("layer name '" + name + "' must be non-empty and contain no '.'");
            std::string full = b_.childPath(name);
            if (names_.count(full)) fail("layer '" + full + "' is defined twice");
            if (layer.contains("layers")) {
                auto guard = b_.scope(name);
                readLayers(layer["layers"], depth + 1);
                names_[full] = last_;
                continue;
            }
            try {
                last_ = buildLayer(name, layer);
            } catch (const LayerError& e) {
                fail("layer '" + full + "': " + e.what());
            } catch (const ShapeError& e) {
                fail("layer '" + full + "': " + e.what());
            }
            names_[full] = last_;
        }
    }

    int buildLayer(const std::string& name, const json& l) {
        if (!l.contains("type") || !l["type"].is_string()) throw LayerError("needs a \"type\"");
        const std::string type = l["type"];
        std::vector<int> in = layerInputs(l);
        auto one = [&]() {
            if (in.size() != 1) throw LayerError(type + " takes one input");
            return in[0];
        };
        auto two = [&]() {
            if (in.size() != 2) throw LayerError(type + " takes two inputs");
        };
        if (type == "Conv2d") {
            auto k = getPair(l, "kernel_size", 1), s = getPair(l, "stride", 1), p = getPair(l, "padding", 0);
            return b_.conv2d(name, one(), getInt(l, "out_channels", 0, true), k, s, p, getInt(l, "groups", 1),
                             getBool(l, "bias", true));
        }
        if (type == "ConvTranspose2d")
            return b_.convTranspose2d(name, one(), getInt(l, "out_channels", 0, true), getInt(l, "kernel_size", 1, true),
                                      getInt(l, "stride", 1), getInt(l, "padding", 0), getInt(l, "output_padding", 0),
                                      getBool(l, "bias", true));
        if (type == "Linear") return b_.linear(name, one(), getInt(l, "out_features", 0, true), getBool(l, "bias", true));
        if (type == "BatchNorm2d" || type == "BatchNorm1d") return b_.batchNorm(name, one(), getFloat(l, "eps", 1e-5));
        if (type == "LayerNorm") return b_.layerNorm(name, one(), getFloat(l, "eps", 1e-5));
        if (type == "Embedding")
            return b_.embedding(name, one(), getInt(l, "num_embeddings", 0, true), getInt(l, "embedding_dim", 0, true));
        if (type == "LSTM" || type == "GRU") {
            int64_t h = getInt(l, "hidden_size", 0, true), layers = getInt(l, "num_layers", 1);
            bool bi = getBool(l, "bidirectional", false);
            return type == "LSTM" ? b_.lstm(name, one(), h, layers, bi) : b_.gru(name, one(), h, layers, bi);
        }
        if (type == "Dropout") return b_.dropout(name, one(), getFloat(l, "p", 0.5));
        if (type == "ReLU") return b_.relu(one(), name);
        if (type == "ReLU6") return b_.relu6(one(), name);
        if (type == "GELU") return b_.gelu(one(), name);
        if (type == "Tanh") return b_.tanh(one(), name);
        if (type == "Sigmoid") return b_.sigmoid(one(), name);
        if (type == "LeakyReLU") return b_.leakyRelu(one(), getFloat(l, "negative_slope", 0.01), name);
        if (type == "Softmax") return b_.softmax(one(), getIntSigned(l, "dim", -1), name);
        if (type == "MaxPool2d" || type == "AvgPool2d") {
            int64_t k = getInt(l, "kernel_size", 0, true);
            int64_t s = getInt(l, "stride", k), p = getInt(l, "padding", 0);
            bool ceil = getBool(l, "ceil_mode", false);
            return type == "MaxPool2d" ? b_.maxPool2d(one(), k, s, p, ceil, name)
                                       : b_.avgPool2d(one(), k, s, p, ceil, getBool(l, "count_include_pad", true), name);
        }
        if (type == "AdaptiveAvgPool2d") {
            auto o = getPair(l, "output_size", 1);
            return b_.adaptiveAvgPool2d(one(), o[0], o[1], name);
        }
        if (type == "Flatten") return b_.flatten(one(), getInt(l, "start_dim", 1), name);
        if (type == "Add") return two(), b_.add(in[0], in[1], name);
        if (type == "Mul") return two(), b_.mul(in[0], in[1], name);
        if (type == "MatMul") return two(), b_.matmul(in[0], in[1], name);
        if (type == "Concat") return b_.concat(in, getIntSigned(l, "dim", 1), name);
        if (type == "Reshape") {
            Shape target = parseShape(l.contains("shape") ? l["shape"] : json(), "\"shape\"");
            return b_.reshape(one(), target, name);
        }
        if (type == "Permute") {
            if (!l.contains("dims") || !l["dims"].is_array()) throw LayerError("Permute needs \"dims\"");
            std::vector<int64_t> perm;
            for (const json& d : l["dims"]) {
                if (!d.is_number_integer()) throw LayerError("\"dims\" must be integers");
                perm.push_back(d.get<int64_t>());
            }
            return b_.transpose(one(), perm, name);
        }
        if (type == "Op") return rawOperator(name, l, in);
        throw LayerError("unsupported layer type '" + type + "' (see docs/model-format.md for the list)");
    }

    static int64_t getIntSigned(const json& j, const char* key, int64_t def) {
        auto it = j.find(key);
        if (it == j.end()) return def;
        if (!it->is_number_integer()) throw LayerError(std::string("\"") + key + "\" must be an integer");
        return it->get<int64_t>();
    }

    // Escape hatch: any registry (ONNX) operator with its attributes, in the current module.
    int rawOperator(const std::string& name, const json& l, const std::vector<int>& in) {
        if (!l.contains("op_type") || !l["op_type"].is_string()) throw LayerError("an \"Op\" layer needs \"op_type\"");
        std::map<std::string, Attribute> attrs;
        if (l.contains("attributes")) {
            if (!l["attributes"].is_object()) throw LayerError("\"attributes\" must be an object");
            for (const auto& [key, v] : l["attributes"].items()) {
                if (v.is_number_integer()) attrs[key] = v.get<int64_t>();
                else if (v.is_number()) attrs[key] = v.get<double>();
                else if (v.is_string()) attrs[key] = v.get<std::string>();
                else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number_integer(); }))
                    attrs[key] = v.get<std::vector<int64_t>>();
                else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); }))
                    attrs[key] = v.get<std::vector<double>>();
                else throw LayerError("attribute '" + key + "' has an unsupported type");
            }
        }
        return b_.op(l["op_type"].get<std::string>(), in, attrs, 1, name)[0];
    }

    const json& doc_;
    std::string source_;
    ModelBuilder b_;
    std::map<std::string, int> names_;  // layer path or input name -> value
    int last_ = -1;
};

}  // namespace

Graph importJsonModelText(const std::string& text, const std::string& source,
                          const std::map<std::string, std::string>& params) {
    json doc;
    try {
        // Refuse deep nesting while parsing, before it costs memory or stack.
        auto depthGuard = [](int depth, json::parse_event_t, json&) {
            if (depth > limits::kMaxNesting) throw ModelError("", "JSON nesting deeper than " +
                                                                      std::to_string(limits::kMaxNesting) + " levels");
            return true;
        };
        doc = json::parse(text, depthGuard);
    } catch (const ModelError& e) {
        throw ModelError(source, e.problem());
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
        throw ModelError(source, std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_object()) throw ModelError(source, "a model file must be a JSON object");
    if (!doc.contains("trainscope_model") && doc.contains("model_type"))
        return importHfConfigText(text, source, params);  // a Hugging Face config.json
    if (!doc.contains("trainscope_model"))
        throw ModelError(source, "not a TrainScope model file (missing \"trainscope_model\": 1)");
    if (!doc["trainscope_model"].is_number_integer() || doc["trainscope_model"].get<int64_t>() != kFormatVersion)
        throw ModelError(source, "unsupported model format version (this TrainScope reads version 1)");
    SymbolDefaults defaults;
    try {
        defaults.seq = getInt(doc, "seq", 0);
        if (auto it = params.find("seq"); it != params.end()) defaults.seq = std::stoll(it->second);
        if (auto it = params.find("batch"); it != params.end()) defaults.batch = std::stoll(it->second);
    } catch (const std::exception& e) {
        throw ModelError(source, std::string("bad option: ") + e.what());
    }
    if (defaults.batch < 1 || defaults.seq < 0) throw ModelError(source, "batch must be >= 1 and seq >= 0");
    try {
        return JsonModelReader(doc, source, defaults).read();
    } catch (const ModelError&) {
        throw;
    } catch (const json::exception& e) {
        throw ModelError(source, std::string("malformed model: ") + e.what());
    } catch (const ShapeError& e) {
        throw ModelError(source, e.what());
    } catch (const LayerError& e) {
        throw ModelError(source, e.what());
    }
}

Graph importJsonModel(const std::string& path, const std::map<std::string, std::string>& params) {
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    if (ec) throw ModelError(path, "cannot read the file: " + ec.message());
    if (size > kMaxFileBytes) throw ModelError(path, "JSON model file is larger than 64 MiB");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ModelError(path, "cannot open the file");
    std::stringstream ss;
    ss << in.rdbuf();
    Graph g = importJsonModelText(ss.str(), path, params);
    if (g.name.empty() || g.name == "model") g.name = std::filesystem::path(path).stem().string();
    return g;
}

}  // namespace ts
