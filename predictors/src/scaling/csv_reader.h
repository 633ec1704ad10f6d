#pragma once
// A small RFC 4180 reader (quoted fields with commas, doubled quotes, line breaks inside
// quotes; LF or CRLF). No CSV library is packaged for this project, and the format is small.
#include <string>
#include <vector>

namespace ts::predictors {

class CsvReader {
public:
    // `source` names the input in errors (ModelError "source: line N: ...").
    CsvReader(std::string text, std::string source);
    // The next record into `fields`; false at the end. Blank lines are skipped.
    bool next(std::vector<std::string>& fields);
    // The line on which the last record returned started (1-based).
    int line() const { return recordLine_; }

private:
    std::string text_;
    std::string source_;
    size_t pos_ = 0;
    int currentLine_ = 1;
    int recordLine_ = 0;
};

}  // namespace ts::predictors
