#include "ops/registry.h"

namespace ts::ops {
void registerRecurrentOps(std::vector<OpDef>& t) { (void)t; }
}  // namespace ts::ops
