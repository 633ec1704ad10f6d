#pragma once
// A walk over a Python pickle's opcodes that refuses what would make an unpickler allocate without
// bound: a string, bytes or integer whose stated length runs past the end of the data, a memo index
// larger than the pickle could ever have stored, a frame longer than the data. LibTorch's unpickler
// trusts those lengths and allocates (and fills) gigabytes for a corrupted 5 KB TorchScript file
// before noticing; this check runs first and takes microseconds.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ts {

// nullopt when every length is consistent (or the walk meets an opcode it does not know, which the
// unpickler will then report itself); otherwise the problem, e.g.
// "BINUNICODE at byte 112 claims 4294967040 bytes, only 2030 remain".
std::optional<std::string> findPickleLengthProblem(const uint8_t* data, size_t size);

}  // namespace ts
