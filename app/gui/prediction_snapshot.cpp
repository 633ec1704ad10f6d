#include "prediction_snapshot.h"

#include <algorithm>

#include "trainscope/core/errors.h"
#include "trainscope/core/fine_tuning.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/choice/hardware_choice.h"

namespace ts::gui {

using namespace ts::predictors;

bool ExplorerSettings::sameButBatch(const ExplorerSettings& o) const {
    return precision == o.precision && optimizer == o.optimizer &&
           optimizerImplementation == o.optimizerImplementation && gpuId == o.gpuId && gpus == o.gpus &&
           interconnect == o.interconnect && checkpointing == o.checkpointing && zeroStage == o.zeroStage &&
           accumulation == o.accumulation && loraRank == o.loraRank && loraDropout == o.loraDropout && seq == o.seq &&
           channelsLast == o.channelsLast && masterWeights == o.masterWeights && tensorParallel == o.tensorParallel &&
           sequenceParallel == o.sequenceParallel && expertParallel == o.expertParallel;
}

std::shared_ptr<const ExplorerModel> makeExplorerModel(std::string spec, int generation,
                                                       std::shared_ptr<const Graph> graph,
                                                       std::shared_ptr<const Profile> profile, int64_t seq,
                                                       const GpuDatabase& db, std::shared_ptr<const Graph> baseGraph,
                                                       LoraOptions lora) {
    auto m = std::make_shared<ExplorerModel>();
    m->spec = std::move(spec);
    m->generation = generation;
    m->graph = std::move(graph);
    m->baseGraph = std::move(baseGraph);
    m->lora = std::move(lora);
    m->profile = std::move(profile);
    m->defaults = scenarioDefaultsFor(*m->graph);
    if (seq <= 0 && m->profile && m->profile->scenario.seq > 0) seq = m->profile->scenario.seq;
    auto predictor = std::make_shared<TrainingPredictor>(*m->graph, seq);
    if (m->profile) {
        try {
            predictor->useProfile(*m->profile, db);
        } catch (const std::exception& e) {
            // The calibration stands in; a predictor whose profile failed half-way is not reused.
            m->profileProblem = e.what();
            predictor = std::make_shared<TrainingPredictor>(*m->graph, seq);
        }
    }
    m->seq = predictor->analysis().sequenceModel ? predictor->analysis().seq : 0;
    m->tensorParallel = predictor->analysis().tensorParallel;
    m->sequenceParallel = predictor->analysis().sequenceParallel;
    m->expertParallel = predictor->analysis().expertParallel;
    m->predictor = std::move(predictor);
    return m;
}

namespace {

TrainingScenario scenarioOf(const ExplorerSettings& s) {
    TrainingScenario t;
    t.batch = s.batch;
    t.precision = s.precision;
    t.optimizer = s.optimizer;
    t.optimizerImplementation = s.optimizerImplementation;
    t.dataParallel.gpus = s.gpus;
    t.dataParallel.interconnect = s.interconnect;
    t.checkpointing = s.checkpointing;
    t.dataParallel.zeroStage = s.zeroStage;
    t.accumulation = s.accumulation;
    t.channelsLast = s.channelsLast;
    t.masterWeights = s.masterWeights;
    return t;
}

// Batch sizes for the plot: every size up to 16, then about 12 points per doubling, up to `last`.
// A 6% grid and the report's candidate batch sizes (1, 2, 3, 4, 6, 8, 12, ...), so that the
// recommendation is one the report would make.
std::vector<int64_t> plotBatches(int64_t last) {
    std::vector<int64_t> batches = candidateBatches(last);
    for (double b = 1; b <= double(last); b = std::max(b + 1, b * 1.06)) batches.push_back(int64_t(b));
    batches.push_back(last);
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    return batches;
}

// The target's throughput and memory over batch sizes, up to twice the current batch (and twice
// the largest that fits); evaluated again only when that end moves beyond what was plotted.
void updateSweep(PredictionSnapshot& s) {
    if (!s.targetPlan) {
        s.sweep = GpuSweep{};
        s.sweep.supported = false;
        s.recommendedBatch = 0;
        s.sweptUpTo = 0;
        return;
    }
    const int64_t batch = s.settings.batch;
    const int64_t fitting = s.current.supported ? int64_t(s.current.maxBatch.high) : 0;
    const int64_t last = std::clamp<int64_t>(std::max({int64_t(64), 2 * fitting, 2 * batch}), 1, kMaxExplorerBatch);
    if (s.sweptUpTo > 0 && last <= s.sweptUpTo && 4 * last > s.sweptUpTo) return;
    const std::vector<int64_t> batches = plotBatches(last);
    std::vector<GpuSweep> sweeps = s.targetPlan->evaluate(batches);
    s.sweep = sweeps.empty() ? GpuSweep{} : std::move(sweeps.front());
    s.sweptUpTo = last;
    s.recommendedBatch = s.sweep.supported ? recommendBatch(s.sweep, 0.03, candidateBatches(last)).batch : 0;
}

void failed(PredictionSnapshot& s, const std::string& reason) {
    s.plan.reset();
    s.targetPlan.reset();
    s.bounds.reset();
    s.current = TrainingPrediction{};
    s.current.supported = false;
    s.current.reason = reason;
    s.allGpus.clear();
    s.sweep = GpuSweep{};
    s.sweep.supported = false;
    s.recommendedBatch = 0;
    s.sweptUpTo = 0;
}

}  // namespace

std::shared_ptr<const PredictionSnapshot> emptySnapshot(std::shared_ptr<const GpuDatabase> db,
                                                        const ExplorerSettings& settings, const TrainingGoal& goal,
                                                        std::string error) {
    auto s = std::make_shared<PredictionSnapshot>();
    s->database = std::move(db);
    s->settings = settings;
    s->goal = goal;
    s->error = std::move(error);
    s->current.supported = false;
    s->sweep.supported = false;
    return s;
}

std::shared_ptr<const PredictionSnapshot> predictSnapshot(std::shared_ptr<const ExplorerModel> model,
                                                          std::shared_ptr<const GpuDatabase> db,
                                                          ExplorerSettings settings, const TrainingGoal& goal,
                                                          const std::atomic<bool>* cancelled) {
    auto stop = [cancelled] { return cancelled && cancelled->load(); };
    auto s = std::make_shared<PredictionSnapshot>();
    s->database = db;
    s->goal = goal;
    s->settings = settings;  // what was asked, should the model fail at it
    try {
        // Another tensor- or expert-parallel group is another shard of the model, built again from its
        // config; LoRA's adapters (below) go beside the new shard's layers.
        settings.sequenceParallel &= settings.tensorParallel > 1;
        if (settings.tensorParallel != model->tensorParallel || settings.sequenceParallel != model->sequenceParallel ||
            settings.expertParallel != model->expertParallel) {
            const int t = settings.tensorParallel, e = settings.expertParallel;
            std::string sharded = modelSpecWith(model->spec, "tensor_parallel", t > 1 ? std::to_string(t) : "");
            sharded = modelSpecWith(sharded, "sequence_parallel", settings.sequenceParallel ? "1" : "");
            auto base = std::make_shared<const Graph>(
                loadModel(modelSpecWith(sharded, "expert_parallel", e > 1 ? std::to_string(e) : "")));
            model = makeExplorerModel(model->spec, model->generation, base, model->profile,
                                      settings.seq > 0 ? settings.seq : model->seq, *db, base);
        }
        // Other adapters are another graph (beside the base's linear layers, the base frozen): another
        // rank or dropout, and bf16-params with master weights, where the adapters compute in bf16
        // (FSDP's mixed precision) rather than in fp32 as PEFT creates them, and fp16-params, whose
        // whole model (adapters included) apex's O2 and DeepSpeed cast to fp16.
        LoraOptions lora;
        if (settings.loraRank > 0) {
            lora.rank = settings.loraRank;
            lora.dropout = settings.loraDropout;
            lora.fp32Adapters =
                !((settings.precision == predictors::TrainingPrecision::Bf16Params && settings.masterWeights) ||
                  settings.precision == predictors::TrainingPrecision::Fp16Params);
        }
        if (lora.rank != model->lora.rank || lora.dropout != model->lora.dropout ||
            lora.fp32Adapters != model->lora.fp32Adapters) {
            std::shared_ptr<const Graph> base = model->baseGraph ? model->baseGraph : model->graph;
            std::shared_ptr<const Graph> graph = base;
            if (lora.rank > 0) {
                try {
                    graph = std::make_shared<const Graph>(withLora(*base, lora));
                } catch (const ModelError& e) {
                    // The command line's option names mean nothing here: the problem alone.
                    const std::string problem = e.problem().substr(0, e.problem().find("; name the layers"));
                    throw ModelError("LoRA rank " + std::to_string(lora.rank), problem);
                }
            }
            model = makeExplorerModel(model->spec, model->generation, graph, model->profile,
                                      settings.seq > 0 ? settings.seq : model->seq, *db, base, lora);
        }
        // Another sequence length is another analysis of the model (the graph stays).
        if (settings.seq > 0 && model->seq > 0 && settings.seq != model->seq)
            model = makeExplorerModel(model->spec, model->generation, model->graph, model->profile, settings.seq, *db,
                                      model->baseGraph, model->lora);
        settings.seq = model->seq;
        s->model = model;
        s->settings = settings;
        if (stop()) return nullptr;
        const TrainingPredictor& predictor = *model->predictor;
        const TrainingScenario scenario = scenarioOf(settings);
        s->costs = computeCosts(*model->graph, settings.batch, model->seq);
        const GpuSpec* target = s->targetGpu();
        std::vector<const GpuSpec*> gpus;
        for (const GpuSpec& gpu : db->gpus()) {
            if (stop()) return nullptr;
            gpus.push_back(&gpu);
            if (&gpu == target) {
                s->current = predictor.predict(gpu, scenario, true);
                s->allGpus.push_back(s->current);
            } else {
                s->allGpus.push_back(predictor.predict(gpu, scenario, false));
            }
        }
        if (stop()) return nullptr;
        s->plan = std::make_shared<const SweepPlan>(predictor, gpus, std::vector<TrainingPrecision>{settings.precision},
                                                    scenario);
        if (target) {
            s->targetPlan =
                std::make_shared<const SweepPlan>(predictor, std::vector<const GpuSpec*>{target},
                                                  std::vector<TrainingPrecision>{settings.precision}, scenario);
            if (s->current.supported)
                s->bounds = std::make_shared<const LayerBounds>(predictor, *target, settings.precision);
        }
        updateSweep(*s);
    } catch (const std::exception& e) {
        // The model stays on screen with the reason (a length its analysis cannot take, a
        // scenario the predictor rejects).
        failed(*s, e.what());
    }
    if (!s->model) s->model = std::move(model);
    return s;
}

std::shared_ptr<const PredictionSnapshot> atBatch(const PredictionSnapshot& from, int64_t batch) {
    if (!from.plan || !from.model) return nullptr;
    auto s = std::make_shared<PredictionSnapshot>();
    s->model = from.model;
    s->database = from.database;
    s->settings = from.settings;
    s->settings.batch = batch;
    s->goal = from.goal;
    s->plan = from.plan;
    s->targetPlan = from.targetPlan;
    s->bounds = from.bounds;
    s->sweep = from.sweep;
    s->sweptUpTo = from.sweptUpTo;
    s->recommendedBatch = from.recommendedBatch;
    try {
        const TrainingPredictor& predictor = *s->model->predictor;
        const TrainingScenario scenario = scenarioOf(s->settings);
        s->costs = computeCosts(*s->model->graph, batch, s->model->seq);
        if (const GpuSpec* target = s->targetGpu()) s->current = predictor.predict(*target, scenario, true);
        const std::vector<GpuSweep> now = s->plan->evaluate({batch});
        s->allGpus = from.allGpus;
        for (size_t i = 0; i < now.size() && i < s->allGpus.size(); ++i) {
            TrainingPrediction& p = s->allGpus[i];
            if (p.gpuId == s->current.gpuId) {
                p = s->current;
                continue;
            }
            p.scenario = scenario;
            if (!now[i].supported || !p.supported || now[i].points.empty()) continue;
            const SweepPoint& point = now[i].points.front();
            p.iterationMs = point.iterationMs;
            p.samplesPerS = point.samplesPerS;
            if (p.tokensPerS.value > 0) {
                const double seq = double(s->model->seq);
                p.tokensPerS = {point.samplesPerS.value * seq, point.samplesPerS.low * seq,
                                point.samplesPerS.high * seq};
            }
            p.peakMemoryBytes = point.peakMemoryBytes;
            p.fits = point.fits;
            p.maxBatch = now[i].maxBatch;
            p.layers.clear();  // per layer only for the target GPU
        }
        updateSweep(*s);
    } catch (const std::exception& e) {
        failed(*s, e.what());
    }
    return s;
}

}  // namespace ts::gui
