#include "ops/registry.h"

namespace ts::ops {
void registerMiscOps(std::vector<OpDef>& t) { (void)t; }
}  // namespace ts::ops
