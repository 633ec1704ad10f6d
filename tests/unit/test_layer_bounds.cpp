// What bounds a layer's pass (predictors/iteration/layer_bounds.h), checked on BERT-base against
// arithmetic done by hand from the A100's datasheet (108 SMs, 312 TFLOP/s dense FP16 tensor math,
// 2,039 GB/s): the rule the explorer, the CLI and the report share.
#include <gtest/gtest.h>

#include <map>

#include "trainscope/core/gpu_database.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/predictors/iteration/layer_bounds.h"
#include "trainscope/predictors/iteration/training_predictor.h"

using namespace ts;
using namespace ts::predictors;

namespace {

struct BertBounds {
    Graph graph;
    std::unique_ptr<TrainingPredictor> predictor;
    std::map<std::string, LayerBound> byName;
};

BertBounds bertBase(TrainingPrecision p, int64_t batch) {
    BertBounds b;
    b.graph = buildZooModel("bert_base", {{"seq", "128"}});
    b.predictor = std::make_unique<TrainingPredictor>(b.graph, 128);
    const LayerBounds bounds(*b.predictor, GpuDatabase::builtin().get("a100-sxm4-80gb"), p);
    for (const LayerBound& l : bounds.at(double(batch))) b.byName[b.graph.ops[size_t(l.op)].name] = l;
    return b;
}

}  // namespace

// Batch 32 x 128 tokens = 4,096 rows. intermediate.dense: 2 x 4096 x 768 x 3072 = 19.3 GFLOP over
// 6.3 MB in + 4.7 MB of weights + 25.2 MB out (FP16): 62 us at the tensor-core peak against 18 us at
// full bandwidth, an intensity of 536 FLOP/byte against the A100's ridge of 312e12 / 2.039e12 = 153.
// The query projection (4.8 GFLOP over 13.8 MB: 350 FLOP/byte) and output.dense likewise.
TEST(LayerBounds, BertBaseEncoderGemmsAreComputeBoundAtAmpFp16OnA100) {
    const BertBounds b = bertBase(TrainingPrecision::AmpFp16, 32);
    for (int layer : {0, 5, 11}) {
        const std::string prefix = "encoder.layer." + std::to_string(layer) + ".";
        for (const char* gemm : {"attention.self.query/MatMul", "attention.self.key/MatMul",
                                 "attention.output.dense/MatMul", "intermediate.dense/MatMul", "output.dense/MatMul"}) {
            const std::string name = prefix + gemm;
            ASSERT_TRUE(b.byName.count(name)) << name;
            const LayerBound& l = b.byName.at(name);
            EXPECT_EQ(l.forward, PassBound::Compute) << name << ": " << passBoundName(l.forward);
            EXPECT_TRUE(l.hasBackward) << name;
            EXPECT_EQ(l.backward, PassBound::Compute) << name << ": " << passBoundName(l.backward);
            EXPECT_TRUE(l.tensorCores) << name;  // autocast runs matrix multiplies in FP16
        }
        // A layer norm does ~8 FLOPs per element it reads and writes (4 bytes each way in FP32
        // under autocast): 1 FLOP/byte, far below the ridge, and no tensor cores.
        const LayerBound& norm = b.byName.at(prefix + "output.LayerNorm/LayerNormalization");
        EXPECT_EQ(norm.forward, PassBound::Memory);
        EXPECT_FALSE(norm.tensorCores);
    }
}

// PyTorch's fp32 default keeps matrix multiplies off the tensor cores (allow_tf32 = False for
// matmuls): the same GEMMs then run on CUDA cores.
TEST(LayerBounds, Fp32MatrixMultipliesAreNotOnTensorCores) {
    const BertBounds b = bertBase(TrainingPrecision::Fp32, 32);
    EXPECT_FALSE(b.byName.at("encoder.layer.0.intermediate.dense/MatMul").tensorCores);
    const BertBounds tf32 = bertBase(TrainingPrecision::Tf32, 32);
    EXPECT_TRUE(tf32.byName.at("encoder.layer.0.intermediate.dense/MatMul").tensorCores);
}

// Batch 1: intermediate.dense's output, 128 x 3072, is 1 x 48 tiles of 128 x 64, fewer than half
// of the A100's 108 SMs, so one wave takes longer than its FLOPs spread over the GPU plus half a
// wave: wave-bound. The attention mask's Mul over 128 values moves 1 KB (0.5 ns at full bandwidth),
// far less than a kernel's fixed time: latency-bound.
TEST(LayerBounds, SmallPassesAreWaveOrLatencyBound) {
    const BertBounds b = bertBase(TrainingPrecision::AmpFp16, 1);
    EXPECT_EQ(b.byName.at("encoder.layer.0.intermediate.dense/MatMul").forward, PassBound::Wave);
    EXPECT_EQ(b.byName.at("Mul").forward, PassBound::Latency);
}
