#pragma once
// One entry point for every model source: "zoo:NAME?k=v", *.onnx, *.pt/*.pth/*.ptl, *.json (TrainScope's
// format or a Hugging Face config.json).
// Options after '?' apply to files too (for example "model.pt?input=3x224x224", "bert.onnx?seq=128").
#include <map>
#include <string>
#include <vector>

#include "trainscope/core/graph.h"

namespace ts {

struct ModelSpec {
    std::string location;                       // "zoo:resnet50" or a path
    std::map<std::string, std::string> params;  // parsed query
};
// Throws ModelError on a malformed query.
ModelSpec parseModelSpec(const std::string& spec);

// `spec` with option `key` set to `value` (removed when `value` is empty), the other options kept in
// their order: "config.json?seq=512" with tensor_parallel=4 is "config.json?seq=512&tensor_parallel=4".
// Throws ModelError on a malformed query, as parseModelSpec.
std::string modelSpecWith(const std::string& spec, const std::string& key, const std::string& value);

// Imports or builds the model; every failure is a ModelError naming the input.
Graph loadModel(const std::string& spec);

// ---- the individual sources (used by loadModel) ----
Graph importOnnx(const std::string& path, const std::map<std::string, std::string>& params);
Graph importTorchScript(const std::string& path, const std::map<std::string, std::string>& params);
Graph importJsonModel(const std::string& path, const std::map<std::string, std::string>& params);
// The JSON format from text (tests, GUI); `source` names it in errors.
Graph importJsonModelText(const std::string& text, const std::string& source,
                          const std::map<std::string, std::string>& params = {});

// A Hugging Face transformers config.json (docs/huggingface.md): the model built from its sizes, no
// weights. Options: seq, batch, head, attention. A *.json file that has "model_type" and no
// "trainscope_model" is read as one.
Graph importHfConfigText(const std::string& text, const std::string& source,
                         const std::map<std::string, std::string>& params = {});

struct ZooParam {
    std::string name;
    std::string defaultValue;
    std::string help;
};
struct ZooEntry {
    std::string name;
    std::string description;
    std::vector<ZooParam> params;
};
const std::vector<ZooEntry>& zooModels();
// Throws ModelError("zoo:NAME", ...) for an unknown model or parameter.
Graph buildZooModel(const std::string& name, const std::map<std::string, std::string>& params);

// Whether this build can read TorchScript (LibTorch linked).
bool torchScriptSupported();

}  // namespace ts
