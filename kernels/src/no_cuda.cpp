// Built instead of the CUDA sources when no CUDA toolkit was found: the same API, saying why
// nothing can be measured.
#include "trainscope/core/errors.h"
#include "trainscope/kernels/calibration.h"
#include "trainscope/kernels/device_query.h"

namespace ts::kernels {
namespace {
const char* const kNoCuda =
    "this build of TrainScope has no CUDA support (it was built without the CUDA toolkit): GPU measurement is "
    "unavailable; analysis and prediction still work";
}

ts::DeviceQuery queryDevices() {
    ts::DeviceQuery q;
    q.status = kNoCuda;
    return q;
}

ts::CalibrationResult calibrate(const CalibrationOptions&) {
    throw ts::DeviceError(kNoCuda);
}

}  // namespace ts::kernels
