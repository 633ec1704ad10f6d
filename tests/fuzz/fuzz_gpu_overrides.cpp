// libFuzzer target: a user's GPU override file applied to the built-in database
// (ts::GpuDatabase::applyOverrides), which merges field by field and re-validates.
#include <string>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    ts::GpuDatabase db = ts::GpuDatabase::builtin();
    try {
        db.applyOverrides(text, "fuzz-user-gpus.json");
        for (const ts::GpuSpec& g : db.gpus()) db.find(g.id);
    } catch (const ts::ModelError&) {
    }
    return 0;
}
