#include "trainscope/core/model_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "trainscope/core/errors.h"

namespace ts {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

enum class FileKind { Onnx, TorchScript, Json, Unknown };

// Decides by extension first, then by the file's first bytes (zip archive = TorchScript,
// '{' = JSON), so a renamed file still opens.
FileKind detectKind(const std::string& path) {
    std::string ext = lower(std::filesystem::path(path).extension().string());
    if (ext == ".onnx") return FileKind::Onnx;
    if (ext == ".pt" || ext == ".pth" || ext == ".ptl" || ext == ".torchscript") return FileKind::TorchScript;
    if (ext == ".json") return FileKind::Json;
    std::ifstream in(path, std::ios::binary);
    char head[4] = {0, 0, 0, 0};
    in.read(head, sizeof head);
    if (in.gcount() >= 2 && head[0] == 'P' && head[1] == 'K') return FileKind::TorchScript;
    for (char c : head) {
        if (std::isspace(static_cast<unsigned char>(c))) continue;
        if (c == '{') return FileKind::Json;
        break;
    }
    return FileKind::Unknown;
}

}  // namespace

ModelSpec parseModelSpec(const std::string& spec) {
    ModelSpec out;
    // A file whose name contains '?' is taken as is.
    size_t q = spec.find('?');
    if (q == std::string::npos || (spec.rfind("zoo:", 0) != 0 && std::filesystem::exists(spec))) {
        out.location = spec;
        return out;
    }
    out.location = spec.substr(0, q);
    std::string query = spec.substr(q + 1);
    size_t start = 0;
    while (start <= query.size()) {
        size_t amp = query.find('&', start);
        std::string item = query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
        if (!item.empty()) {
            size_t eq = item.find('=');
            if (eq == std::string::npos || eq == 0)
                throw ModelError(out.location, "option '" + item + "' is not of the form name=value");
            std::string key = item.substr(0, eq);
            if (out.params.count(key)) throw ModelError(out.location, "option '" + key + "' is given twice");
            out.params[key] = item.substr(eq + 1);
        }
        if (amp == std::string::npos) break;
        start = amp + 1;
    }
    return out;
}

std::string modelSpecWith(const std::string& specText, const std::string& key, const std::string& value) {
    const ModelSpec spec = parseModelSpec(specText);
    // parseModelSpec keeps a file whose name holds '?' whole: its options cannot be told apart.
    if (spec.location == specText && specText.find('?') != std::string::npos)
        throw ModelError(specText, "a file whose name holds '?' takes no options (rename it)");
    std::string query;
    auto append = [&](const std::string& k, const std::string& v) { query += (query.empty() ? "" : "&") + k + "=" + v; };
    {
        // The options in the order they were written (the map sorts them).
        const size_t q = specText.find('?');
        const std::string written = q == std::string::npos ? "" : specText.substr(q + 1);
        size_t start = 0;
        while (start < written.size()) {
            size_t amp = written.find('&', start);
            const std::string item = written.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
            const std::string k = item.substr(0, item.find('='));
            if (!item.empty() && k != key) append(k, spec.params.at(k));
            if (amp == std::string::npos) break;
            start = amp + 1;
        }
    }
    if (!value.empty()) append(key, value);
    return spec.location + (query.empty() ? "" : "?" + query);
}

Graph loadModel(const std::string& specText) {
    if (specText.empty()) throw ModelError("", "no model given (a file or zoo:NAME)");
    ModelSpec spec = parseModelSpec(specText);
    if (spec.location.rfind("zoo:", 0) == 0) return buildZooModel(spec.location.substr(4), spec.params);

    const std::string& path = spec.location;
    std::error_code ec;
    auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
        throw ModelError(path, "no such file (a model is a .onnx, .pt or .json file, or zoo:NAME)");
    if (std::filesystem::is_directory(status)) throw ModelError(path, "is a directory, not a model file");
    switch (detectKind(path)) {
        case FileKind::Onnx: return importOnnx(path, spec.params);
        case FileKind::TorchScript: return importTorchScript(path, spec.params);
        case FileKind::Json: return importJsonModel(path, spec.params);
        case FileKind::Unknown: break;
    }
    throw ModelError(path, "unknown model format (expected .onnx, .pt/.pth TorchScript, or .json)");
}

}  // namespace ts
