#include "trainscope/core/costs.h"
namespace ts { ModelCosts computeCosts(const Graph&, int64_t, int64_t) { return {}; } }
