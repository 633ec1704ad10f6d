#pragma once
// Every file TrainScope writes goes through here: the content is written to a temporary file
// beside the target, flushed to disk, and renamed over it, so an interrupted or failed write
// never leaves a half-written file in place of a good one.
#include <functional>
#include <ostream>
#include <string>

namespace ts {

// Calls `write` with a stream to a temporary file, then replaces `path` with it. If `write`
// throws or any step fails, `path` is left as it was, the temporary file is removed, and a
// ModelError naming `path` (or the exception from `write`) propagates.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write);
void writeFileAtomically(const std::string& path, const std::string& content);

}  // namespace ts
