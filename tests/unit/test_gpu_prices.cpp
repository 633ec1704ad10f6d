// Prices and NVLink topology of the GPU database: every GPU priced or saying why not, every price
// dated and sourced within one snapshot, purchase prices amortised by the stated rule, and
// multi-GPU links that use NVLink only where the GPU's topology joins that many GPUs.
#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>

#include "trainscope/core/errors.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/iteration/data_parallel.h"

namespace ts {
namespace {

using predictors::DataParallel;
using predictors::InterconnectKind;
using predictors::linkFor;
using predictors::LinkModel;

const GpuSpec& gpu(const std::string& id) {
    return GpuDatabase::builtin().get(id);
}

bool isDate(const std::string& d) {
    return std::regex_match(d, std::regex(R"(\d{4}(-\d{2}(-\d{2})?)?)"));
}

// The issue's target: every GPU of the database has a price a cost can use, dated, from a source
// the database lists with its address; where no cloud lists the card, its purchase price amortised.
TEST(GpuPrices, EveryGpuHasADatedPriceWithItsSource) {
    const GpuDatabase& db = GpuDatabase::builtin();
    EXPECT_EQ(db.gpus().size(), 31u);
    for (const GpuSpec& g : db.gpus()) {
        const Price* price = g.cheapestPrice();
        ASSERT_NE(price, nullptr) << g.id << " has no price";
        EXPECT_GT(price->usdPerGpuHour, 0) << g.id;
        EXPECT_TRUE(isDate(price->date)) << g.id << ": " << price->date;
        ASSERT_TRUE(db.sources().count(price->source)) << g.id << " cites " << price->source;
        EXPECT_NE(db.sources().at(price->source).url.find("https://"), std::string::npos) << price->source;
        // An amortised price stands in only where no cloud lists the card.
        EXPECT_EQ(price->amortised, g.prices.empty()) << g.id;
    }
    // The six the 2026-11-25 snapshot lacked, by the basis each now has.
    for (const char* id : {"p4", "v100-pcie-32gb"}) EXPECT_FALSE(gpu(id).cheapestPrice()->amortised) << id;
    for (const char* id : {"p100-sxm2-16gb", "v100-sxm2-32gb", "a30", "a100-pcie-40gb"})
        EXPECT_TRUE(gpu(id).cheapestPrice()->amortised) << id;
}

// Hand arithmetic of the rule on two of them (3 years at 50%: 13,140 hours; $0.18/kWh): the A30's
// launch price of $5,000 and 165 W; the P100 SXM2's street price of $60 (newer than its launch
// price, so it is the one used) and 300 W.
TEST(GpuPrices, CardsNoCloudListsAreAmortisedFromTheirNewestPurchasePrice) {
    EXPECT_NEAR(gpu("a30").cheapestPrice()->usdPerGpuHour, 5000.0 / 13140 + 0.165 * 0.18, 1e-9);
    EXPECT_NEAR(gpu("p100-sxm2-16gb").cheapestPrice()->usdPerGpuHour, 60.0 / 13140 + 0.300 * 0.18, 1e-9);
}

// A GPU sold only inside a system is a sixteenth of the DGX-2: its price and its 10 kW (the
// purchase's own "watts"), not the card's TDP, which the part never had published.
TEST(GpuPrices, AGpuSoldInsideASystemPaysItsShareOfTheSystemsPower) {
    const Price* price = gpu("v100-sxm3-32gb").cheapestPrice();
    ASSERT_NE(price, nullptr);
    EXPECT_TRUE(price->amortised);
    EXPECT_NEAR(price->usdPerGpuHour, 399000.0 / 16 / 13140 + 10.0 / 16 * 0.18, 1e-9);
    EXPECT_NE(price->note.find("share of the system's power"), std::string::npos) << price->note;
    EXPECT_GT(gpu("v100-sxm3-32gb-h").cheapestPrice()->usdPerGpuHour, price->usdPerGpuHour);  // 12 kW
}

TEST(GpuPrices, EveryPriceIsDatedWithinTheSnapshotAndCitesAListedSource) {
    const GpuDatabase& db = GpuDatabase::builtin();
    const std::string snapshot = db.priceSnapshot().date;
    ASSERT_TRUE(std::regex_match(snapshot, std::regex(R"(\d{4}-\d{2}-\d{2})"))) << snapshot;
    for (const GpuSpec& g : db.gpus()) {
        for (const Price& p : g.prices) {
            EXPECT_TRUE(isDate(p.date)) << g.id << " " << p.provider << ": " << p.date;
            EXPECT_LE(p.date, snapshot) << g.id << " " << p.provider;
            EXPECT_TRUE(db.sources().count(p.source)) << g.id << " cites " << p.source;
            EXPECT_FALSE(p.provider.empty()) << g.id;
            EXPECT_FALSE(p.amortised) << g.id << ": a listing is not an amortised purchase";
        }
        for (const PurchasePrice& p : g.purchases) {
            EXPECT_TRUE(isDate(p.date)) << g.id;
            EXPECT_TRUE(db.sources().count(p.source)) << g.id << " cites " << p.source;
        }
    }
}

TEST(GpuPrices, MultiGpuInstancesAreDividedByTheirGpuCount) {
    // AWS p5.48xlarge: 55.04 USD per hour for 8 H100 (the source's instance price).
    bool found = false;
    for (const Price& p : gpu("h100-sxm").prices)
        if (p.instance == "p5.48xlarge") {
            found = true;
            EXPECT_NEAR(p.usdPerGpuHour, 55.04 / 8, 1e-9);
            EXPECT_NE(p.note.find("/ 8"), std::string::npos) << p.note;
        }
    EXPECT_TRUE(found);
}

TEST(GpuPrices, AmortisationFollowsTheStatedRule) {
    Amortisation a;
    a.years = 3;
    a.utilisation = 0.5;
    a.usdPerKWh = 0.18;
    // 1,599 USD over 3 x 8760 x 0.5 = 13,140 hours of use, plus 450 W x 0.18 USD/kWh = 0.081 USD/h.
    EXPECT_NEAR(amortisedUsdPerGpuHour(1599, 450, a), 1599.0 / 13140 + 0.081, 1e-12);
    a.years = 4;
    a.utilisation = 1;
    a.usdPerKWh = 0;
    EXPECT_NEAR(amortisedUsdPerGpuHour(3504, 300, a), 0.1, 1e-12);  // 3504 / 35040 h
    a = {};
    EXPECT_THROW(amortisedUsdPerGpuHour(0, 300, a), std::invalid_argument);
    a.utilisation = 1.5;
    EXPECT_THROW(amortisedUsdPerGpuHour(1000, 300, a), std::invalid_argument);
    a.utilisation = 0.5;
    a.years = 0;
    EXPECT_THROW(amortisedUsdPerGpuHour(1000, 300, a), std::invalid_argument);
}

TEST(GpuPrices, AStreetPriceWinsOverTheLaunchPrice) {
    const std::vector<PurchasePrice> buys = {{"msrp", 1499, "2020-09-24", "s", ""},
                                             {"street", 900, "2026-10", "s", ""},
                                             {"street", 950, "2026-01", "s", ""}};
    ASSERT_NE(purchaseForAmortisation(buys), nullptr);
    EXPECT_EQ(purchaseForAmortisation(buys)->usd, 900);
    EXPECT_EQ(purchaseForAmortisation({}), nullptr);
}

TEST(GpuPrices, ACardNoCloudRentsIsCostedAsBought) {
    const GpuDatabase& db = GpuDatabase::builtin();
    const GpuSpec& g = gpu("rtx-2080-ti");
    ASSERT_TRUE(g.prices.empty());
    const Price* p = g.cheapestPrice();
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->amortised);
    const Amortisation& a = db.amortisation();
    // Its launch price, 999 USD, and its 250 W TDP under the database's stated inputs.
    EXPECT_NEAR(p->usdPerGpuHour, 999 / (a.years * 8760 * a.utilisation) + 0.250 * a.usdPerKWh, 1e-12);
    EXPECT_NE(p->note.find("amortised"), std::string::npos);
    // Where a cloud lists the card, the listing is used, not the purchase.
    const GpuSpec& rtx4090 = gpu("rtx-4090");
    ASSERT_FALSE(rtx4090.purchases.empty());
    ASSERT_NE(rtx4090.cheapestPrice(), nullptr);
    EXPECT_FALSE(rtx4090.cheapestPrice()->amortised);
}

TEST(GpuPrices, UserFileOverridesTheAmortisationAndClearsListings) {
    GpuDatabase db = GpuDatabase::builtin();
    db.applyOverrides(R"({"format": "trainscope-gpu-database", "version": 1,
        "amortisation": {"years": 5, "utilisation": 1, "usd_per_kwh": 0},
        "gpus": [{"id": "rtx-4090", "prices": []}]})",
                      "my-prices.json");
    const Price* p = db.get("rtx-4090").cheapestPrice();
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->amortised);
    EXPECT_NEAR(p->usdPerGpuHour, 1599.0 / (5 * 8760), 1e-12);
}

TEST(GpuPrices, BadPurchaseOrTopologyNamesTheFileAndField) {
    GpuDatabase db = GpuDatabase::builtin();
    auto refused = [&](const std::string& gpuJson) -> std::string {
        try {
            db.applyOverrides(R"({"format": "trainscope-gpu-database", "version": 1, "gpus": [)" + gpuJson + "]}",
                              "bad.json");
        } catch (const ModelError& e) {
            return e.what();
        }
        return "accepted";
    };
    std::string m = refused(R"({"id": "t4", "purchase": [{"kind": "rumour", "usd": 10, "date": "2026", "source": "nv-t4-page"}]})");
    EXPECT_NE(m.find("bad.json"), std::string::npos) << m;
    EXPECT_NE(m.find("purchase.kind"), std::string::npos) << m;
    m = refused(R"({"id": "rtx-3090", "interconnect": {"nvlink_topology": {"kind": "bridge", "max_gpus": 8, "source": "nv-ga102-whitepaper"}}})");
    EXPECT_NE(m.find("max_gpus"), std::string::npos) << m;
    m = refused(R"({"id": "t4", "interconnect": {"nvlink_topology": {"kind": "switch", "max_gpus": 8, "source": "nv-t4-page"}}})");
    EXPECT_NE(m.find("NVLink bandwidth is 0"), std::string::npos) << m;
    // A mesh's link matrix: one row per GPU of the board, symmetric, no link to itself, on a mesh only.
    const std::string mesh = R"({"id": "p100-sxm2-16gb", "interconnect": {"nvlink_topology": {"kind": "mesh", "max_gpus": 2, "source": "nv-pascal-whitepaper", "links": )";
    m = refused(mesh + "[[0, 1], [2, 0]]}}}");
    EXPECT_NE(m.find("nvlink_topology.links"), std::string::npos) << m;
    EXPECT_NE(m.find("not symmetric"), std::string::npos) << m;
    m = refused(mesh + "[[0, 1]]}}}");
    EXPECT_NE(m.find("2 rows"), std::string::npos) << m;
    m = refused(mesh + "[[1, 1], [1, 0]]}}}");
    EXPECT_NE(m.find("itself"), std::string::npos) << m;
    m = refused(mesh + "[[0, -1], [-1, 0]]}}}");
    EXPECT_NE(m.find("whole number from 0 to 18"), std::string::npos) << m;
    m = refused(R"({"id": "rtx-3090", "interconnect": {"nvlink_topology": {"kind": "bridge", "max_gpus": 2, "source": "nv-ga102-whitepaper", "links": [[0, 1], [1, 0]]}}})");
    EXPECT_NE(m.find("only a mesh"), std::string::npos) << m;
    // Found by fuzz_gpu_database: a year past int's range was converted unchecked (undefined behaviour).
    m = refused(R"({"id": "t4", "release_year": 20189223372036854775807})");
    EXPECT_NE(m.find("release_year"), std::string::npos) << m;
    m = refused(R"({"id": "t4", "release_year": 2018.5})");
    EXPECT_NE(m.find("release_year"), std::string::npos) << m;
}

// A user file can give a mesh board's link matrix; a job whose first GPUs share no direct link goes
// over PCIe, as NCCL does, and says so.
TEST(NvLinkTopology, AUserMatrixDecidesTheLinksOfTheFirstGpus) {
    GpuDatabase db = GpuDatabase::builtin();
    db.applyOverrides(R"({"format": "trainscope-gpu-database", "version": 1, "gpus": [{"id": "p100-sxm2-16gb",
        "interconnect": {"nvlink_topology": {"kind": "mesh", "max_gpus": 4, "source": "nv-pascal-whitepaper",
        "links": [[0, 0, 2, 2], [0, 0, 2, 2], [2, 2, 0, 0], [2, 2, 0, 0]]}}}]})",
                      "board.json");
    DataParallel dp;
    dp.interconnect = InterconnectKind::NvLink;
    std::string why;
    dp.gpus = 2;
    auto two = linkFor(db.get("p100-sxm2-16gb"), dp, why);
    ASSERT_TRUE(two) << why;
    EXPECT_EQ(two->used, InterconnectKind::Pcie);
    EXPECT_NE(two->notice.find("not all joined"), std::string::npos) << two->notice;
    // Four GPUs: each has its 4 links to the others: the whole 160 GB/s, 80 a direction, x 0.8.
    dp.gpus = 4;
    auto four = linkFor(db.get("p100-sxm2-16gb"), dp, why);
    ASSERT_TRUE(four) << why;
    EXPECT_EQ(four->used, InterconnectKind::NvLink);
    EXPECT_NEAR(four->busBandwidthGBs, 160.0 / 2 * 0.8, 1e-9);
}

TEST(NvLinkTopology, EveryGpuSaysHowItsNvLinkJoinsGpus) {
    for (const GpuSpec& g : GpuDatabase::builtin().gpus()) {
        const NvLinkTopologyInfo& t = g.interconnect.nvlinkTopology;
        ASSERT_NE(t.kind, NvLinkTopology::Unknown) << g.id;
        EXPECT_FALSE(t.source.empty()) << g.id;
        const bool hasNvLink = g.interconnect.nvlinkBandwidthGBs.known() && *g.interconnect.nvlinkBandwidthGBs > 0;
        EXPECT_EQ(hasNvLink, t.kind != NvLinkTopology::None) << g.id;
    }
    for (const char* id : {"rtx-2080-ti", "rtx-3090", "a40", "rtx-a6000", "a30", "a100-pcie-40gb", "a100-pcie-80gb",
                           "h100-pcie", "h100-nvl"}) {
        EXPECT_EQ(gpu(id).interconnect.nvlinkTopology.kind, NvLinkTopology::Bridge) << id;
        EXPECT_EQ(gpu(id).interconnect.nvlinkTopology.maxGpus, 2) << id;
    }
    for (const char* id : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm", "h200-sxm", "b200"})
        EXPECT_EQ(gpu(id).interconnect.nvlinkTopology.kind, NvLinkTopology::Switch) << id;
    for (const char* id : {"p100-sxm2-16gb", "v100-sxm2-16gb", "v100-sxm2-32gb"})
        EXPECT_EQ(gpu(id).interconnect.nvlinkTopology.kind, NvLinkTopology::Mesh) << id;
}

LinkModel link(const std::string& id, int gpus) {
    DataParallel dp;
    dp.gpus = gpus;
    dp.interconnect = InterconnectKind::NvLink;
    std::string reason;
    auto l = linkFor(gpu(id), dp, reason);
    if (!l) throw std::runtime_error(id + ": " + reason);
    return *l;
}

TEST(NvLinkTopology, BridgedPairsUseTheBridgeForTwoGpusAndPcieBeyond) {
    const LinkModel two = link("rtx-3090", 2);
    EXPECT_EQ(two.used, InterconnectKind::NvLink);
    EXPECT_TRUE(two.notice.empty());
    EXPECT_NE(two.basis.find("bridge"), std::string::npos) << two.basis;
    // 112.5 GB/s bidirectional across the bridge: 56.25 per direction, x 0.8.
    EXPECT_NEAR(two.busBandwidthGBs, 112.5 / 2 * 0.8, 1e-9);

    const LinkModel eight = link("rtx-3090", 8);
    EXPECT_EQ(eight.used, InterconnectKind::Pcie);
    EXPECT_NE(eight.notice.find("at most 2"), std::string::npos) << eight.notice;
    EXPECT_NE(eight.notice.find("PCIe"), std::string::npos) << eight.notice;
    // PCIe 4.0 x16: 16 x 1.969 GB/s per direction, x 0.8.
    EXPECT_NEAR(eight.busBandwidthGBs, 16 * 1.969 * 0.8, 1e-9);
}

TEST(NvLinkTopology, GpusWithoutNvLinkFallBackToPcieAndSaySo) {
    const LinkModel t4 = link("t4", 2);
    EXPECT_EQ(t4.used, InterconnectKind::Pcie);
    EXPECT_NE(t4.notice.find("has no NVLink"), std::string::npos) << t4.notice;
}

TEST(NvLinkTopology, SwitchedBoardsJoinEightGpus) {
    const LinkModel eight = link("h100-sxm", 8);
    EXPECT_EQ(eight.used, InterconnectKind::NvLink);
    EXPECT_NE(eight.basis.find("NVSwitch"), std::string::npos) << eight.basis;
    const LinkModel sixteen = link("h100-sxm", 16);
    EXPECT_EQ(sixteen.used, InterconnectKind::Pcie);
    EXPECT_NE(sixteen.notice.find("at most 8"), std::string::npos) << sixteen.notice;
}

}  // namespace
}  // namespace ts
