// Fine-tuning set-ups: frozen parameters (no gradient, no optimizer state, no weight-gradient
// kernels), LoRA adapters as PEFT adds them, QLoRA's NF4 base weights, 8-bit Adam and gradient
// accumulation. Expected values are written from the formulas, not from the program's output.
#include <gtest/gtest.h>

#include "trainscope/core/errors.h"
#include "trainscope/core/fine_tuning.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/iteration/training_predictor.h"
#include "trainscope/predictors/iteration/operation_times.h"
#include "trainscope/predictors/memory/memory_model.h"

#include "mlp_test_model.h"

using namespace ts;
using namespace ts::predictors;

namespace {

using predictor_test::mlp;

constexpr double kFc1 = 256.0 * 512 + 512, kFc2 = 512.0 * 10 + 10;

const GpuSpec& gpu(const std::string& id) {
    return GpuDatabase::builtin().get(id);
}

MemoryBreakdown memoryOf(const Graph& g, TrainingPrecision p, Optimizer o, double n = 8) {
    const ModelAnalysis m(g);
    return MemoryModel(m, p, o, Checkpointing::None, 1).at(n, gpu("h100-sxm"));
}

const AnalyzedOp& opNamed(const ModelAnalysis& m, const std::string& prefix) {
    for (const AnalyzedOp& op : m.ops)
        if (op.name.rfind(prefix, 0) == 0 && op.hasWork()) return op;
    throw std::runtime_error("no op " + prefix);
}

// GPT-2 small (HF GPT2Config defaults): per block the linear layers c_attn 768->2304,
// attn.c_proj 768->768, mlp.c_fc 768->3072, mlp.c_proj 3072->768.
constexpr double kGpt2LinearFeatures = (768 + 2304) + (768 + 768) + (768 + 3072) + (3072 + 768);
constexpr double kGpt2LinearWeights = 768.0 * 2304 + 768.0 * 768 + 2 * 768.0 * 3072;
constexpr double kGpt2Parameters = 124439808;  // transformers' GPT2LMHeadModel(GPT2Config()), tied head

}  // namespace

TEST(FineTuning, FrozenParametersHaveNoGradientsOrOptimizerState) {
    Graph g = mlp();
    trainOnly(g, {"fc2."});
    const MemoryBreakdown m = memoryOf(g, TrainingPrecision::Fp32, Optimizer::Adam);
    EXPECT_DOUBLE_EQ(m.weights, 4 * (kFc1 + kFc2));  // frozen weights stay, at fp32
    EXPECT_DOUBLE_EQ(m.gradients, 4 * kFc2);
    EXPECT_DOUBLE_EQ(m.optimizerState, 8 * kFc2);
    const ModelAnalysis a(g);
    EXPECT_EQ(a.parameters, int64_t(kFc1 + kFc2));
    EXPECT_EQ(a.trainableParameters, int64_t(kFc2));
}

TEST(FineTuning, FrozenLinearRunsOnlyTheInputGradient) {
    // fc1 trains, fc2 is frozen: fc2's backward is the input-gradient GEMM only (2 N 10 512 FLOPs,
    // one kernel); fc1 still computes its weight gradient but not its input's (x needs none).
    Graph g = mlp();
    trainOnly(g, {"fc1."});
    const ModelAnalysis a(g);
    const AnalyzedOp& fc2 = opNamed(a, "fc2");
    EXPECT_TRUE(fc2.backward);
    EXPECT_EQ(fc2.backwardKernels, 1);
    for (double n : {1.0, 32.0}) EXPECT_DOUBLE_EQ(fc2.backwardFlops.at(n), 2 * n * 10 * 512);
    const AnalyzedOp& fc1 = opNamed(a, "fc1");
    EXPECT_EQ(fc1.backwardKernels, 1);  // weight gradient only
    // With fc1 frozen as well, nothing upstream needs a gradient: no backward at all.
    Graph none = mlp();
    trainOnly(none, {"fc2."});
    const ModelAnalysis b(none);
    EXPECT_FALSE(opNamed(b, "fc1").backward);
    EXPECT_EQ(opNamed(b, "fc2").backwardKernels, 1);  // its weight gradient only
}

TEST(FineTuning, LoraParameterCountIsPefts) {
    const Graph base = loadModel("zoo:gpt2?seq=32");
    ASSERT_EQ(base.parameterCount(), int64_t(kGpt2Parameters));
    for (int64_t r : {8, 16}) {
        LoraOptions o;
        o.rank = r;
        const Graph g = withLora(base, o);
        const ModelAnalysis a(g);
        // A is r x in, B is out x r, no bias: r (in + out) per linear layer, 12 blocks.
        const double expected = 12 * r * kGpt2LinearFeatures;
        EXPECT_EQ(a.trainableParameters, int64_t(expected));
        EXPECT_EQ(a.parameters, int64_t(kGpt2Parameters + expected));
    }
    // PEFT 0.21.2 on transformers' GPT2LMHeadModel(GPT2Config()) with target_modules="all-linear",
    // counted in the test venv (sum of requires_grad parameters): r=8 1179648, r=16 2359296;
    // target_modules=["c_attn"], r=16: 589824.
    LoraOptions o;
    o.rank = 8;
    EXPECT_EQ(ModelAnalysis(withLora(base, o)).trainableParameters, 1179648);
    o.rank = 16;
    o.targets = {"c_attn"};
    EXPECT_EQ(ModelAnalysis(withLora(base, o)).trainableParameters, 589824);
}

TEST(FineTuning, LoraAddsTwoGemmsAndTheModuleTreeShowsThem) {
    const Graph base = loadModel("zoo:gpt2?seq=32");
    LoraOptions o;
    o.rank = 4;
    o.targets = {"h.0.attn.c_attn"};
    o.fp32Adapters = false;
    // x A, then B, the alpha/r scaling and the add: four operations more.
    EXPECT_EQ(withLora(base, o).ops.size(), base.ops.size() + 4);
    // PEFT's fp32 adapters: x cast to fp32 (the dropout's input), down to the autocast dtype for A,
    // the sum cast back to the base output's dtype; the dropout between the first two.
    o.fp32Adapters = true;
    o.dropout = 0.05;
    const Graph g = withLora(base, o);
    std::vector<std::string> added;
    for (const Operation& op : g.ops)
        if (op.modulePath.find("c_attn.lora") != std::string::npos) added.push_back(op.type);
    EXPECT_EQ(added,
              (std::vector<std::string>{"Cast", "Dropout", "Cast", "MatMul", "MatMul", "Mul", "Add", "CastLike"}));
    int a = g.findValue("transformer.h.0.attn.c_attn.lora_A.default.weight");
    int b = g.findValue("transformer.h.0.attn.c_attn.lora_B.default.weight");
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    EXPECT_EQ(numel(g.values[size_t(a)].shape).eval(1, 1), 768 * 4);
    EXPECT_EQ(numel(g.values[size_t(b)].shape).eval(1, 1), 4 * 2304);
    const ModelAnalysis m(g);
    // Forward FLOPs of the adapter GEMMs at batch n, sequence 32: 2 n 32 (768 r + r 2304).
    const AnalyzedOp& down = opNamed(m, "transformer.h.0.attn.c_attn.lora_A.default/MatMul");
    const AnalyzedOp& up = opNamed(m, "transformer.h.0.attn.c_attn.lora_B.default/MatMul");
    EXPECT_DOUBLE_EQ(down.forwardFlops.at(3), 2.0 * 3 * 32 * 768 * 4);
    EXPECT_DOUBLE_EQ(up.forwardFlops.at(3), 2.0 * 3 * 32 * 4 * 2304);
    // Nothing before h.0's attention trains: A's backward is its weight gradient only.
    EXPECT_EQ(down.backwardKernels, 1);
    EXPECT_EQ(up.backwardKernels, 2);
}

TEST(FineTuning, LoraDropoutKeepsAByteMaskPerAdaptedInputElement) {
    // Every block's c_attn adapted (input [n, 32, 768], which nothing else saves): PEFT's dropout keeps
    // its one-byte mask, and A keeps the dropped input where it kept the input itself (fp32, or the
    // bf16 copy autocast makes): one byte per input element more, at every precision, in the 11
    // blocks whose input needs a gradient (block 0's does not: autograd records no dropout there).
    const Graph base = loadModel("zoo:gpt2?seq=32");
    LoraOptions o;
    o.rank = 8;
    o.targets = {"attn.c_attn"};
    const Graph plain = withLora(base, o);
    o.dropout = 0.1;
    const Graph dropped = withLora(base, o);
    for (TrainingPrecision p : {TrainingPrecision::Fp32, TrainingPrecision::AmpBf16, TrainingPrecision::Bf16Params}) {
        SCOPED_TRACE(trainingPrecisionName(p));
        const double n = 3;
        EXPECT_DOUBLE_EQ(
            memoryOf(dropped, p, Optimizer::AdamW, n).activations - memoryOf(plain, p, Optimizer::AdamW, n).activations,
            11 * n * 32 * 768);
    }
}

TEST(FineTuning, Fp32AdaptersCopyTheirInputOnlyWhereTheModelIsNotFp32) {
    // Block 0's c_attn adapted and its own weight trained too, so that the base saves its input x for
    // its weight gradient. In an fp32 model PEFT's x.to(fp32) is x: A keeps the same storage and the
    // fp32 adapters' casts add nothing. In a bf16 model A keeps the bf16 copy autocast makes of the
    // fp32 cast: 2 bytes per element more than adapters in the model's dtype, which read x itself.
    const Graph base = loadModel("zoo:gpt2?seq=32");
    LoraOptions o;
    o.rank = 8;
    o.targets = {"h.0.attn.c_attn"};
    auto adapted = [&](bool fp32) {
        o.fp32Adapters = fp32;
        Graph g = withLora(base, o);
        trainAlso(g, {"h.0.attn.c_attn.weight"});
        return g;
    };
    const Graph fp32 = adapted(true), model = adapted(false);
    const double n = 2, elements = n * 32 * 768;
    EXPECT_DOUBLE_EQ(memoryOf(fp32, TrainingPrecision::Fp32, Optimizer::AdamW, n).activations,
                     memoryOf(model, TrainingPrecision::Fp32, Optimizer::AdamW, n).activations);
    EXPECT_DOUBLE_EQ(memoryOf(fp32, TrainingPrecision::Bf16Params, Optimizer::AdamW, n).activations -
                         memoryOf(model, TrainingPrecision::Bf16Params, Optimizer::AdamW, n).activations,
                     2 * elements);
    // Adapters in the model's dtype are no fp32 adapters: their states follow the model's.
    EXPECT_EQ(ModelAnalysis(fp32).adapterParameters, int64_t(8 * (768 + 2304)));
    EXPECT_EQ(ModelAnalysis(model).adapterParameters, 0);
}

TEST(FineTuning, LoraMemoryUnderAutocast) {
    // Frozen base in 16 bits (no fp32 copy, no autocast cast); adapters fp32 with gradients, Adam
    // states and autocast's 16-bit copies.
    LoraOptions o;
    o.rank = 16;
    const Graph g = withLora(loadModel("zoo:gpt2?seq=32"), o);
    const double adapters = 12 * 16 * kGpt2LinearFeatures;
    const MemoryBreakdown m = memoryOf(g, TrainingPrecision::AmpBf16, Optimizer::AdamW, 1);
    EXPECT_DOUBLE_EQ(m.weights, 2 * kGpt2Parameters + 4 * adapters);
    EXPECT_DOUBLE_EQ(m.gradients, 4 * adapters);
    EXPECT_DOUBLE_EQ(m.optimizerState, 8 * adapters);
    EXPECT_DOUBLE_EQ(m.castWeightCopies, 2 * adapters);
}

TEST(FineTuning, Bf16ParamsWithoutMasterWeightsKeepsTheModelsDtype) {
    // PEFT's LoRA on a model loaded in bf16, its embedding trained as modules_to_save (a copy beside
    // the frozen original). With an fp32 master copy: 2 B weight, 2 B gradient, 4 + 8 B of master and
    // AdamW states per trainable parameter. Without: the trained copy bf16 throughout (2 + 2 + 4),
    // the adapters fp32 as PEFT creates them (4 + 4 + 8).
    LoraOptions o;
    o.rank = 16;
    Graph g = withLora(loadModel("zoo:gpt2?seq=32"), o);
    trainAlso(g, {"wte"}, "--train", /*asCopies=*/true);
    const double adapters = 12 * 16 * kGpt2LinearFeatures, wte = 50257.0 * 768;
    const ModelAnalysis a(g);
    ASSERT_EQ(a.trainableParameters, int64_t(adapters + wte));
    ASSERT_EQ(a.adapterParameters, int64_t(adapters));
    const MemoryModel master(a, TrainingPrecision::Bf16Params, Optimizer::AdamW, Checkpointing::None, 1);
    const MemoryModel none(a, TrainingPrecision::Bf16Params, Optimizer::AdamW, Checkpointing::None, 1, 0,
                           OptimizerImplementation::Foreach, false, /*masterWeights=*/false);
    const MemoryBreakdown m = master.at(1, gpu("a100-sxm4-80gb")), p = none.at(1, gpu("a100-sxm4-80gb"));
    // The frozen base, the embedding's original included, in bf16 either way.
    EXPECT_DOUBLE_EQ(m.weights, 2 * kGpt2Parameters + 2 * (wte + adapters));
    EXPECT_DOUBLE_EQ(m.gradients, 2 * (wte + adapters));
    EXPECT_DOUBLE_EQ(m.optimizerState, 12 * (wte + adapters));
    EXPECT_DOUBLE_EQ(p.weights, 2 * kGpt2Parameters + 2 * wte + 4 * adapters);
    EXPECT_DOUBLE_EQ(p.gradients, 2 * wte + 4 * adapters);
    EXPECT_DOUBLE_EQ(p.optimizerState, 2 * (2 * wte + 4 * adapters));
    // Foreach AdamW's temporary is one state-sized copy.
    EXPECT_GE(p.workspace, 2 * wte + 4 * adapters);
    // The step moves bf16 tensors and writes no 16-bit copy: under half the master layout's bytes.
    const GpuSpec& a100 = gpu("a100-sxm4-80gb");
    const double withMaster = optimizerStepTimes(a, a100, Optimizer::AdamW, TrainingPrecision::Bf16Params,
                                                 OptimizerImplementation::Fused).gpuMs;
    const double without = optimizerStepTimes(a, a100, Optimizer::AdamW, TrainingPrecision::Bf16Params,
                                              OptimizerImplementation::Fused, StreamModel::shipped(),
                                              KernelScalingTable::builtin(), false).gpuMs;
    EXPECT_LT(without, withMaster * 0.6);
    // Through the predictor; at a precision with no 16-bit parameters the option changes nothing.
    TrainingPredictor predictor(g, 32);
    TrainingScenario s;
    s.optimizer = Optimizer::AdamW;
    s.precision = TrainingPrecision::Bf16Params;
    s.masterWeights = false;
    EXPECT_DOUBLE_EQ(predictor.predict(a100, s, false).memory.optimizerState, p.optimizerState);
    s.precision = TrainingPrecision::AmpBf16;
    const double amp = predictor.predict(a100, s, false).peakMemoryBytes.value;
    s.masterWeights = true;
    EXPECT_DOUBLE_EQ(predictor.predict(a100, s, false).peakMemoryBytes.value, amp);
}

// fp16-params (apex's amp O2, DeepSpeed's fp16) is bf16-params in fp16: the same bytes everywhere (on an
// A100, whose fp16 and bf16 tensor rates are one, the same forward and backward), its GEMMs at the fp16
// rate, and the dynamic loss scaler's host read before the step, which bf16-params does not have. It is
// what a V100, without bf16, can run of a 16-bit model.
TEST(FineTuning, Fp16ParamsIsTheBf16LayoutInFp16WithLossScaling) {
    TrainingPredictor predictor(loadModel("zoo:gpt2?seq=32"), 32);
    TrainingScenario s;
    s.optimizer = Optimizer::AdamW;
    s.batch = 8;
    const GpuSpec& a100 = gpu("a100-sxm4-80gb");
    ASSERT_DOUBLE_EQ(*a100.peakTflops(ComputePrecision::Fp16), *a100.peakTflops(ComputePrecision::Bf16));
    s.precision = TrainingPrecision::Bf16Params;
    const TrainingPrediction bf16 = predictor.predict(a100, s, false);
    s.precision = TrainingPrecision::Fp16Params;
    const TrainingPrediction fp16 = predictor.predict(a100, s, false);
    EXPECT_DOUBLE_EQ(fp16.peakMemoryBytes.value, bf16.peakMemoryBytes.value);
    EXPECT_DOUBLE_EQ(fp16.memory.weights, bf16.memory.weights);
    EXPECT_DOUBLE_EQ(fp16.memory.optimizerState, bf16.memory.optimizerState);
    EXPECT_DOUBLE_EQ(fp16.forwardMs.value, bf16.forwardMs.value);
    EXPECT_DOUBLE_EQ(fp16.backwardMs.value, bf16.backwardMs.value);
    EXPECT_GE(fp16.iterationMs.value, bf16.iterationMs.value);  // the step waits for the scaler's check
    // Its fp32 master copy is not optional (a setting carried over from bf16-params changes nothing).
    s.masterWeights = false;
    EXPECT_DOUBLE_EQ(predictor.predict(a100, s, false).peakMemoryBytes.value, fp16.peakMemoryBytes.value);
    s.masterWeights = true;
    // Autocast keeps fp32 weights and activations: more memory than the 16-bit model.
    s.precision = TrainingPrecision::AmpFp16;
    EXPECT_GT(predictor.predict(a100, s, false).peakMemoryBytes.value, fp16.peakMemoryBytes.value);
    // A V100 has fp16 tensor cores but no bf16.
    const GpuSpec& v100 = gpu("v100-sxm2-32gb");
    s.precision = TrainingPrecision::Bf16Params;
    const TrainingPrediction bf16OnV100 = predictor.predict(v100, s, false);
    EXPECT_FALSE(bf16OnV100.supported);
    EXPECT_NE(bf16OnV100.reason.find("BF16"), std::string::npos) << bf16OnV100.reason;
    s.precision = TrainingPrecision::Fp16Params;
    const TrainingPrediction onV100 = predictor.predict(v100, s, false);
    ASSERT_TRUE(onV100.supported) << onV100.reason;
    EXPECT_GT(onV100.iterationMs.value, fp16.iterationMs.value);
    EXPECT_DOUBLE_EQ(onV100.memory.weights, fp16.memory.weights);
}

TEST(FineTuning, QloraStoresTheAdaptedBaseWeightsInNf4) {
    LoraOptions o;
    o.rank = 8;
    o.qlora = true;
    const Graph g = withLora(loadModel("zoo:gpt2?seq=32"), o);
    const double adapters = 12 * 8 * kGpt2LinearFeatures;
    const double quantised = 12 * kGpt2LinearWeights;
    // NF4 with double quantisation: 4 bits, an 8-bit absmax per 64 elements, an fp32 constant per
    // 256 blocks. The rest of the base (embeddings, norms, biases) in 16 bits.
    const double nf4 = 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
    const MemoryBreakdown m = memoryOf(g, TrainingPrecision::AmpBf16, Optimizer::AdamW, 1);
    EXPECT_NEAR(m.weights, quantised * nf4 + 2 * (kGpt2Parameters - quantised) + 4 * adapters, 1);
    // Each use dequantises: reads the NF4 weight, writes it in 16 bits, forward and backward; beside
    // it autocast casts the fp32 LayerNorm output [n, 32, 768] to 16 bits (read 4, write 2 B), and
    // its gradient back (block 5 is after adapted blocks: it needs one).
    const ModelAnalysis a(g);
    const AnalyzedOp& qkv = opNamed(a, "transformer.h.5.attn.c_attn/MatMul");
    const OpBytes& b = a.bytes(qkv, TrainingPrecision::AmpBf16);
    const double dequantise = 768.0 * 2304 * (nf4 + 2), inputCast = 4 * 32 * 768.0 * (4 + 2);
    EXPECT_NEAR(b.castForward.at(4), dequantise + inputCast, 1e-6);
    EXPECT_NEAR(b.castBackward.at(4), dequantise + inputCast, 1e-6);
}

TEST(FineTuning, EightBitAdamKeepsTwoBytesPerParameter) {
    // bitsandbytes: 1-byte exp_avg and exp_avg_sq plus an fp32 absmax per 2048-element block of
    // each; tensors under 4096 elements (the biases here) keep 32-bit states.
    const Graph g = mlp();
    const double large = 256.0 * 512 + 512.0 * 10, small = 512 + 10;
    const MemoryBreakdown m = memoryOf(g, TrainingPrecision::Fp32, Optimizer::Adam8bit);
    EXPECT_DOUBLE_EQ(m.optimizerState, large * (2 + 2 * 4.0 / 2048) + small * 8);
    EXPECT_EQ(parseOptimizer("adam8bit"), Optimizer::Adam8bit);
    // Its fused step moves 16 B per parameter against Adam's 72: a faster step.
    TrainingPredictor p(loadModel("zoo:gpt2?seq=32"));
    TrainingScenario s;
    s.optimizer = Optimizer::Adam;
    const double adam = p.predict(gpu("h100-sxm"), s, false).optimizerMs.value;
    s.optimizer = Optimizer::Adam8bit;
    EXPECT_LT(p.predict(gpu("h100-sxm"), s, false).optimizerMs.value, adam / 3);
}

TEST(FineTuning, OptimizerStepFollowsHowItRuns) {
    // GPT-2's 148 tensors under AdamW: fused reads and writes each byte once (28 B per parameter
    // against foreach's 80 in 8 passes); a for-loop issues foreach's passes tensor by tensor, each an
    // eager operator from Python: more host time than foreach's few list operators.
    const ModelAnalysis m(loadModel("zoo:gpt2?seq=32"));
    ASSERT_GT(m.parameterTensors, 100);
    const GpuSpec& h100 = gpu("h100-sxm");
    auto step = [&](OptimizerImplementation i) {
        return optimizerStepTimes(m, h100, Optimizer::AdamW, TrainingPrecision::Fp32, i);
    };
    const OptimizerStepTimes foreach = step(OptimizerImplementation::Foreach);
    const OptimizerStepTimes fused = step(OptimizerImplementation::Fused);
    const OptimizerStepTimes loop = step(OptimizerImplementation::ForLoop);
    EXPECT_LT(fused.gpuMs, foreach.gpuMs * 0.45);
    EXPECT_GT(fused.gpuMs, foreach.gpuMs * 28 / 80 * 0.9);
    EXPECT_LT(fused.hostMs, foreach.hostMs);
    EXPECT_GT(loop.hostMs, 5 * foreach.hostMs);
    EXPECT_GE(loop.gpuMs, foreach.gpuMs);  // the same bytes, more launches
    // Through the predictor: the scenario's implementation reaches the step.
    TrainingPredictor p(loadModel("zoo:gpt2?seq=32"));
    TrainingScenario s;
    s.optimizer = Optimizer::AdamW;
    const double foreachMs = p.predict(h100, s, false).optimizerMs.value;
    s.optimizerImplementation = OptimizerImplementation::Fused;
    EXPECT_LT(p.predict(h100, s, false).optimizerMs.value, foreachMs / 2);
    EXPECT_EQ(parseOptimizerImplementation("for-loop"), OptimizerImplementation::ForLoop);
    EXPECT_EQ(parseOptimizerImplementation("multi-tensor"), std::nullopt);
}

TEST(FineTuning, AccumulationStepsOncePerMicroBatches) {
    TrainingPredictor p(loadModel("zoo:gpt2?seq=128"));
    TrainingScenario s;
    s.batch = 4;
    s.optimizer = Optimizer::AdamW;
    s.precision = TrainingPrecision::AmpBf16;
    const TrainingPrediction one = p.predict(gpu("a100-sxm4-80gb"), s, false);
    s.accumulation = 8;
    const TrainingPrediction eight = p.predict(gpu("a100-sxm4-80gb"), s, false);
    // One micro-batch's time with the step counted once per 8 micro-batches; memory is the
    // micro-batch's with every gradient allocated through it (the later micro-batches add to them).
    const double expected = one.iterationMs.value - one.optimizerMs.value * (1 - 1.0 / 8);
    EXPECT_NEAR(eight.iterationMs.value, expected, 1e-9 * expected);
    EXPECT_NEAR(eight.stepMs.value, 8 * expected, 1e-9 * expected);
    EXPECT_NEAR(eight.samplesPerS.value, 1000.0 * 4 / expected, 1e-9 * eight.samplesPerS.value);
    EXPECT_NEAR(eight.tokensPerS.value, eight.samplesPerS.value * 128, 1e-6 * eight.tokensPerS.value);
    EXPECT_GT(eight.peakMemoryBytes.value, one.peakMemoryBytes.value);
    EXPECT_LE(eight.peakMemoryBytes.value - one.peakMemoryBytes.value, eight.memory.gradients);
    // MFU: the iteration's FLOPs over the A100's dense BF16 peak (312 TFLOP/s).
    EXPECT_NEAR(eight.mfu.value, eight.modelFlopsPerSample * 4 / (eight.iterationMs.value * 1e-3 * 312e12), 1e-9);
}

TEST(FineTuning, BadSetUpsAreRefusedNamingTheOption) {
    const Graph g = loadModel("zoo:gpt2?seq=32");
    LoraOptions o;
    EXPECT_THROW(withLora(g, o), ModelError);  // rank 0
    o.rank = 8;
    o.targets = {"no_such_layer"};
    try {
        withLora(g, o);
        FAIL();
    } catch (const ModelError& e) {
        EXPECT_EQ(e.source(), "--lora-targets");
    }
    o.targets.clear();
    o.dropout = 1;  // drops everything
    try {
        withLora(g, o);
        FAIL();
    } catch (const ModelError& e) {
        EXPECT_EQ(e.source(), "--lora-dropout");
    }
    Graph m = mlp();
    EXPECT_THROW(trainOnly(m, {"nothing"}), ModelError);
    TrainingPredictor p(g);
    TrainingScenario s;
    s.accumulation = 0;
    EXPECT_THROW(p.predict(gpu("h100-sxm"), s), ModelError);
    s.accumulation = 1;
    s.dataParallel.zeroStage = 4;
    EXPECT_THROW(p.predict(gpu("h100-sxm"), s), ModelError);
}
