#include "scaling/csv_reader.h"

#include "trainscope/core/errors.h"

namespace ts::predictors {

CsvReader::CsvReader(std::string text, std::string source) : text_(std::move(text)), source_(std::move(source)) {
    if (text_.size() >= 3 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // UTF-8 byte-order mark
}

bool CsvReader::next(std::vector<std::string>& fields) {
    fields.clear();
    // Skip blank lines between records.
    while (pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r')) {
        if (text_[pos_] == '\n') ++currentLine_;
        ++pos_;
    }
    if (pos_ >= text_.size()) return false;
    recordLine_ = currentLine_;
    std::string field;
    bool quoted = false;     // inside a quoted field
    bool wasQuoted = false;  // the current field started with a quote
    while (pos_ < text_.size()) {
        const char c = text_[pos_++];
        if (quoted) {
            if (c == '"') {
                if (pos_ < text_.size() && text_[pos_] == '"') {
                    field += '"';
                    ++pos_;
                } else {
                    quoted = false;
                }
            } else {
                if (c == '\n') ++currentLine_;
                field += c;
            }
            continue;
        }
        if (c == ',') {
            fields.push_back(std::move(field));
            field.clear();
            wasQuoted = false;
        } else if (c == '"' && field.empty() && !wasQuoted) {
            quoted = wasQuoted = true;
        } else if (c == '\n') {
            ++currentLine_;
            break;
        } else if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') {
            // CRLF: the LF ends the record on the next turn.
        } else {
            field += c;
        }
    }
    if (quoted) throw ModelError(source_, "line " + std::to_string(recordLine_) + ": a quoted field is never closed");
    fields.push_back(std::move(field));
    return true;
}

}  // namespace ts::predictors
