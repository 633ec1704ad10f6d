// libFuzzer target: the JSON model format through ts::importJsonModelText.
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        ts::Graph g = ts::importJsonModelText(text, "fuzz.json");
    } catch (const ts::ModelError&) {
    }
    return 0;
}
