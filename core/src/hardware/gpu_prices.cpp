#include "trainscope/core/gpu_prices.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ts {
namespace {

constexpr double kHoursPerYear = 8760;  // 365 days

std::string money(double usd, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, usd);
    return buf;
}

}  // namespace

double amortisedUsdPerGpuHour(double purchaseUsd, double tdpW, const Amortisation& a) {
    if (!(purchaseUsd > 0) || !std::isfinite(purchaseUsd)) throw std::invalid_argument("purchase price must be positive");
    if (!(a.years > 0) || !std::isfinite(a.years)) throw std::invalid_argument("years of use must be positive");
    if (!(a.utilisation > 0) || a.utilisation > 1) throw std::invalid_argument("utilisation must be in (0, 1]");
    if (!(a.usdPerKWh >= 0) || !std::isfinite(a.usdPerKWh)) throw std::invalid_argument("electricity price must be >= 0");
    if (!(tdpW >= 0) || !std::isfinite(tdpW)) throw std::invalid_argument("TDP must be >= 0");
    const double hoursOfUse = a.years * kHoursPerYear * a.utilisation;
    return purchaseUsd / hoursOfUse + tdpW / 1000 * a.usdPerKWh;
}

const PurchasePrice* purchaseForAmortisation(const std::vector<PurchasePrice>& purchases) {
    const PurchasePrice* best = nullptr;
    auto rank = [](const PurchasePrice& p) { return p.kind == "street" ? 1 : 0; };
    for (const PurchasePrice& p : purchases)
        if (!best || rank(p) > rank(*best) || (rank(p) == rank(*best) && p.date > best->date)) best = &p;
    return best;
}

Price amortisedPrice(const PurchasePrice& purchase, double tdpW, const Amortisation& a) {
    Price p;
    p.provider = "purchase";
    p.instance = (purchase.kind == "street" ? "street price $" : "launch MSRP $") + money(purchase.usd, 0);
    p.region = "";
    p.usdPerGpuHour = amortisedUsdPerGpuHour(purchase.usd, tdpW, a);
    p.source = purchase.source;
    p.date = purchase.date;
    p.amortised = true;
    p.note = "amortised: $" + money(purchase.usd, 0) + " over " + money(a.years, 1) + " years at " +
             money(a.utilisation * 100, 0) + "% utilisation, plus " + money(tdpW, 0) +
             (purchase.watts > 0 ? " W (its share of the system's power)" : " W (TDP)") + " at $" +
             money(a.usdPerKWh, 3) + "/kWh" +
             (purchase.watts > 0 ? "; hosting, cooling and resale value left out"
                                 : "; hosting, cooling, the rest of the machine and resale value left out");
    return p;
}

}  // namespace ts
