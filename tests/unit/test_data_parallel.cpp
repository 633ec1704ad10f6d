// Collectives across nodes: NCCL runs one ring per NIC, so a node's NICs together carry the ring,
// and the latency across the network follows NCCL's tree rather than a ring through every GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/data_parallel.h"

using namespace ts;
using namespace ts::predictors;

namespace {

const GpuSpec& gpu(const std::string& id) {
    return GpuDatabase::builtin().get(id);
}

DataParallel infiniband(int gpus, int perNode, double gbps) {
    DataParallel dp;
    dp.gpus = gpus;
    dp.gpusPerNode = perNode;
    dp.interconnect = InterconnectKind::InfiniBand;
    dp.infinibandGbps = gbps;
    return dp;
}

}  // namespace

// Two DGX A100 nodes (8 GPUs each, one 200 Gb/s HDR NIC per GPU): the NICs carry 8 x 25 GB/s x 0.8 =
// 160 GB/s, below what NVLink inside the node allows (600 GB/s bidirectional: 240 GB/s x 8/7).
TEST(DataParallel, InfinibandRingsUseEveryNicOfTheNode) {
    std::string why;
    const auto link = linkFor(gpu("a100-sxm4-80gb"), infiniband(16, 8, 200), why);
    ASSERT_TRUE(link) << why;
    EXPECT_EQ(link->used, InterconnectKind::InfiniBand);
    EXPECT_NEAR(link->busBandwidthGBs, 8 * 25.0 * 0.8, 1e-9);
    EXPECT_EQ(link->gpusPerNode, 8);
    // 1 GB over 16 GPUs: 2 x 15/16 x 1 GB / 160 GB/s, plus 2 x 7 NVLink steps (5 us) and the tree's
    // 2 x log2(2 nodes) network steps (10 us).
    const double expected = 2 * 15.0 / 16 * 1e9 / 160e9 * 1e3 + (2 * 7 * 5 + 2 * 1 * 10) * 1e-3;
    EXPECT_NEAR(allReduceMs(1e9, 16, *link), expected, 1e-9);
    // 64 nodes: the tree's 2 x 6 network steps, not a ring's 2 x 63.
    const auto big = linkFor(gpu("a100-sxm4-80gb"), infiniband(512, 8, 200), why);
    ASSERT_TRUE(big) << why;
    EXPECT_NEAR(allReduceMs(1e9, 512, *big), 2 * 511.0 / 512 * 1e9 / 160e9 * 1e3 + (2 * 7 * 5 + 2 * 6 * 10) * 1e-3,
                1e-9);
    // All-gather has no tree: (g-1) node steps and (m-1) network steps.
    EXPECT_NEAR(allGatherMs(1e9, 16, *link), 15.0 / 16 * 1e9 / 160e9 * 1e3 + (7 * 5 + 1 * 10) * 1e-3, 1e-9);
}

// Where the node's own link is the narrower one, it bounds the ring: 16 V100 on PCIe 3.0 x16
// (15.76 GB/s x 0.8) with a fast network.
TEST(DataParallel, TheNodesLinkBoundsTheRingWhenItIsSlower) {
    std::string why;
    const auto link = linkFor(gpu("v100-pcie-16gb"), infiniband(16, 8, 400), why);
    ASSERT_TRUE(link) << why;
    const double pcie = 0.985 * 16 * 0.8;
    // Each NIC sits behind the GPU's PCIe link too: min(400 Gb/s, 15.76 GB/s) per NIC.
    EXPECT_NEAR(link->busBandwidthGBs, std::min(8 * 0.985 * 16 * 0.8, pcie * 8 / 7), 1e-9);
    EXPECT_NE(link->basis.find("limited by"), std::string::npos) << link->basis;
}

// GPUs that fit in one node never cross the network, whatever its rate.
TEST(DataParallel, OneNodeStaysOnItsOwnLink) {
    std::string why;
    const auto slow = linkFor(gpu("h100-sxm"), infiniband(8, 8, 25), why);
    const auto fast = linkFor(gpu("h100-sxm"), infiniband(8, 8, 1600), why);
    ASSERT_TRUE(slow && fast) << why;
    EXPECT_EQ(slow->busBandwidthGBs, fast->busBandwidthGBs);
    EXPECT_EQ(slow->used, InterconnectKind::NvLink);
    EXPECT_NE(slow->notice.find("one node"), std::string::npos) << slow->notice;
    // A DGX-2 joins 16 V100 on NVSwitch: 16 GPUs are one node there.
    const auto dgx2 = linkFor(gpu("v100-sxm3-32gb"), infiniband(16, 16, 50), why);
    ASSERT_TRUE(dgx2) << why;
    EXPECT_EQ(dgx2->used, InterconnectKind::NvLink);
    EXPECT_NEAR(dgx2->busBandwidthGBs, 300 / 2 * 0.8, 1e-9);
}

// The expected maximum of n standard normals: order-statistics values from the literature
// (E[max of 2] = 1/sqrt(pi); Tippett's and Harter's tables for 8, 100 and 1000).
TEST(DataParallel, ExpectedMaximumOfNormalsMatchesTheTables) {
    EXPECT_DOUBLE_EQ(expectedMaxOfNormals(1), 0);
    EXPECT_NEAR(expectedMaxOfNormals(2), 1 / std::sqrt(3.14159265358979323846), 1e-4);
    EXPECT_NEAR(expectedMaxOfNormals(8), 1.4236, 1e-3);
    EXPECT_NEAR(expectedMaxOfNormals(100), 2.5076, 1e-3);
    EXPECT_NEAR(expectedMaxOfNormals(1000), 3.2414, 1e-3);
}

// Each step waits for the slowest GPU: nothing on one GPU or without a spread, more with more
// GPUs, and k accumulated micro-batches average the spread down by sqrt(k).
TEST(DataParallel, TheSlowestGpusWaitGrowsWithGpusAndShrinksWithAccumulation) {
    EXPECT_EQ(slowestGpuWaitShare(1, 1, 0.06), 0);
    EXPECT_EQ(slowestGpuWaitShare(8, 1, 0), 0);
    EXPECT_NEAR(slowestGpuWaitShare(8, 1, 0.06), 0.06 * 1.4236, 1e-4);
    double previous = 0;
    for (int n : {2, 4, 8, 64, 1024}) {
        const double share = slowestGpuWaitShare(n, 1, 0.06);
        EXPECT_GT(share, previous) << n;
        previous = share;
    }
    EXPECT_NEAR(slowestGpuWaitShare(8, 16, 0.06), slowestGpuWaitShare(8, 1, 0.06) / 4, 1e-12);
}

// A DGX-1's hybrid cube-mesh joins its V100s by 1 or 2 NVLinks a pair (nvidia-smi topo -m: GPU0-GPU1
// NV1, GPU0-GPU3 NV2, ...): NCCL's rings run over direct links, so a job on the first N GPUs has only
// the links among them. Each link carries 25 GB/s a direction (300 GB/s bidirectional over 6 links).
TEST(DataParallel, AMeshJobHasTheLinksAmongItsGpus) {
    std::string why;
    DataParallel dp;
    dp.interconnect = InterconnectKind::NvLink;
    const GpuSpec& v100 = gpu("v100-sxm2-16gb");
    // GPUs 0 and 1: one link.
    dp.gpus = 2;
    auto two = linkFor(v100, dp, why);
    ASSERT_TRUE(two) << why;
    EXPECT_EQ(two->used, InterconnectKind::NvLink);
    EXPECT_NEAR(two->busBandwidthGBs, 25 * 1 * 0.8, 1e-9);
    EXPECT_NE(two->basis.find("1 of them"), std::string::npos) << two->basis;
    // GPUs 0-3: GPU0 has NV1 + NV1 + NV2 to the others, GPU1 NV1 + NV2 + NV1: 4 links each.
    dp.gpus = 4;
    auto four = linkFor(v100, dp, why);
    ASSERT_TRUE(four) << why;
    EXPECT_NEAR(four->busBandwidthGBs, 25 * 4 * 0.8, 1e-9);
    // All eight: every link.
    dp.gpus = 8;
    auto eight = linkFor(v100, dp, why);
    ASSERT_TRUE(eight) << why;
    EXPECT_NEAR(eight->busBandwidthGBs, 25 * 6 * 0.8, 1e-9);
    // So the same gradients take 6 times longer to all-reduce on 2 GPUs than a full board's bandwidth says.
    EXPECT_GT(allReduceMs(1e9, 2, *two), 5 * allReduceMs(1e9, 2, *eight));
}

// Without a link matrix (the DGX-1's P100 entry), a mesh keeps its whole NVLink bandwidth at any count.
TEST(DataParallel, AMeshWithoutItsMatrixUsesEveryLink) {
    std::string why;
    DataParallel dp;
    dp.interconnect = InterconnectKind::NvLink;
    dp.gpus = 2;
    const GpuSpec& p100 = gpu("p100-sxm2-16gb");
    ASSERT_TRUE(p100.interconnect.nvlinkTopology.links.empty());
    auto link = linkFor(p100, dp, why);
    ASSERT_TRUE(link) << why;
    EXPECT_NEAR(link->busBandwidthGBs, 160.0 / 2 * 0.8, 1e-9);
}
