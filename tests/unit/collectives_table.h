#pragma once
// XLA's measured collective throughput (../shared/data/xla-perf-tables/collectives.csv, its README):
// the rows of one GPU, collective and group size, for the tests that check the link models on them.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ts::test_data {

struct MeasuredCollective {
    std::string opcode;           // "all-reduce", "all-gather", "reduce-scatter", ...
    double bytes = 0;             // of the operand
    double bytesPerSecond = 0;    // XLA's network_throughput_bytes_per_s: operand bytes per second
};

inline std::filesystem::path collectivesTablePath() {
    return std::filesystem::path(TRAINSCOPE_SOURCE_DIR) / ".." / "shared" / "data" / "xla-perf-tables" /
           "collectives.csv";
}

// Rows of `gpu` ("sm_90": H100 SXM) over groups of `groupSize`, any collective; empty without the file.
inline std::vector<MeasuredCollective> measuredCollectives(const std::string& gpu, int groupSize) {
    std::vector<MeasuredCollective> rows;
    std::ifstream in(collectivesTablePath());
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
        if (f.size() != 8 || f[0] != gpu || f[6] != std::to_string(groupSize)) continue;
        rows.push_back({f[1], std::stod(f[4]), std::stod(f[7])});
    }
    return rows;
}

}  // namespace ts::test_data
