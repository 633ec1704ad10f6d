#pragma once
// The user's own GPU file (docs/gpu-database.md): where it is, and the price per GPU-hour the user
// gives a GPU there (the explorer's Prices dialog writes it).
#include <optional>
#include <string>

namespace ts {

// $XDG_CONFIG_HOME/trainscope/gpus.json, or ~/.config/trainscope/gpus.json; empty without either.
std::string userGpuFilePath();

// The source the user's own prices cite, added to the file with them.
inline constexpr const char* kUserPriceSource = "user-prices";

// Sets (a value > 0) or removes (nullopt) the user's price for `gpuId` in the GPU file at `path`,
// dated `date`: that GPU's "prices" become this one price, which then wins over the built-in ones
// (and removing it brings those back). The file is created where missing; its other entries are
// kept. Nothing is written, and ModelError names `path`, when the file exists but is not a GPU
// file or the result would not load on top of the built-in database.
void setUserPrice(const std::string& path, const std::string& gpuId, std::optional<double> usdPerGpuHour,
                  const std::string& date);

}  // namespace ts
