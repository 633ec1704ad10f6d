#pragma once
// The GPU database: datasheet figures of NVIDIA GPUs, each with its source, per-SM limits by
// compute capability, interconnects and prices. Built in from resources/gpus.json; users add
// or override GPUs and prices with files of the same format (docs/gpu-database.md).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/core/gpu_device.h"
#include "trainscope/core/gpu_prices.h"

namespace ts {

// The arithmetic a matrix multiply runs in. Fp16/Bf16/Fp8 are tensor-core rates with FP32
// accumulation (what mixed-precision training uses); Fp32 is the CUDA-core FMA rate.
enum class ComputePrecision { Fp32, Tf32, Fp16, Bf16, Fp8 };
inline constexpr ComputePrecision kAllComputePrecisions[] = {
    ComputePrecision::Fp32, ComputePrecision::Tf32, ComputePrecision::Fp16, ComputePrecision::Bf16,
    ComputePrecision::Fp8};
const char* precisionName(ComputePrecision p);  // "fp32", "tf32", "fp16", "bf16", "fp8"
// Accepts those names and the training precisions "amp-fp16", "amp-bf16".
std::optional<ComputePrecision> parsePrecision(const std::string& name);

// One figure with its provenance. No value means unknown (`unknown` says why) or, for a
// precision, that the hardware does not have it (`unsupported`).
struct Figure {
    std::optional<double> value;
    std::string source;     // key into GpuDatabase::sources()
    bool estimate = false;  // not confirmed against a vendor document
    bool unsupported = false;
    std::string unknown;    // why no value is known
    std::string note;

    bool known() const { return value.has_value(); }
    double operator*() const { return *value; }
};

// Per-SM limits of a compute capability (CUDA C Programming Guide's table); these feed
// cuda_occupancy.h.
struct ArchLimits {
    int ccMajor = 0;
    int ccMinor = 0;
    std::string name;
    int maxThreadsPerSm = 0;
    int maxBlocksPerSm = 0;
    int registersPerSm = 0;
    int maxRegistersPerBlock = 0;
    int maxRegistersPerThread = 0;
    int maxThreadsPerBlock = 0;
    int warpSize = 32;
    int sharedMemoryPerSmBytes = 0;
    int sharedMemoryPerBlockBytes = 0;       // without opt-in
    int sharedMemoryPerBlockOptinBytes = 0;  // the most a kernel may opt in to
    int reservedSharedMemoryPerBlockBytes = 0;
    bool tensorCores = false;
    std::string source;
};

// How a GPU's NVLink joins GPUs: through an NVSwitch (all of up to maxGpus at full bandwidth),
// a hybrid cube-mesh of direct links (DGX-1's P100/V100 SXM2: not all-to-all), a bridge between
// two cards, or not at all. Unknown for user-added GPUs that do not say.
enum class NvLinkTopology { Unknown, None, Bridge, Mesh, Switch };
const char* nvlinkTopologyName(NvLinkTopology t);  // "unknown", "none", "bridge", "mesh", "switch"

struct NvLinkTopologyInfo {
    NvLinkTopology kind = NvLinkTopology::Unknown;
    int maxGpus = 0;  // the most GPUs NVLink joins (2 for a bridge); 0 when unknown
    // A mesh board's NVLinks between its GPU i and GPU j (maxGpus x maxGpus, symmetric, zero diagonal),
    // as `nvidia-smi topo -m` shows them (NV1, NV2); empty when the database does not give them. A job
    // on N GPUs of the board uses its first N, whose rings have only the links among them.
    std::vector<std::vector<int>> links;
    std::string source;
    std::string note;
};

struct Interconnect {
    Figure pcieGeneration;
    Figure pcieLanes;
    Figure nvlinkGeneration;     // 0 = none
    Figure nvlinkBandwidthGBs;   // total bidirectional per GPU
    NvLinkTopologyInfo nvlinkTopology;
};

// A GPU's calibrated figures (trainscope-cli calibrate), kept beside the datasheet's.
struct GpuCalibration {
    std::map<std::string, double> measured;  // Measurement::name -> value, in the benchmark's unit
    std::map<std::string, std::string> units;
    std::string date;
    std::string driver;
    std::string software;
    std::string origin;                      // where it came from (file, host)
};

struct GpuSpec {
    std::string id;
    std::string name;
    std::vector<std::string> deviceNames;
    std::string architecture;
    std::string chip;
    int ccMajor = 0;
    int ccMinor = 0;
    std::string segment;        // datacenter | workstation | geforce
    std::string formFactor;
    int releaseYear = 0;

    Figure sms;
    Figure baseClockMHz;
    Figure boostClockMHz;
    Figure memoryGB;
    Figure memoryBandwidthGBs;
    Figure memoryBusWidthBits;
    Figure l2CacheMB;
    Figure fp32Tflops;
    Figure fp64Tflops;
    Figure tdpW;
    std::string memoryType;
    std::map<std::string, Figure> tensorTflops;                 // tf32, fp16, bf16, fp8, int8_tops
    std::map<std::string, Figure> tensorTflopsFp16Accumulate;   // GeForce/Ada where it differs
    Interconnect interconnect;
    std::vector<Price> prices;              // on-demand listings
    std::vector<PurchasePrice> purchases;   // what the card costs to buy (GeForce, workstation)
    std::optional<Price> amortisedPurchase; // purchases turned into a cost per hour (finalize)
    std::string pricesNote;                 // why there is no price, or what the prices leave out
    std::optional<GpuCalibration> calibration;

    ArchLimits limits;           // resolved from the compute capability
    std::string origin;          // "built-in", or the user file that added or changed it

    std::string computeCapability() const;  // "8.0"
    // Datasheet dense peak in TFLOP/s for a precision; an unknown/unsupported Figure otherwise.
    Figure peakTflops(ComputePrecision p) const;
    bool supports(ComputePrecision p) const;
    // FLOP per byte at which a kernel turns compute-bound: peak / DRAM bandwidth.
    std::optional<double> ridgePoint(ComputePrecision p) const;
    // The price a cost is computed with: the cheapest on-demand listing, or where there is
    // none the amortised purchase price; nullptr when neither is known.
    const Price* cheapestPrice() const;
};

struct GpuSource {
    std::string title;
    std::string url;
    std::string accessed;
};

struct GpuDatabaseDocument;  // the merged JSON, kept for field-by-field overrides

class GpuDatabase {
public:
    // The database compiled into this binary (resources/gpus.json).
    static const GpuDatabase& builtin();
    // Parse a complete database (throws ModelError naming `origin` and the problem).
    static GpuDatabase fromJson(const std::string& text, const std::string& origin);
    // The built-in database with the user's files applied: $XDG_CONFIG_HOME/trainscope/gpus.json
    // (or ~/.config/...), then $TRAINSCOPE_GPU_DB, then `extraFiles` in order.
    static GpuDatabase load(const std::vector<std::string>& extraFiles = {});

    // Apply a user file: new ids add GPUs, existing ids override the fields given; "prices"
    // replaces a GPU's price list; "sources" and "architectures" merge by key.
    void applyOverrides(const std::string& text, const std::string& origin);
    void applyOverrideFile(const std::string& path);

    // Takes the prices (listings, purchases, the amortisation and the snapshot) of `other` for the
    // GPUs both have, in place: no GpuSpec moves, so pointers into this database stay valid (the
    // merged document later user files apply to is left as it was).
    void takePricesFrom(const GpuDatabase& other);

    const std::vector<GpuSpec>& gpus() const { return gpus_; }
    const std::map<std::string, GpuSource>& sources() const { return sources_; }
    const std::map<std::string, ArchLimits>& architectures() const { return architectures_; }
    const std::vector<std::string>& appliedFiles() const { return appliedFiles_; }
    const PriceSnapshot& priceSnapshot() const { return priceSnapshot_; }
    const Amortisation& amortisation() const { return amortisation_; }

    // By id ("a100-sxm4-40gb"), display name or CUDA device name, case-insensitive.
    const GpuSpec* find(const std::string& idOrName) const;
    // Like find(), but throws ModelError listing the known ids when nothing matches.
    const GpuSpec& get(const std::string& idOrName) const;
    // The entry whose device_names contain what CUDA reports (exact, then case- and
    // space-insensitive, then without an "NVIDIA "/"Tesla " prefix); nullptr when unknown.
    const GpuSpec* matchDevice(const std::string& cudaName) const;
    const ArchLimits* limitsFor(int ccMajor, int ccMinor) const;

    // An entry for a GPU the database lacks, from what the runtime reports and, when
    // available, its calibration (figures it cannot know are marked unknown).
    GpuSpec specFromDevice(const DeviceProperties& props, const CalibrationResult* calibration) const;

private:
    void finalize(const std::string& origin);  // resolve limits, check references and consistency
    std::vector<GpuSpec> gpus_;
    std::map<std::string, GpuSource> sources_;
    std::map<std::string, ArchLimits> architectures_;  // key "8.0"
    std::vector<std::string> appliedFiles_;
    PriceSnapshot priceSnapshot_;
    Amortisation amortisation_;
    std::shared_ptr<const GpuDatabaseDocument> document_;
};

}  // namespace ts
