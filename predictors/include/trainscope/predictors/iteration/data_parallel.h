#pragma once
// Data parallelism as PyTorch DDP runs it: gradients grouped in buckets in reverse layer order
// (a 1 MiB first bucket, then 25 MiB), each bucket ring-all-reduced as soon as its gradients are
// ready, one bucket after another on one communication stream, overlapped with the rest of
// backward. What does not fit under backward is exposed.
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/model_analysis.h"
#include "trainscope/predictors/iteration/training_scenario.h"

namespace ts::predictors {

// What one GPU's link achieves in NCCL's ring all-reduce.
struct LinkModel {
    double busBandwidthGBs = 0;  // per direction, achieved
    double stepLatencyUs = 0;    // per ring step inside a node
    // InfiniBand over several nodes: GPUs per node and the latency of a step across the network
    // (0: every GPU is in one node).
    int gpusPerNode = 0;
    double networkLatencyUs = 0;
    std::string basis;                                 // how it was derived, for the user
    InterconnectKind used = InterconnectKind::NvLink;  // may differ from the one asked for
    std::string notice;                                // why `used` is not the one asked for; empty when it is
};

// The link of `gpu` for `dp`; nullopt with `reason` set when the database lacks the figures.
// NVLink is used only where the GPU's NVLink topology joins dp.gpus GPUs (a bridge joins 2, an
// NVSwitch board or DGX-1's hybrid cube-mesh 8); otherwise, and on GPUs without NVLink, the
// ring falls back to PCIe and `notice` says so. NVLink: half the database's bidirectional
// figure, x 0.8; PCIe: generation x lanes, x 0.8.
// InfiniBand joins nodes of dp.gpusPerNode GPUs, each GPU with its own NIC of dp.infinibandGbps
// (no faster than the GPU's PCIe link, which GPUDirect RDMA crosses). NCCL runs one ring per NIC:
// each ring leaves a node through one NIC and crosses the node over its link (NVLink as the
// topology allows, else PCIe), so a node's NICs together carry the ring's traffic and the bus
// bandwidth is min(g x NIC, g / (g - 1) x the node's link) for g GPUs per node, x 0.8. Where
// dp.gpus fit in one node the network is not used (the node's link, with a notice). The 0.8
// (NCCL's achieved fraction of a link) and the latencies (NVLink 5 us, PCIe and InfiniBand 10 us
// per step) are assumptions.
std::optional<LinkModel> linkFor(const GpuSpec& gpu, const DataParallel& dp, std::string& reason);

struct GradientBucket {
    int firstOp = 0;  // lowest operation index whose gradients it holds: ready after its backward
    double bytes = 0;
    double expertBytes = 0;  // of those, routed experts split by expert parallelism (their own group's)
};
// DDP's buckets: parameters in reverse graph order, closed once they reach the cap.
std::vector<GradientBucket> gradientBuckets(const ModelAnalysis& m, const DataParallel& dp);

// Ring all-reduce of `bytes` over `gpus`: 2 (N-1)/N bytes / bandwidth + 2 (N-1) step latencies;
// over m nodes of g GPUs, 2 (g-1) steps inside the node and NCCL's tree across the nodes,
// 2 ceil(log2 m) network steps, where that is fewer than the ring's 2 (m-1).
double allReduceMs(double bytes, int gpus, const LinkModel& link);
// The same as msPerByte x bytes + fixedMs (bytes > 0), for time rows that are polynomials of the batch.
struct CollectiveCost {
    double msPerByte = 0;
    double fixedMs = 0;
};
CollectiveCost allReduceCost(int gpus, const LinkModel& link);

// The link of a tensor- or expert-parallel group of `gpus` GPUs: inside one node, NVLink where the
// GPU's topology joins that many, else PCIe with a notice (linkFor with NVLink asked for).
std::optional<LinkModel> inNodeGroupLink(const GpuSpec& gpu, int gpus, std::string& reason);

// All-to-all over `gpus` (NCCL's grouped sends and receives): each GPU sends (N-1)/N of its `bytes`
// and receives as much, through its link at the ring's bus bandwidth, with (N-1) step latencies, as
// an all-gather of `bytes`. Checked against XLA's measured H100 all-to-all
// (tests/unit/test_expert_parallel.cpp).
CollectiveCost allToAllCost(int gpus, const LinkModel& link);

// Ring all-gather producing `bytes` on every GPU, and ring reduce-scatter of a `bytes` input into
// shards: each (N-1)/N bytes / bandwidth + (N-1) step latencies (half an all-reduce; across nodes
// (g-1) node steps and (m-1) network steps). Checked against XLA's measured H100 tables
// (tests/unit/test_fine_tuning_sharding.cpp).
double allGatherMs(double bytes, int gpus, const LinkModel& link);
double reduceScatterMs(double bytes, int gpus, const LinkModel& link);

// Time per micro-batch with gradient accumulation over k micro-batches: the optimizer step and the
// gradients' reduction (`onceMs` of one iteration's `iterationMs`) run once per k (DDP's no_sync).
double amortisedIterationMs(double iterationMs, double onceMs, int64_t k);

// Synchronous data parallelism waits, at every optimizer step, for the slowest of the GPUs: with
// one GPU's step time spread by a relative standard deviation `spread` (input pipeline, host
// jitter, clocks), the step takes E[max of `gpus` standard normals] x spread longer. Over k
// accumulated micro-batches the step's spread shrinks by sqrt(k) (independent micro-batches).
// Returns that share of the time per micro-batch (0 on one GPU).
double slowestGpuWaitShare(int gpus, int64_t accumulation, double spread);
// E[max of n independent standard normal variables] (0 for n = 1), by numerical integration.
double expectedMaxOfNormals(int n);

// Exposed communication: bucket j becomes ready at readyMs[j] (from the start of backward, in
// bucket order), all-reduces take commMs[j] one after another; backward ends at backwardMs.
double exposedCommunicationMs(const std::vector<double>& readyMs, const std::vector<double>& commMs, double backwardMs);

}  // namespace ts::predictors
