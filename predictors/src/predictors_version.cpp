#include "trainscope/predictors/version.h"
namespace ts::predictors {
int modelVersion() { return 0; }
}  // namespace ts::predictors
