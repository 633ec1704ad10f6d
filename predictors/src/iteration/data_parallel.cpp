#include "trainscope/predictors/iteration/data_parallel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
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
    l.used = InterconnectKind::Pcie;
    l.busBandwidthGBs = pcieLaneGBs(gen) * lanes * kLinkEfficiency;
    l.stepLatencyUs = 10;
    l.basis = "PCIe " + std::to_string(gen) + ".0 x" + std::to_string(lanes) + " (" +
              fixed(pcieLaneGBs(gen) * lanes, 1) + " GB/s per direction) x 0.8";
    return l;
}

// NVLink as the GPU's topology allows for `gpus` GPUs; PCIe with a notice where it does not.
std::optional<LinkModel> nvlinkOrPcie(const GpuSpec& gpu, int gpus, std::string& reason) {
    const Interconnect& ic = gpu.interconnect;
    const NvLinkTopologyInfo& topo = ic.nvlinkTopology;
    std::string why;
    if (!ic.nvlinkBandwidthGBs.known() || *ic.nvlinkBandwidthGBs <= 0 || topo.kind == NvLinkTopology::None) {
        why = gpu.name + (ic.nvlinkBandwidthGBs.known() ? " has no NVLink" : " has no NVLink figure in the database");
    } else if (topo.kind != NvLinkTopology::Unknown && gpus > topo.maxGpus) {
        why = gpu.name + "'s NVLink joins at most " + std::to_string(topo.maxGpus) + " GPUs (" +
              (topo.kind == NvLinkTopology::Bridge ? "bridged pairs"
               : topo.kind == NvLinkTopology::Mesh ? "a hybrid cube-mesh board"
                                                   : "an NVSwitch board") +
              "), not " + std::to_string(gpus);
    }
    if (!why.empty()) {
        auto l = pcieLink(gpu, reason);
        if (!l) return l;
        l->used = InterconnectKind::Pcie;
        l->notice = why + ": the all-reduce runs over PCIe instead of NVLink";
        return l;
    }
    LinkModel l;
    l.busBandwidthGBs = *ic.nvlinkBandwidthGBs / 2 * kLinkEfficiency;
    l.stepLatencyUs = 5;
    const double gbs = *ic.nvlinkBandwidthGBs;
    const std::string bw = fixed(gbs, gbs == std::floor(gbs) ? 0 : 1);
    switch (topo.kind) {
        case NvLinkTopology::Bridge:
            l.basis = "an NVLink bridge between the 2 cards (" + bw + " GB/s bidirectional, half per direction) x 0.8";
            break;
        case NvLinkTopology::Mesh: {
            // NCCL's rings on a mesh run over direct links only, so a job on the board's first N GPUs
            // has the links among those N: each GPU sends and receives over at most its links to the
            // others, and the bus bandwidth is that share of its NVLink bandwidth (DGX-1 V100: 1 of 6
            // links for 2 GPUs, 4 for 4, all 6 for 8).
            const std::vector<std::vector<int>>& m = topo.links;
            if (!m.empty() && gpus >= 2 && size_t(gpus) <= m.size()) {
                int least = 0, total = 0;
                for (int i = 0; i < gpus; ++i) {
                    int among = 0, all = 0;
                    for (size_t k = 0; k < m.size(); ++k) {
                        all += m[size_t(i)][k];
                        if (int(k) < gpus) among += m[size_t(i)][k];
                    }
                    if (i == 0 || among < least) least = among;
                    total = std::max(total, all);
                }
                if (least == 0) {  // a GPU with no direct link to the others: NCCL goes over PCIe
                    auto pcie = pcieLink(gpu, reason);
                    if (!pcie) return pcie;
                    pcie->notice = gpu.name + ": the board's first " + std::to_string(gpus) +
                                   " GPUs are not all joined by direct NVLinks: the all-reduce runs over PCIe";
                    return pcie;
                }
                if (total > 0 && least < total) {
                    l.busBandwidthGBs *= double(least) / total;
                    l.basis = "NVLink " + bw + " GB/s bidirectional per GPU over " + std::to_string(total) +
                              " links in a hybrid cube-mesh; the board's first " + std::to_string(gpus) +
                              " GPUs have " + std::to_string(least) + " of them to each other (rings over " +
                              "direct links, half per direction) x 0.8";
                    break;
                }
            }
            l.basis = "NVLink " + bw +
                      " GB/s bidirectional per GPU in a hybrid cube-mesh (rings over direct links, "
                      "half per direction) x 0.8";
            break;
        }
        case NvLinkTopology::Switch:
            l.basis = "NVLink " + bw + " GB/s bidirectional per GPU through NVSwitch (half per direction) x 0.8";
            break;
        default:
            l.basis = "NVLink " + bw +
                      " GB/s bidirectional per GPU (half per direction; the database does not say "
                      "how the GPUs are joined, all assumed switched) x 0.8";
    }
    return l;
}

// Nodes of dp.gpusPerNode GPUs joined by one InfiniBand NIC per GPU (see linkFor).
std::optional<LinkModel> infinibandLink(const GpuSpec& gpu, const DataParallel& dp, std::string& reason) {
    if (!(dp.infinibandGbps > 0)) {
        reason = "the InfiniBand rate must be positive";
        return std::nullopt;
    }
    if (dp.gpusPerNode < 1) {
        reason = "the GPUs per node must be at least 1";
        return std::nullopt;
    }
    const int g = std::min(dp.gpus, dp.gpusPerNode);
    auto node = g > 1 ? nvlinkOrPcie(gpu, g, reason) : pcieLink(gpu, reason);
    if (!node) return node;
    if (dp.gpus <= dp.gpusPerNode) {
        node->notice = std::to_string(dp.gpus) + " GPUs fit in one node of " + std::to_string(dp.gpusPerNode) +
                       ": the all-reduce stays inside it, over " + node->basis;
        return node;
    }
    double nic = dp.infinibandGbps / 8;
    std::string nicBasis = "InfiniBand " + fixed(dp.infinibandGbps, 0) + " Gb/s per GPU";
    std::string ignored;
    if (auto pcie = pcieLink(gpu, ignored); pcie && pcie->busBandwidthGBs / kLinkEfficiency < nic) {
        nic = pcie->busBandwidthGBs / kLinkEfficiency;
        nicBasis += ", limited by the GPU's PCIe link (" + fixed(nic, 1) + " GB/s)";
    }
    LinkModel l;
    l.used = InterconnectKind::InfiniBand;
    l.gpusPerNode = g;
    l.networkLatencyUs = 10;
    l.stepLatencyUs = node->stepLatencyUs;
    const double network = g * nic * kLinkEfficiency;
    const double inside = g > 1 ? node->busBandwidthGBs * g / (g - 1) : network;
    l.busBandwidthGBs = std::min(network, inside);
    l.basis = std::to_string(g) + " GPUs per node, one ring per NIC: " + nicBasis + " x " + std::to_string(g) +
              " NICs x 0.8 (" + fixed(network, 0) + " GB/s)";
    if (inside < network) l.basis += ", limited by the node's " + node->basis;
    if (!node->notice.empty()) l.notice = node->notice;
    return l;
}

}  // namespace

std::optional<LinkModel> linkFor(const GpuSpec& gpu, const DataParallel& dp, std::string& reason) {
    switch (dp.interconnect) {
        case InterconnectKind::NvLink:
            return nvlinkOrPcie(gpu, dp.gpus, reason);
        case InterconnectKind::Pcie:
            return pcieLink(gpu, reason);
        case InterconnectKind::InfiniBand:
            return infinibandLink(gpu, dp, reason);
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
        current.expertBytes += it->expertParameterBytes;
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

namespace {

// Nodes and GPUs per node of a collective over `gpus` (one node unless the link crosses a network).
std::pair<double, double> nodesOf(int gpus, const LinkModel& link) {
    if (link.gpusPerNode < 1 || gpus <= link.gpusPerNode) return {1, double(gpus)};
    return {std::ceil(double(gpus) / link.gpusPerNode), double(link.gpusPerNode)};
}

}  // namespace

CollectiveCost allReduceCost(int gpus, const LinkModel& link) {
    if (gpus <= 1) return {};
    const double n = gpus;
    const auto [m, g] = nodesOf(gpus, link);
    double latencyUs = 2 * (g - 1) * link.stepLatencyUs;
    if (m > 1) latencyUs += 2 * std::min(m - 1, std::ceil(std::log2(m))) * link.networkLatencyUs;
    return {2 * (n - 1) / n / (link.busBandwidthGBs * 1e9) * 1e3, latencyUs * 1e-3};
}

double allReduceMs(double bytes, int gpus, const LinkModel& link) {
    if (gpus <= 1 || bytes <= 0) return 0;
    const CollectiveCost c = allReduceCost(gpus, link);
    return c.msPerByte * bytes + c.fixedMs;
}

std::optional<LinkModel> inNodeGroupLink(const GpuSpec& gpu, int gpus, std::string& reason) {
    DataParallel group;
    group.gpus = gpus;
    group.interconnect = InterconnectKind::NvLink;
    return linkFor(gpu, group, reason);
}

double allGatherMs(double bytes, int gpus, const LinkModel& link) {
    if (gpus <= 1 || bytes <= 0) return 0;
    const double n = gpus;
    const auto [m, g] = nodesOf(gpus, link);
    const double latencyUs = (g - 1) * link.stepLatencyUs + (m - 1) * link.networkLatencyUs;
    return (n - 1) / n * bytes / (link.busBandwidthGBs * 1e9) * 1e3 + latencyUs * 1e-3;
}

double reduceScatterMs(double bytes, int gpus, const LinkModel& link) {
    return allGatherMs(bytes, gpus, link);
}

CollectiveCost allToAllCost(int gpus, const LinkModel& link) {
    if (gpus <= 1) return {};
    const double n = gpus;
    return {(n - 1) / n / (link.busBandwidthGBs * 1e9) * 1e3, (n - 1) * link.stepLatencyUs * 1e-3};
}

double amortisedIterationMs(double iterationMs, double onceMs, int64_t k) {
    return iterationMs - onceMs * (1 - 1 / double(std::max<int64_t>(1, k)));
}

double expectedMaxOfNormals(int n) {
    if (n <= 1) return 0;
    // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx: a smooth integrand, negligible beyond +-12.
    constexpr double kStep = 1e-3, kPi = 3.14159265358979323846;
    double sum = 0;
    for (double x = -12; x <= 12; x += kStep) {
        const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * kPi);
        const double Phi = 0.5 * std::erfc(-x / std::sqrt(2.0));
        sum += x * n * phi * std::pow(Phi, n - 1) * kStep;
    }
    return sum;
}

double slowestGpuWaitShare(int gpus, int64_t accumulation, double spread) {
    if (gpus <= 1 || spread <= 0) return 0;
    static std::mutex mutex;
    static std::map<int, double> cache;  // a handful of GPU counts per session
    double maxOfNormals;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = cache.find(gpus);
        if (it == cache.end()) it = cache.emplace(gpus, expectedMaxOfNormals(gpus)).first;
        maxOfNormals = it->second;
    }
    return spread * maxOfNormals / std::sqrt(double(std::max<int64_t>(1, accumulation)));
}

double exposedCommunicationMs(const std::vector<double>& readyMs, const std::vector<double>& commMs,
                              double backwardMs) {
    double end = 0;
    for (size_t j = 0; j < readyMs.size() && j < commMs.size(); ++j) end = std::max(end, readyMs[j]) + commMs[j];
    return std::max(0.0, end - backwardMs);
}

}  // namespace ts::predictors
