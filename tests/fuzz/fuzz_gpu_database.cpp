// libFuzzer target: a complete GPU database file through ts::GpuDatabase::fromJson.
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        ts::GpuDatabase db = ts::GpuDatabase::fromJson(text, "fuzz-gpus.json");
        for (const ts::GpuSpec& g : db.gpus()) db.find(g.id);
    } catch (const ts::ModelError&) {
    }
    return 0;
}
