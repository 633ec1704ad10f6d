#pragma once
namespace ts::predictors {
// Version of the prediction models; bumped when their output changes.
int modelVersion();
}  // namespace ts::predictors
