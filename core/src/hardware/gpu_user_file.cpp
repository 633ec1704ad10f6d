#include "trainscope/core/gpu_user_file.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trainscope/core/atomic_file.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/gpu_json.h"

namespace ts {

using nlohmann::json;

std::string userGpuFilePath() {
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/trainscope/gpus.json";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.config/trainscope/gpus.json";
    return {};
}

void setUserPrice(const std::string& path, const std::string& gpuId, std::optional<double> usd,
                  const std::string& date) {
    json doc = {{"format", kGpuDatabaseFormat}, {"version", kGpuDatabaseVersion}};
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            doc = json::parse(ss.str());
        } catch (const json::exception& e) {
            throw ModelError(path, std::string("not valid JSON: ") + e.what());
        }
        if (!doc.is_object() || doc.value("format", "") != kGpuDatabaseFormat)
            throw ModelError(path, "exists but is not a TrainScope GPU file");
    }
    if (!doc.contains("gpus") || !doc["gpus"].is_array()) doc["gpus"] = json::array();
    json& gpus = doc["gpus"];
    auto entry = gpus.end();
    for (auto it = gpus.begin(); it != gpus.end(); ++it)
        if (it->is_object() && it->value("id", "") == gpuId) entry = it;
    if (usd) {
        if (!(*usd > 0)) throw ModelError(path, "a price per GPU-hour must be positive");
        if (!doc.contains("sources") || !doc["sources"].is_object()) doc["sources"] = json::object();
        doc["sources"][kUserPriceSource] = {{"title", "prices given in TrainScope's Prices dialog"},
                                            {"url", "file://" + path}, {"accessed", date}};
        const json price = {{"provider", "own price"}, {"usd_per_gpu_hour", *usd}, {"source", kUserPriceSource},
                            {"date", date}, {"note", "set in the Prices dialog"}};
        if (entry == gpus.end()) gpus.push_back({{"id", gpuId}, {"prices", json::array({price})}});
        else (*entry)["prices"] = json::array({price});
    } else if (entry != gpus.end()) {
        entry->erase("prices");
        if (entry->size() == 1) gpus.erase(entry);  // only the id was left
    }
    GpuDatabase check = GpuDatabase::builtin();
    check.applyOverrides(doc.dump(), path);  // throws, naming the file, before anything is written
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    writeFileAtomically(path, doc.dump(2) + "\n");
}

}  // namespace ts
