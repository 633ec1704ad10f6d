// Local GPU detection through the CUDA runtime (linked statically: it loads the driver,
// libcuda.so.1, on first use, so a machine without one gets a status instead of a crash).
#include "trainscope/kernels/device_query.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace ts::kernels {
namespace {

std::string cudaVersionText(int version) {  // 13000 -> "13.0"
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Why the runtime found no usable device, as one sentence for the user.
std::string noDeviceStatus(cudaError_t err, int driverVersion, int runtimeVersion) {
    const std::string tail = ": GPU measurement is unavailable; analysis and prediction still work";
    if (err == cudaErrorInsufficientDriver && driverVersion == 0)
        return "no NVIDIA driver was found (libcuda.so.1 could not be loaded)" + tail;
    if (err == cudaErrorInsufficientDriver)
        return "the NVIDIA driver supports CUDA " + cudaVersionText(driverVersion) + " but this build needs CUDA " +
               cudaVersionText(runtimeVersion) + " or newer: update the driver" + tail;
    if (err == cudaErrorNoDevice) {
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        if (visible)
            return "the NVIDIA driver reports no CUDA device (CUDA_VISIBLE_DEVICES=\"" + std::string(visible) + "\")" +
                   tail;
        return "the NVIDIA driver reports no CUDA device" + tail;
    }
    return std::string("the CUDA runtime could not start: ") + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) +
           ")" + tail;
}

int attribute(cudaDeviceAttr attr, int device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return value;
}

std::string readLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// "16.0 GT/s PCIe" -> 4. The CUDA runtime does not report the PCIe link, Linux's sysfs does.
int pcieGeneration(const std::string& speed) {
    const double gts = std::atof(speed.c_str());
    if (gts >= 60) return 6;
    if (gts >= 30) return 5;
    if (gts >= 15) return 4;
    if (gts >= 7.5) return 3;
    if (gts >= 4.5) return 2;
    if (gts >= 2) return 1;
    return 0;
}

// The link's capability: the lower of the GPU's and its upstream port's maximum (the current
// speed drops while the GPU idles, so it would understate the link).
void fillPcieLink(ts::DeviceProperties& props) {
    const std::string dir = "/sys/bus/pci/devices/" + props.pciBusId;
    const int gpuGen = pcieGeneration(readLine(dir + "/max_link_speed"));
    if (gpuGen == 0) return;
    const int portGen = pcieGeneration(readLine(dir + "/../max_link_speed"));
    props.pciGeneration = portGen > 0 ? std::min(gpuGen, portGen) : gpuGen;
    const int width = std::atoi(readLine(dir + "/current_link_width").c_str());
    props.pciLinkWidth = width > 0 ? width : std::atoi(readLine(dir + "/max_link_width").c_str());
}

std::string uuidText(const cudaUUID_t& uuid) {
    std::string text = "GPU-";
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
        text += hex;
    }
    return text;
}

int mhz(int khz) {
    return (khz + 500) / 1000;
}

bool describeDevice(int index, ts::DeviceProperties& props) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, index) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    props.index = index;
    props.name = p.name;
    props.uuid = uuidText(p.uuid);
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", static_cast<unsigned>(p.pciDomainID),
                  static_cast<unsigned>(p.pciBusID), static_cast<unsigned>(p.pciDeviceID));
    props.pciBusId = bus;
    props.ccMajor = p.major;
    props.ccMinor = p.minor;
    props.sms = p.multiProcessorCount;
    props.totalMemoryBytes = p.totalGlobalMem;
    // CUDA 13 removed clockRate and memoryClockRate from cudaDeviceProp; both are in kHz.
    props.maxSmClockMHz = mhz(attribute(cudaDevAttrClockRate, index));
    props.memoryClockMHz = mhz(attribute(cudaDevAttrMemoryClockRate, index));
    props.memoryBusWidthBits = p.memoryBusWidth;
    props.l2CacheBytes = p.l2CacheSize;
    props.maxThreadsPerSm = p.maxThreadsPerMultiProcessor;
    props.maxBlocksPerSm = p.maxBlocksPerMultiProcessor;
    props.registersPerSm = p.regsPerMultiprocessor;
    props.registersPerBlock = p.regsPerBlock;
    props.maxThreadsPerBlock = p.maxThreadsPerBlock;
    props.warpSize = p.warpSize;
    props.sharedMemoryPerSmBytes = static_cast<int>(p.sharedMemPerMultiprocessor);
    props.sharedMemoryPerBlockBytes = static_cast<int>(p.sharedMemPerBlock);
    props.sharedMemoryPerBlockOptinBytes = static_cast<int>(p.sharedMemPerBlockOptin);
    props.reservedSharedMemoryPerBlockBytes = static_cast<int>(p.reservedSharedMemPerBlock);
    props.eccEnabled = p.ECCEnabled != 0;
    fillPcieLink(props);
    return true;
}

}  // namespace

ts::DeviceQuery queryDevices() {
    ts::DeviceQuery q;
    q.cudaBuild = true;
    (void)cudaRuntimeGetVersion(&q.runtimeVersion);
    (void)cudaDriverGetVersion(&q.driverVersion);  // 0 when no driver is installed

    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        q.status = noDeviceStatus(err == cudaSuccess ? cudaErrorNoDevice : err, q.driverVersion, q.runtimeVersion);
        return q;
    }
    for (int i = 0; i < count; ++i) {
        ts::DeviceProperties props;
        if (describeDevice(i, props)) q.devices.push_back(std::move(props));
    }
    if (q.devices.empty()) {
        q.status = "the NVIDIA driver lists " + std::to_string(count) +
                   " CUDA device(s) but none could be queried: GPU measurement is unavailable";
        return q;
    }
    q.available = true;
    q.status = "found " + std::to_string(q.devices.size()) + " CUDA device" + (q.devices.size() > 1 ? "s" : "") + ":";
    for (const ts::DeviceProperties& d : q.devices) {
        q.status += std::string(&d == &q.devices.front() ? " " : ", ") + std::to_string(d.index) + " " + d.name +
                    " (compute capability " + std::to_string(d.ccMajor) + "." + std::to_string(d.ccMinor);
        if (d.ccMajor * 10 + d.ccMinor < kMinComputeCapability) q.status += ", too old for this build's kernels";
        q.status += ")";
    }
    q.status += "; the driver supports CUDA " + cudaVersionText(q.driverVersion);
    return q;
}

}  // namespace ts::kernels
