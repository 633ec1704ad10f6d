#pragma once
// Prices of GPUs: on-demand cloud listings, purchase prices of cards bought outright, and the
// rule that turns a purchase price into a cost per GPU-hour (docs/gpu-database.md).
#include <optional>
#include <string>
#include <vector>

namespace ts {

// An on-demand price per GPU-hour: a cloud listing, a user's own figure, or (amortised == true)
// a purchase price turned into a cost per hour by amortisedUsdPerGpuHour.
struct Price {
    std::string provider;
    std::string instance;
    std::string region;
    double usdPerGpuHour = 0;
    std::string source;
    std::string date;
    std::string note;
    bool amortised = false;
};

// What one card cost to buy: the launch MSRP or a dated street price.
struct PurchasePrice {
    std::string kind;  // "msrp" or "street"
    double usd = 0;
    std::string date;
    std::string source;
    std::string note;
    // The power drawn per GPU when it is not the card's TDP: a GPU sold only inside a system (a
    // DGX-2's V100 SXM3) draws its share of the system's power; 0 means the GPU's TDP.
    double watts = 0;
};

// The stated inputs of the amortisation rule; the database's "amortisation" object, which a
// user file may override field by field.
struct Amortisation {
    double years = 3;           // service life of the card
    double utilisation = 0.5;   // share of the hours of those years it spends training
    double usdPerKWh = 0.18;    // electricity, paid for the card's TDP while it trains
    std::string source;         // where the electricity price comes from
    std::string note;
};

// The snapshot the built-in prices belong to.
struct PriceSnapshot {
    std::string date;  // "2026-11-25": the day the listings were collected
    std::string note;  // what the listings' own dates span
};

// Cost of one hour of training on a card bought for `purchaseUsd` with the given TDP:
//   purchaseUsd / (years x 8760 h x utilisation)  +  tdpW / 1000 x usdPerKWh.
// Hosting, cooling, the rest of the machine and resale value are left out. Throws
// std::invalid_argument for a non-positive price, life or utilisation (utilisation <= 1).
double amortisedUsdPerGpuHour(double purchaseUsd, double tdpW, const Amortisation& a);

// The purchase price the rule uses: the newest street price, else the newest MSRP (dates
// compare as ISO strings); nullptr when there is none.
const PurchasePrice* purchaseForAmortisation(const std::vector<PurchasePrice>& purchases);

// The Price entry an amortised purchase becomes (amortised == true, its inputs in the note).
Price amortisedPrice(const PurchasePrice& purchase, double tdpW, const Amortisation& a);

}  // namespace ts
