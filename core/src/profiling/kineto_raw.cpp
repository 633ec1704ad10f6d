// The record store of the streaming pass (kineto_raw.h): names and threads interned as they are
// first seen, so that a record holds small ids.
#include "kineto_raw.h"

namespace ts::kineto {

int32_t RawTrace::intern(std::string_view s) {
    auto it = stringIndex.find(s);
    if (it != stringIndex.end()) return it->second;
    const auto id = int32_t(trace.strings.size());
    trace.strings.emplace_back(s);
    stringIndex.emplace(std::string(s), id);
    return id;
}

int32_t RawTrace::threadOf(const std::string& pid, const std::string& tid) {
    std::string key = pid + '\x1f' + tid;
    auto it = threadIndex.find(key);
    if (it != threadIndex.end()) return it->second;
    const auto id = int32_t(trace.threads.size());
    trace.threads.push_back({pid, tid});
    threadIndex.emplace(std::move(key), id);
    return id;
}

}  // namespace ts::kineto
