#pragma once
// Reading and merging GPU database documents (resources/gpus.json and user files).
#include <map>
#include <string>
#include <vector>

#include "trainscope/core/gpu_json.h"

namespace ts::gpudb {

struct ParsedDatabase {
    std::vector<GpuSpec> gpus;
    std::map<std::string, GpuSource> sources;
    std::map<std::string, ArchLimits> architectures;
    PriceSnapshot priceSnapshot;
    Amortisation amortisation;
};

// Parse JSON text, checking the format marker and version; errors name `origin`.
nlohmann::json parseDocumentText(const std::string& text, const std::string& origin);
// Structs from a (merged) document; throws ModelError naming `origin` and the entry.
ParsedDatabase parseDocument(const nlohmann::json& doc, const std::string& origin);
// Apply a user document to a merged one: GPUs and architectures merge by key field by
// field, figures, "prices" and "purchase" are replaced whole, sources and "amortisation" merge
// by key, "prices_snapshot" is replaced.
void mergeDocument(nlohmann::json& base, const nlohmann::json& patch, const std::string& origin);

}  // namespace ts::gpudb
