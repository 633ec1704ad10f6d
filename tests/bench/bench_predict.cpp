// Speed of training predictions (issue 5: every GPU x 4 precisions x 64 batch sizes of a
// 1,000-operation model in under 20 ms on one core, so that a GUI slider recomputes everything).
// Prints the median thread CPU time of repeated runs (one thread); no pass/fail:
// `trainscope_bench_predict [MODEL...]`.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "trainscope/core/builder.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/iteration/training_predictor.h"

using namespace ts;
using namespace ts::predictors;

namespace {

// This thread's CPU time in ms: on a shared machine, time spent descheduled does not count.
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Median CPU time of `repeats` runs.
double medianMs(int repeats, const std::function<void()>& f) {
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
        const double t0 = threadCpuMs();
        f();
        ms.push_back(threadCpuMs() - t0);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// 500 Linear + GELU pairs of all different widths: 1,000 operations that do not repeat, the
// worst case for the sweep's de-duplication of identical layers.
Graph distinctLayers() {
    ModelBuilder b("distinct_mlp");
    int x = b.input("x", {Dim::batch(), Dim(64)});
    for (int i = 0; i < 500; ++i) {
        auto s = b.scope("l" + std::to_string(i));
        x = b.gelu(b.linear("fc", x, 64 + (i % 2 ? i : 3 * i)));
    }
    return b.finish({x});
}

// A profile "measured" on a V100 at three batch sizes: every layer at 1.1 x its analytic time.
Profile syntheticProfile(const Graph& g) {
    const GpuSpec& v100 = GpuDatabase::builtin().get("v100-sxm2-16gb");
    const ModelAnalysis m(g);
    const OperationTimes rows = prepareOperationTimes(m, v100, TrainingPrecision::Fp32);
    Profile p;
    p.environment.deviceName = v100.deviceNames.at(0);
    DeviceProperties props;
    props.name = p.environment.deviceName;
    p.environment.gpu = props;
    p.scenario.precision = "fp32";
    p.scenario.optimizer = "adam";
    for (int64_t b : {8, 32, 128}) {
        ProfileRun r;
        r.batch = b;
        r.iteration.medianMs = 1;
        r.iteration.repeats = 10;
        for (const TimeRow& f : rows.forward) {
            LayerProfile l;
            l.op = f.op;
            l.name = g.ops[size_t(f.op)].name;
            l.forward.medianMs = 1.1 * f.at(double(b));
            l.forward.repeats = 10;
            r.iteration.medianMs += l.forward.medianMs;
            r.layers.push_back(l);
        }
        for (const TimeRow& bw : rows.backward)
            for (LayerProfile& l : r.layers)
                if (l.op == bw.op) {
                    l.hasBackward = true;
                    l.backward.medianMs = 1.1 * bw.at(double(b));
                    l.backward.repeats = 10;
                    r.iteration.medianMs += l.backward.medianMs;
                }
        p.runs.push_back(r);
    }
    return p;
}

void bench(const std::string& label, const Graph& g) {
    const GpuDatabase& db = GpuDatabase::builtin();
    std::vector<const GpuSpec*> gpus;
    for (const GpuSpec& s : db.gpus()) gpus.push_back(&s);
    const std::vector<TrainingPrecision> precisions = {TrainingPrecision::Fp32, TrainingPrecision::Tf32,
                                                       TrainingPrecision::AmpFp16, TrainingPrecision::AmpBf16};
    std::vector<int64_t> batches;
    for (int i = 1; i <= 64; ++i) batches.push_back(i * 8);
    TrainingScenario base;
    base.optimizer = Optimizer::Adam;

    std::unique_ptr<TrainingPredictor> predictor;
    const double analysis = medianMs(3, [&] { predictor = std::make_unique<TrainingPredictor>(g); });
    std::unique_ptr<SweepPlan> plan;
    const double prepare = medianMs(3, [&] { plan = std::make_unique<SweepPlan>(*predictor, gpus, precisions, base); });
    size_t points = 0;
    const double evaluate = medianMs(21, [&] {
        points = 0;
        for (const GpuSweep& s : plan->evaluate(batches)) points += s.points.size();
    });
    TrainingScenario dp = base;
    dp.dataParallel.gpus = 8;
    dp.dataParallel.interconnect = InterconnectKind::InfiniBand;
    SweepPlan dpPlan(*predictor, gpus, precisions, dp);
    const double evaluateDp = medianMs(21, [&] { dpPlan.evaluate(batches); });
    std::printf("%s: %zu operations, %zu GPUs x %zu precisions x %zu batch sizes (%zu supported points)\n",
                label.c_str(), g.ops.size(), gpus.size(), precisions.size(), batches.size(), points);
    std::printf("  model analysis (once per model and sequence length)          %8.2f ms\n", analysis);
    std::printf("  sweep plan: per (GPU, precision) rows and largest batches    %8.2f ms\n", prepare);
    std::printf("  evaluate every GPU x precision x batch size                  %8.2f ms\n", evaluate);
    std::printf("  the same with 8 GPUs data-parallel (bucketed all-reduce)     %8.2f ms\n", evaluateDp);

    TrainingPredictor profiled(g);
    profiled.useProfile(syntheticProfile(g), db);
    std::unique_ptr<SweepPlan> profilePlan;
    const double profilePrepare =
        medianMs(3, [&] { profilePlan = std::make_unique<SweepPlan>(profiled, gpus, precisions, base); });
    const double profileEvaluate = medianMs(5, [&] { profilePlan->evaluate(batches); });
    std::printf("  from a profile (3 batch sizes, V100): sweep plan             %8.2f ms\n", profilePrepare);
    std::printf("  from a profile: evaluate every GPU x precision x batch size  %8.2f ms\n", profileEvaluate);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> specs;
    for (int i = 1; i < argc; ++i) specs.push_back(argv[i]);
    if (specs.empty()) specs = {"zoo:gpt2_large?seq=512", "zoo:resnet50"};
    for (const std::string& spec : specs) bench(spec, loadModel(spec));
    bench("1,000 distinct operations", distinctLayers());
    return 0;
}
