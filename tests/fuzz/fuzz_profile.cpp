// libFuzzer target: a profile file through ts::readProfile (the size and file checks, the JSON
// parser with its depth limit, then profileFromJson), via a temporary file as a user's file goes.
// A profile it accepts must also survive a write and a read: its JSON text, parsed and read
// again, must give the same document, or the fuzzer stops on it.
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_common.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/profile_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = ts::fuzz::writeTempFile(data, size, ".json");
    ts::Profile profile;
    try {
        profile = ts::readProfile(path);
    } catch (const ts::ModelError&) {
        return 0;
    }
    const nlohmann::json once = ts::profileToJson(profile);
    const std::string text = once.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    const nlohmann::json twice = ts::profileToJson(ts::profileFromJson(nlohmann::json::parse(text), "round trip"));
    if (once != twice) std::abort();  // a field that does not survive its own file
    return 0;
}
