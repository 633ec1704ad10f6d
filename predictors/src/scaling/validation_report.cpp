// Text and JSON forms of a validation report.
#include <cstdio>
#include <ostream>

#include "trainscope/predictors/scaling/kernel_validation.h"

namespace ts::predictors {
namespace {

using nlohmann::json;

std::string fixed1(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

void printTable(std::ostream& out, const char* heading, const std::vector<ApeSummary>& rows) {
    size_t width = std::string(heading).size();
    for (const ApeSummary& s : rows) width = std::max(width, s.key.size());
    char buf[256];
    std::snprintf(buf, sizeof buf, "  %-*s %9s %9s %9s\n", int(width), heading, "n", "median %", "mean %");
    out << buf;
    for (const ApeSummary& s : rows) {
        std::snprintf(buf, sizeof buf, "  %-*s %9lld %9.1f %9.1f\n", int(width), s.key.c_str(), (long long)s.n,
                      s.medianPct, s.meanPct);
        out << buf;
    }
}

void printPath(std::ostream& out, const char* title, const PathSummary& p) {
    out << title << "\n";
    out << "  overall: n=" << p.overall.n << ", median APE " << fixed1(p.overall.medianPct) << "%, mean APE "
        << fixed1(p.overall.meanPct) << "%\n\n";
    printTable(out, "class", p.classes);
    out << "\n";
    printTable(out, "target GPU", p.targets);
    if (!p.pairs.empty()) {
        out << "\n";
        printTable(out, "origin -> target", p.pairs);
    }
    out << "\n";
}

json summaryJson(const ApeSummary& s) {
    return {{"n", s.n}, {"median_ape", s.medianPct}, {"mean_ape", s.meanPct}};
}

json keyedJson(const std::vector<ApeSummary>& rows) {
    json o = json::object();
    for (const ApeSummary& s : rows) o[s.key] = summaryJson(s);
    return o;
}

json pathJson(const PathSummary& p) {
    json j = {
        {"overall", summaryJson(p.overall)}, {"classes", keyedJson(p.classes)}, {"targets", keyedJson(p.targets)}};
    if (!p.pairs.empty()) j["pairs"] = keyedJson(p.pairs);
    return j;
}

}  // namespace

json scalingParamsJson(const ScalingParams& p) {
    return {{"structured", p.structured},
            {"floor_quantile", p.floorQuantile},
            {"softness", p.softness},
            {"alpha", p.alpha},
            {"max_ratio", p.maxRatio},
            {"tau_us", p.tauUs},
            {"n0", p.n0},
            {"watts_per_tflop_16nm", p.wattsPerTflop16nm},
            {"compute_eff", p.computeEff},
            {"memory_eff", p.memoryEff},
            {"architecture_log_offsets", p.architectureLogOffset},
            {"shape_log_offsets", p.shapeLogOffset}};
}

void printValidationReport(std::ostream& out, const ValidationReport& r) {
    out << "Leave-one-GPU-out validation: " << r.rows << " rows from " << r.files << " files.\n"
        << "Absolute percentage error of each prediction; the parameters and statistics used to predict GPU X\n"
        << "were fitted without X's rows.\n";
    if (r.targetHostKnown)
        out << "DIAGNOSTIC (--target-host-known): X's host floor and achieved bandwidth come from X's own rows;\n"
            << "these figures are not leave-one-GPU-out.\n";
    out << "\n";
    printPath(out, "Cross path: X predicted from one measurement on another GPU", r.cross);
    printPath(out, "Model-only path: X predicted without any measurement of the configuration", r.modelOnly);
    out << "Fitted parameters per class and held-out GPU (floor in us of the held-out GPU, "
        << (r.targetHostKnown ? "its own" : "as estimated") << "):\n";
    for (const FittedParams& f : r.fitted) {
        const ScalingParams& p = f.params;
        const bool memory = workKindOf(f.opClass) == WorkKind::Memory;
        char buf[320];
        if (memory)
            std::snprintf(buf, sizeof buf,
                          "  %-8s %-16s bandwidth qf=%.2f p=%g alpha=%.2f tau=%gus floor=%.1fus eff=%.3f\n",
                          f.opClass.c_str(), f.heldOut.c_str(), p.floorQuantile, p.softness, p.alpha, p.tauUs,
                          f.heldOutEstimate.floorMs * 1e3, f.heldOutEstimate.memEff);
        else
            std::snprintf(
                buf, sizeof buf, "  %-8s %-16s %s qf=%.2f p=%g alpha=%.2f n0=%g wpt=%g tau=%gus floor=%.1fus\n",
                f.opClass.c_str(), f.heldOut.c_str(), p.structured ? "tile-wave" : "roofline ", p.floorQuantile,
                p.softness, p.alpha, p.n0, p.wattsPerTflop16nm, p.tauUs, f.heldOutEstimate.floorMs * 1e3);
        out << buf;
    }
    for (const std::string& n : r.notes) out << "note: " << n << "\n";
}

json validationReportJson(const ValidationReport& r) {
    json j = pathJson(r.cross);  // the cross path's overall/classes/targets/pairs at the top level
    j["model_only"] = pathJson(r.modelOnly);
    json fitted = json::array();
    for (const FittedParams& f : r.fitted) {
        json e = scalingParamsJson(f.params);
        e["class"] = f.opClass;
        e["held_out"] = f.heldOut;
        e["held_out_floor_ms"] = f.heldOutEstimate.floorMs;
        e["held_out_mem_eff"] = f.heldOutEstimate.memEff;
        fitted.push_back(e);
    }
    j["fitted"] = fitted;
    j["notes"] = r.notes;
    j["target_host_known"] = r.targetHostKnown;
    j["rows"] = r.rows;
    j["files"] = r.files;
    j["fit_seconds"] = r.fitSeconds;
    j["predict_seconds"] = r.predictSeconds;
    return j;
}

}  // namespace ts::predictors
