// libFuzzer target: a Hugging Face config.json through ts::importHfConfigText, then the costs of the
// graph it builds (the RMSNorm, rotary, attention and mixture-of-experts operators' cost code included).
#include <string>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        ts::Graph g = ts::importHfConfigText(text, "fuzz-config.json");
        ts::computeCosts(g, 2);
    } catch (const ts::ModelError&) {
    }
    return 0;
}
