#pragma once
// The hardware choice: which GPU to rent or buy for a model, at what per-GPU batch size and
// precision, for what time and cost. Per GPU it recommends a precision and batch size (the rule in
// docs/report.md), predicts that choice, costs it with trainingCost, and ranks the GPUs: priced ones
// by the cost of the training goal, then unpriced ones by time, then those where nothing fits, with
// the reason. The HTML/PDF report (app/report), the CLI's `report` and its CSV/JSON share this.
//
//   HardwareChoice c = chooseHardware(predictor, gpus, base, goal, options);
//   for (const HardwareChoiceRow& row : c.rows) ...  // ranked, best first
#include <cstdint>
#include <string>
#include <vector>

#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/choice/training_cost.h"
#include "trainscope/predictors/iteration/training_predictor.h"

namespace ts::predictors {

struct HardwareChoiceOptions {
    std::string modelLabel;  // what the user named (zoo:resnet50, a file); the analysis's name when empty
    int64_t batch = 0;       // per-GPU batch size; 0: chosen per GPU from candidateBatches()
    // Precisions to consider; empty: every precision (each GPU then uses those it supports).
    std::vector<TrainingPrecision> precisions;
    // A smaller batch is preferred when its throughput is within this share of the best one.
    double nearBestShare = 0.03;
    PriceSnapshot priceSnapshot;  // GpuDatabase::priceSnapshot(), stated with the prices
    Amortisation amortisation;    // GpuDatabase::amortisation(), stated where a price is amortised
};

// The recommended batch of one (GPU, precision) sweep: the smallest batch whose throughput is
// within `nearBestShare` of the best among the batches that fit (with the memory's upper bound:
// at most the low end of the largest-batch range), so never one the model says does not help;
// only batches in `considered` count (all the sweep's when empty). 0 when none fits.
struct RecommendedBatch {
    int64_t batch = 0;
    double samplesPerS = 0;
};
RecommendedBatch recommendBatch(const GpuSweep& sweep, double nearBestShare = 0.03,
                                const std::vector<int64_t>& considered = {});

// The batch sizes the automatic choice considers: 1, 2, 3, 4, 6, 8, 12, 16, ... (powers of two and
// 1.5 times them) up to `limit`, at most kMaxCandidateBatch.
inline constexpr int64_t kMaxCandidateBatch = int64_t(1) << 16;
std::vector<int64_t> candidateBatches(int64_t limit = kMaxCandidateBatch);

struct HardwareChoiceRow {
    int rank = 0;  // 1 = best
    std::string gpuId;
    std::string gpuName;
    bool recommended = false;  // a precision and batch fit this GPU
    std::string reason;        // why nothing is recommended, when !recommended
    // The recommendation (when !recommended: the closest miss, batch 1 or the fixed batch at the
    // precision that needs the least memory, so that its memory can be shown; unset when no
    // considered precision is supported).
    TrainingPrecision precision = TrainingPrecision::Fp32;
    int64_t batch = 0;
    TrainingPrediction prediction;  // predict() at that precision and batch (no per-layer times)
    TrainingCost cost;              // trainingCost(prediction, gpu, goal)
    // Throughput and memory over candidateBatches() (and the fixed batch) at `precision`, for plots.
    std::vector<SweepPoint> curve;
    std::vector<std::string> notes;  // numerics of the precision, the prediction's own notes
};

struct HardwareChoice {
    std::string modelLabel;
    std::string modelName;  // ModelAnalysis::modelName
    double parameters = 0;  // the whole model's
    double activeParameters = 0;  // of those, what one token's forward uses (a mixture of experts' top-k)
    // Under tensor or expert parallelism: the GPUs of a group and the parameters each holds (its shard).
    int tensorParallel = 1;
    int expertParallel = 1;
    double parametersPerGpu = 0;
    // What the optimizer updates, of parametersPerGpu: fewer in a fine-tune (LoRA's adapters, frozen
    // parameters), so that a report says which set-up it ranks GPUs for.
    double trainableParameters = 0;
    // The sequence length of a sequence model (its rows' tokensPerS is samplesPerS x seq); 0 for a
    // model without one.
    int64_t seq = 0;
    TrainingScenario base;  // optimizer, data parallelism, checkpointing (batch and precision per row)
    TrainingGoal goal;
    HardwareChoiceOptions options;
    std::vector<HardwareChoiceRow> rows;   // ranked
    std::vector<std::string> assumptions;  // sentences: the rules, the goal, prices, intervals, sources
};

// Which GPUs "cheapest" is chosen among, for a sentence that names the best row: "of all 28 GPUs",
// or "of the 19 priced GPUs where a batch fits, out of 28 (6 without a price, 3 where nothing fits)".
std::string rankingScope(const HardwareChoice& choice);

// The recommended row with the shortest predicted time to train the goal (the first in rank order
// on a tie); nullptr when nothing fits anywhere. Price plays no part.
const HardwareChoiceRow* fastestRow(const HardwareChoice& choice);
// Which GPUs fastestRow chooses among: "of all 28 GPUs", or "of the 26 GPUs where a batch fits,
// out of 28".
std::string fastestScope(const HardwareChoice& choice);
// The cost-time frontier: the priced, recommended rows that no other priced row beats on both the
// predicted time to train and the predicted cost (equal in one and better in the other counts as
// beating), fastest first, so cheapest last. Every other priced GPU is slower and dearer than one
// of these.
std::vector<const HardwareChoiceRow*> costTimeFrontier(const HardwareChoice& choice);

// Throws what the predictor throws for an invalid base scenario (ModelError naming the option).
HardwareChoice chooseHardware(const TrainingPredictor& predictor, const std::vector<const GpuSpec*>& gpus,
                              const TrainingScenario& base, const TrainingGoal& goal,
                              const HardwareChoiceOptions& options = {});

// The ranking as CSV (RFC 4180: a header line, one record per GPU, CRLF line ends, fields with a
// comma, quote or line break quoted) and as JSON (format "trainscope-hardware-choice", version
// kHardwareChoiceFormatVersion). docs/report.md lists the fields; both carry the same rows.
inline constexpr int kHardwareChoiceFormatVersion = 1;
std::string hardwareChoiceCsv(const HardwareChoice& choice);
std::string hardwareChoiceJson(const HardwareChoice& choice);
// The CSV's column names, in order.
const std::vector<std::string>& hardwareChoiceCsvColumns();

}  // namespace ts::predictors
