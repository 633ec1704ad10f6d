#pragma once
// What the hardware-choice tables (hardware_choice_tables.cpp, trace_choice_tables.cpp) write the
// same way: numbers in their shortest exact form and RFC 4180 CSV fields.
#include <charconv>
#include <string>

namespace ts::predictors {

// The shortest text that reads back as the same double.
inline std::string number(double v) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::string();
}

// Quoted (quotes doubled) when it holds a comma, a quote or a line break.
inline std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"') out += '"';
        out += ch;
    }
    return out + "\"";
}

}  // namespace ts::predictors
