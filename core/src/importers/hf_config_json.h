#pragma once
// Internal: the JSON side of reading a Hugging Face config.json, shared by hf_config_reader.cpp (the
// family, the head, the options) and hf_config_fields.cpp and hf_config_encoder_fields.cpp (the sizes and fields of
// each family).
#include <charconv>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "importers/hf_config.h"

namespace ts::hf {

using json = nlohmann::json;

// Limits well above every published model (Llama 3.1 405B: hidden 16384, 126 layers, vocab 128256).
inline constexpr int64_t kMaxHidden = int64_t(1) << 17;
inline constexpr int64_t kMaxIntermediate = int64_t(1) << 20;
inline constexpr int64_t kMaxLayers = 1024;
inline constexpr int64_t kMaxHeads = 4096;
inline constexpr int64_t kMaxVocab = int64_t(1) << 24;
inline constexpr int64_t kMaxPositions = int64_t(1) << 24;
inline constexpr int64_t kMaxImage = int64_t(1) << 14;
inline constexpr int64_t kMaxBatch = int64_t(1) << 20;
inline constexpr int64_t kMaxExperts = 4096;

// The config's fields, typed and bounded: each accessor throws ConfigError naming the field.
class Reader {
public:
    explicit Reader(const json& doc) : doc_(doc) {}

    bool has(const char* key) const {
        auto it = doc_.find(key);
        return it != doc_.end() && !it->is_null();
    }

    // A whole number in [min, max]; `def` when absent (or null), required when def < 0.
    int64_t integer(const char* key, int64_t min, int64_t max, int64_t def = -1) const {
        if (!has(key)) {
            if (def < 0) throw ConfigError(std::string("\"") + key + "\" is missing");
            return def;
        }
        const json& v = doc_.at(key);
        if (!v.is_number_integer())
            throw ConfigError(std::string("\"") + key + "\" must be a whole number, got " + v.dump());
        if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
            throw ConfigError(std::string("\"") + key + "\" is out of range: " + v.dump());
        const int64_t x = v.get<int64_t>();
        if (x < min || x > max)
            throw ConfigError(std::string("\"") + key + "\" must be between " + std::to_string(min) + " and " +
                              std::to_string(max) + ", got " + std::to_string(x));
        return x;
    }

    double number(const char* key, double min, double max, double def) const {
        if (!has(key)) return def;
        const json& v = doc_.at(key);
        if (!v.is_number()) throw ConfigError(std::string("\"") + key + "\" must be a number, got " + v.dump());
        const double x = v.get<double>();
        if (!(x >= min && x <= max))
            throw ConfigError(std::string("\"") + key + "\" must be between " + fmt(min) + " and " + fmt(max) +
                              ", got " + v.dump());
        return x;
    }

    bool boolean(const char* key, bool def) const {
        if (!has(key)) return def;
        const json& v = doc_.at(key);
        if (!v.is_boolean()) throw ConfigError(std::string("\"") + key + "\" must be true or false, got " + v.dump());
        return v.get<bool>();
    }

    std::string string(const char* key, const std::string& def) const {
        if (!has(key)) return def;
        const json& v = doc_.at(key);
        if (!v.is_string()) throw ConfigError(std::string("\"") + key + "\" must be a string, got " + v.dump());
        return v.get<std::string>();
    }

    // A number that transformers 5 keeps in rope_parameters and older configs at the top level.
    double ropeNumber(const char* key, const char* legacyKey, double def) const {
        if (has("rope_parameters")) {
            const json& rope = doc_.at("rope_parameters");
            if (!rope.is_object()) throw ConfigError("\"rope_parameters\" must be an object");
            if (rope.contains(key) && !rope.at(key).is_null()) return Reader(rope).number(key, 0, 1, def);
        }
        if (has(key)) return number(key, 0, 1, def);
        if (legacyKey && has(legacyKey)) return number(legacyKey, 0, 1, def);
        return def;
    }

    const json& doc() const { return doc_; }

private:
    static std::string fmt(double x) {
        char buf[32];
        auto r = std::to_chars(buf, buf + sizeof buf, x);
        return std::string(buf, r.ptr);
    }
    const json& doc_;
};

// TrainScope's activation operator for a transformers activation name (`key` names the field).
std::string activationOf(const std::string& name, const char* key);

// The sizes and fields of a decoder family's config (readDecoder) and of BERT, RoBERTa and ViT's
// (readEncoder), with transformers' defaults. Throw ConfigError.
void readDecoder(Config& c, const Reader& r);
// Which layers slide (Config::slidingLayers): `layer_types` when given, else all but each `pattern`-th.
void readLayerTypes(Config& c, const Reader& r, int64_t pattern);
void readEncoder(Config& c, const Reader& r);
void readSeq2Seq(Config& c, const Reader& r);  // bart, mbart
void readT5(Config& c, const Reader& r);       // t5, mt5

}  // namespace ts::hf
