#include "trainscope/predictors/iteration/data_parallel.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ts::predictors {
namespace {

constexpr double kLinkEfficiency = 0.8;

// PCIe per-lane, per-direction payload rate after line encoding, GB/s (PCI-SIG figures).
double pcieLaneGBs(int generation) {
    switch (generation) {
        case 1:
            return 0.25;
        case 2:
            return 0.5;
        case 3:
            return 0.985;
        case 4:
            return 1.969;
        case 5:
            return 3.938;
        case 6:
            return 7.563;
        default:
            return 0;
    }
}

std::string fixed(double v, int digits) {
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(digits);
    os << v;
    return os.str();
}

std::optional<LinkModel> pcieLink(const GpuSpec& gpu, std::string& reason) {
    const Interconnect& ic = gpu.interconnect;
    if (!ic.pcieGeneration.known() || !ic.pcieLanes.known() || pcieLaneGBs(int(*ic.pcieGeneration)) <= 0) {
        reason = gpu.name + ": its PCIe generation or width is not in the database";
        return std::nullopt;
    }
    const int gen = int(*ic.pcieGeneration), lanes = int(*ic.pcieLanes);
    LinkModel l;
    l.busBandwidthGBs = pcieLaneGBs(gen) * lanes * kLinkEfficiency;
    l.stepLatencyUs = 10;
    l.basis = "PCIe " + std::to_string(gen) + ".0 x" + std::to_string(lanes) + " (" +
              fixed(pcieLaneGBs(gen) * lanes, 1) + " GB/s per direction) x 0.8";
    return l;
}

}  // namespace

std::optional<LinkModel> linkFor(const GpuSpec& gpu, const DataParallel& dp, std::string& reason) {
    switch (dp.interconnect) {
        case InterconnectKind::NvLink: {
            const Interconnect& ic = gpu.interconnect;
            if (!ic.nvlinkBandwidthGBs.known() || *ic.nvlinkBandwidthGBs <= 0) {
                reason = gpu.name + " has no NVLink" + (ic.nvlinkBandwidthGBs.known() ? "" : " figure in the database");
                return std::nullopt;
            }
            LinkModel l;
            l.busBandwidthGBs = *ic.nvlinkBandwidthGBs / 2 * kLinkEfficiency;
            l.stepLatencyUs = 5;
            l.basis = "NVLink " + fixed(*ic.nvlinkBandwidthGBs, 0) +
                      " GB/s bidirectional per GPU (half per direction, all GPUs switched) x 0.8";
            return l;
        }
        case InterconnectKind::Pcie:
            return pcieLink(gpu, reason);
        case InterconnectKind::InfiniBand: {
            if (!(dp.infinibandGbps > 0)) {
                reason = "the InfiniBand rate must be positive";
                return std::nullopt;
            }
            LinkModel l;
            const double ib = dp.infinibandGbps / 8;
            l.busBandwidthGBs = ib * kLinkEfficiency;
            l.stepLatencyUs = 10;
            l.basis = "InfiniBand " + fixed(dp.infinibandGbps, 0) + " Gb/s per GPU x 0.8";
            std::string ignored;
            if (auto pcie = pcieLink(gpu, ignored); pcie && pcie->busBandwidthGBs < l.busBandwidthGBs) {
                l.busBandwidthGBs = pcie->busBandwidthGBs;
                l.basis += ", limited by " + pcie->basis;
            }
            return l;
        }
    }
    reason = "unknown interconnect";
    return std::nullopt;
}

std::vector<GradientBucket> gradientBuckets(const ModelAnalysis& m, const DataParallel& dp) {
    std::vector<GradientBucket> buckets;
    GradientBucket current;
    bool open = false;
    for (auto it = m.ops.rbegin(); it != m.ops.rend(); ++it) {
        if (it->parameterBytes <= 0) continue;
        current.bytes += it->parameterBytes;
        current.firstOp = it->op;
        open = true;
        const double cap = buckets.empty() ? dp.firstBucketBytes : dp.bucketBytes;
        if (current.bytes >= cap) {
            buckets.push_back(current);
            current = {};
            open = false;
        }
    }
    if (open) buckets.push_back(current);
    return buckets;
}

double allReduceMs(double bytes, int gpus, const LinkModel& link) {
    if (gpus <= 1 || bytes <= 0) return 0;
    const double n = gpus;
    return 2 * (n - 1) / n * bytes / (link.busBandwidthGBs * 1e9) * 1e3 + 2 * (n - 1) * link.stepLatencyUs * 1e-3;
}

double allGatherMs(double bytes, int gpus, const LinkModel& link) {
    if (gpus <= 1 || bytes <= 0) return 0;
    const double n = gpus;
    return (n - 1) / n * bytes / (link.busBandwidthGBs * 1e9) * 1e3 + (n - 1) * link.stepLatencyUs * 1e-3;
}

double reduceScatterMs(double bytes, int gpus, const LinkModel& link) {
    return allGatherMs(bytes, gpus, link);
}

double amortisedIterationMs(double iterationMs, double onceMs, int64_t k) {
    return iterationMs - onceMs * (1 - 1 / double(std::max<int64_t>(1, k)));
}

double exposedCommunicationMs(const std::vector<double>& readyMs, const std::vector<double>& commMs,
                              double backwardMs) {
    double end = 0;
    for (size_t j = 0; j < readyMs.size() && j < commMs.size(); ++j) end = std::max(end, readyMs[j]) + commMs[j];
    return std::max(0.0, end - backwardMs);
}

}  // namespace ts::predictors
