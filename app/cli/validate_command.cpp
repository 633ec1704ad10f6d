#include "validate_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/profile/profile_validation.h"

#ifndef TRAINSCOPE_PROFILES_DIR
#define TRAINSCOPE_PROFILES_DIR "tests/data/profiles"
#endif

namespace ts::cli {
namespace {

using namespace ts::predictors;
using nlohmann::json;

std::string percent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
    return buf;
}

std::string number(double v, const char* format) {
    char buf[48];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

json statsJson(const ErrorStats& s) {
    return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}};
}

json validationJson(const std::string& dir, const ProfileValidation& v) {
    json kinds = json::array();
    for (const ValidationKindSummary& k : v.kinds)
        kinds.push_back({{"kind", validationKindName(k.kind)},
                         {"target", k.target},
                         {"iteration_time", statsJson(k.time)},
                         {"peak_memory", statsJson(k.memory)},
                         {"notes", k.notes}});
    json rows = json::array();
    for (const ValidationRow& r : v.rows) {
        json row = {{"kind", validationKindName(r.kind)},
                    {"profile", r.profile},
                    {"from", r.from},
                    {"to", r.to},
                    {"batch", r.batch},
                    {"measured_ms", r.measuredMs},
                    {"predicted_ms", r.predictedMs},
                    {"time_error", r.msError}};
        if (r.bytesError) {
            row["measured_peak_bytes"] = *r.measuredBytes;
            row["predicted_peak_bytes"] = *r.predictedBytes;
            row["memory_error"] = *r.bytesError;
        }
        rows.push_back(std::move(row));
    }
    return {{"directory", dir}, {"kinds", kinds}, {"rows", rows}};
}

void printValidation(std::ostream& os, const std::string& dir, const ProfileValidation& v) {
    os << "Profiles in " << dir << ": each measured run predicted from the others "
       << "(error = |predicted - measured| / measured)\n\n";
    os << "kind         count   time mean  time median   memory mean  memory median   target\n";
    for (const ValidationKindSummary& k : v.kinds) {
        char line[200];
        if (k.time.count == 0) {
            std::snprintf(line, sizeof line, "%-12s %5d   %9s  %11s   %11s  %13s   %6s\n", validationKindName(k.kind),
                          0, "-", "-", "-", "-", percent(k.target).c_str());
        } else {
            std::snprintf(line, sizeof line, "%-12s %5d   %9s  %11s   %11s  %13s   %6s\n", validationKindName(k.kind),
                          k.time.count, percent(k.time.mean).c_str(), percent(k.time.median).c_str(),
                          k.memory.count ? percent(k.memory.mean).c_str() : "-",
                          k.memory.count ? percent(k.memory.median).c_str() : "-", percent(k.target).c_str());
        }
        os << line;
        for (const std::string& n : k.notes) os << "  not predicted: " << n << "\n";
    }
    os << "\n";
    for (const ValidationKindSummary& k : v.kinds) {
        bool header = false;
        for (const ValidationRow& r : v.rows) {
            if (r.kind != k.kind) continue;
            if (!header) {
                os << validationKindName(k.kind) << ":\n";
                os << "  profile                                            from                 to                    "
                      " "
                      "measured ms  predicted ms   error   measured MB  predicted MB   error\n";
                header = true;
            }
            char line[400];
            std::snprintf(line, sizeof line, "  %-50s %-20s %-22s %11s  %12s  %6s   %11s  %12s  %6s\n",
                          r.profile.c_str(), r.from.c_str(), r.to.c_str(), number(r.measuredMs, "%.2f").c_str(),
                          number(r.predictedMs, "%.2f").c_str(), percent(r.msError).c_str(),
                          r.bytesError ? number(*r.measuredBytes / 1e6, "%.1f").c_str() : "-",
                          r.bytesError ? number(*r.predictedBytes / 1e6, "%.1f").c_str() : "-",
                          r.bytesError ? percent(*r.bytesError).c_str() : "-");
            os << line;
        }
    }
}

}  // namespace

CLI::App* addValidateCommand(CLI::App& app, ValidateOptions& o) {
    CLI::App* cmd =
        app.add_subcommand("validate",
                           "Predict every recorded profile from every other one (leave one batch size out, other "
                           "precisions, other GPUs) and print the errors, their means and medians, and the targets.");
    cmd->add_option("DIR", o.dir, "directory of profiles, searched recursively (default: " TRAINSCOPE_PROFILES_DIR ")")
        ->check(CLI::ExistingDirectory);
    cmd->add_flag("--json", o.json, "print JSON: directory, kinds[] (count, mean, median, target, notes), rows[]");
    cmd->add_option("--gpu-db", o.gpuDbFiles, "extra GPU file(s) applied after the built-in database")
        ->check(CLI::ExistingFile);
    return cmd;
}

int runValidate(const ValidateOptions& o) {
    const std::string dir = o.dir.empty() ? std::string(TRAINSCOPE_PROFILES_DIR) : o.dir;
    const GpuDatabase db = GpuDatabase::load(o.gpuDbFiles);
    const ProfileValidation v = validateProfiles(readProfileDirectory(dir), db);
    if (o.json)
        std::cout << validationJson(dir, v).dump(1) << "\n";
    else
        printValidation(std::cout, dir, v);
    return 0;
}

}  // namespace ts::cli
