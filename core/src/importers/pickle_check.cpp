#include "importers/pickle_check.h"

#include <cstring>

namespace ts {
namespace {

uint64_t readLittleEndian(const uint8_t* p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

enum class Arg : uint8_t {
    None,
    Fixed,       // `width` bytes
    Line,        // up to a newline
    TwoLines,    // GLOBAL and INST: module and name
    Counted,     // a `width`-byte length, then that many bytes
    MemoIndex,   // a `width`-byte memo index
    Frame,       // an 8-byte frame length
    Unknown,
};

struct OpInfo {
    Arg arg = Arg::Unknown;
    int width = 0;
    const char* name = "?";
};

OpInfo opInfo(uint8_t op) {
    switch (op) {
        // No argument.
        case '(': case '.': case '0': case '1': case '2': case 'N': case 'Q': case 'R': case 'a': case 'b':
        case 'd': case '}': case 'e': case 'l': case ']': case 'o': case 's': case 't': case ')': case 'u':
        case 0x81: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8f: case 0x90: case 0x91:
        case 0x92: case 0x93: case 0x94: case 0x97: case 0x98:
            return {Arg::None, 0, "opcode"};
        case 'K': case 0x80: case 0x82: return {Arg::Fixed, 1, "opcode"};
        case 'M': case 0x83: return {Arg::Fixed, 2, "opcode"};
        case 'J': case 0x84: return {Arg::Fixed, 4, "opcode"};
        case 'G': return {Arg::Fixed, 8, "BINFLOAT"};
        case 'F': case 'I': case 'L': case 'P': case 'S': case 'V': case 'g': case 'p':
            return {Arg::Line, 0, "text opcode"};
        case 'c': case 'i': return {Arg::TwoLines, 0, "GLOBAL"};
        case 'U': return {Arg::Counted, 1, "SHORT_BINSTRING"};
        case 'C': return {Arg::Counted, 1, "SHORT_BINBYTES"};
        case 0x8c: return {Arg::Counted, 1, "SHORT_BINUNICODE"};
        case 0x8a: return {Arg::Counted, 1, "LONG1"};
        case 'T': return {Arg::Counted, 4, "BINSTRING"};
        case 'X': return {Arg::Counted, 4, "BINUNICODE"};
        case 'B': return {Arg::Counted, 4, "BINBYTES"};
        case 0x8b: return {Arg::Counted, 4, "LONG4"};
        case 0x8d: return {Arg::Counted, 8, "BINUNICODE8"};
        case 0x8e: return {Arg::Counted, 8, "BINBYTES8"};
        case 0x96: return {Arg::Counted, 8, "BYTEARRAY8"};
        case 'h': case 'q': return {Arg::MemoIndex, 1, "BINGET/BINPUT"};
        case 'j': case 'r': return {Arg::MemoIndex, 4, "LONG_BINGET/LONG_BINPUT"};
        case 0x95: return {Arg::Frame, 8, "FRAME"};
        default: return {};
    }
}

}  // namespace

std::optional<std::string> findPickleLengthProblem(const uint8_t* data, size_t size) {
    size_t pos = 0;
    auto problem = [&](const char* name, size_t at, uint64_t claimed) {
        return std::string(name) + " at byte " + std::to_string(at) + " claims " + std::to_string(claimed) +
               " bytes, only " + std::to_string(size - pos) + " remain";
    };
    auto lineEnd = [&](size_t from) -> std::optional<size_t> {
        const void* nl = std::memchr(data + from, '\n', size - from);
        if (!nl) return std::nullopt;
        return static_cast<size_t>(static_cast<const uint8_t*>(nl) - data) + 1;
    };
    while (pos < size) {
        const size_t at = pos;
        const uint8_t op = data[pos++];
        const OpInfo info = opInfo(op);
        if (op == '.') return std::nullopt;  // STOP: the rest is not pickle data
        switch (info.arg) {
            case Arg::Unknown: return std::nullopt;
            case Arg::None: break;
            case Arg::Fixed:
                if (size - pos < static_cast<size_t>(info.width)) return problem(info.name, at, info.width);
                pos += static_cast<size_t>(info.width);
                break;
            case Arg::Line:
            case Arg::TwoLines: {
                auto end = lineEnd(pos);
                if (end && info.arg == Arg::TwoLines) end = lineEnd(*end);
                if (!end) return std::string(info.name) + " at byte " + std::to_string(at) + " has no line end";
                pos = *end;
                break;
            }
            case Arg::Counted:
            case Arg::MemoIndex:
            case Arg::Frame: {
                if (size - pos < static_cast<size_t>(info.width)) return problem(info.name, at, info.width);
                const uint64_t value = readLittleEndian(data + pos, info.width);
                pos += static_cast<size_t>(info.width);
                if (info.arg == Arg::MemoIndex) {
                    // Each memo entry takes at least one opcode, so an index beyond the pickle's size
                    // was never stored (and would make the unpickler grow its memo to that size).
                    if (value > size)
                        return std::string(info.name) + " at byte " + std::to_string(at) + " uses memo index " +
                               std::to_string(value) + " in a pickle of " + std::to_string(size) + " bytes";
                } else if (value > size - pos) {
                    return problem(info.name, at, value);
                } else if (info.arg == Arg::Counted) {
                    pos += static_cast<size_t>(value);
                }
                break;
            }
        }
    }
    return std::nullopt;
}

}  // namespace ts
