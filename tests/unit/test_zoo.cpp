#include <gtest/gtest.h>

#include <set>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"
#include "zoo_test_support.h"

namespace {

// Parameter counts of the reference implementations, counted with
// sum(p.numel() for p in model.parameters()) on randomly initialised models:
//   torchvision 0.29: resnet18/50/101, inception_v3(aux_logits=True), vgg16, mobilenet_v2
//   transformers: BertModel(BertConfig()) and its large variant, GPT2LMHeadModel (tied lm_head)
//   PyTorch examples/dcgan: Generator 3,576,704 + Discriminator 2,765,568
//   transformer: nn.Transformer(1024, 16, 6, 6, 4096) = 176,361,472 plus a 32000x1024 shared embedding
//   gnmt: NVIDIA DeepLearningExamples GNMT v2, 90H^2 + 74H + 1 + 2VH + V with H = 1024, V = 32320
//   torchvision 0.29: efficientnet_b0, efficientnet_b4
//   NVIDIA DeepLearningExamples, rewritten as minimal PyTorch modules from the sources (torch 2.15):
//     ConvNets models/resnet.py + common.py: resnext101-32x4d (also equals torchvision's
//     ResNet(Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=4)), se-resnext101-32x4d (its SE
//     has a fixed 16-channel hidden layer); Detection/SSD ssd/model.py: SSD300(ResNet('resnet50'))
//   transformer_xl_base/large, ncf: NVIDIA DeepLearningExamples' MemTransformerLM (attn_type 0, tied
//     adaptive softmax, wt103_base.yaml / wt103_large.yaml with n_token 267735) and NeuMF (138,493
//     users, 26,744 items, factors 64, layers 256 256 128 64): their constructors rebuilt in PyTorch
//     in the project's venv (torch 2.15), counted the same way
struct Reference {
    const char* name;
    int64_t parameters;
};
constexpr Reference kReferences[] = {
    {"resnet18", 11'689'512},       {"resnet50", 25'557'032},         {"resnet101", 44'549'160},
    {"inception_v3", 27'161'264},   {"vgg16", 138'357'544},           {"mobilenet_v2", 3'504'872},
    {"bert_base", 109'482'240},     {"bert_large", 335'141'888},      {"gpt2", 124'439'808},
    {"gpt2_large", 774'030'080},    {"transformer", 209'129'472},     {"gnmt", 160'671'297},
    {"dcgan", 6'342'272},           {"resnext101_32x4d", 44'177'704}, {"se_resnext101_32x4d", 45'251'128},
    {"efficientnet_b0", 5'288'548}, {"efficientnet_b4", 19'341'616},  {"ssd300", 22'894'902},
};
// NVIDIA DeepLearningExamples language and recommendation models (a table of their own, one per line).
constexpr Reference kDeepLearningExamplesReferences[] = {
    {"transformer_xl_base", 191'950'298},
    {"transformer_xl_large", 285'167'482},
    {"ncf", 31'832'577},
    // BART-large: NVIDIA's configs/config.json, built by the Hugging Face builder; transformers 5.24's
    // BartForConditionalGeneration of those sizes has this many.
    {"bart_large", 406'291'456},
    // nnU-Net: MONAI 1.0.0's DynUNet (the version DLE's Dockerfile pins) built with DLE's arguments for
    // BraTS (4 modalities, 4 classes, six levels of 3x3x3, filters 32 to 320, transposed-convolution
    // biases), counted with sum(p.numel() for p in model.parameters()).
    {"nnunet", 31'192'868},
};

bool hasModule(const ts::Graph& g, const std::string& path) {
    for (const auto& op : g.ops)
        if (op.modulePath == path) return true;
    return false;
}

using zoo_test::errorOf;

std::string outputShape(const ts::Graph& g, size_t i = 0) {
    return ts::shapeStr(g.values.at(g.outputs.at(i)).shape);
}

}  // namespace

TEST(Zoo, EveryModelHasItsReferenceParameterCount) {
    std::set<std::string> listed;
    for (const ts::ZooEntry& e : ts::zooModels()) listed.insert(e.name);
    std::vector<Reference> references(std::begin(kReferences), std::end(kReferences));
    references.insert(references.end(), std::begin(kDeepLearningExamplesReferences),
                      std::end(kDeepLearningExamplesReferences));
    for (const Reference& r : references) {
        SCOPED_TRACE(r.name);
        EXPECT_TRUE(listed.count(r.name));
        ts::Graph g = ts::buildZooModel(r.name, {});
        EXPECT_EQ(g.parameterCount(), r.parameters);
        EXPECT_EQ(g.name, r.name);
        EXPECT_EQ(g.format, "zoo");
        EXPECT_EQ(g.source, std::string("zoo:") + r.name);
        EXPECT_EQ(g.defaults.batch, 1);
        EXPECT_NO_THROW(g.validate());
        EXPECT_FALSE(g.outputs.empty());
        ASSERT_FALSE(g.inputs.empty());
        EXPECT_TRUE(g.values[g.inputs[0]].shape[0].dependsOnBatch() || g.values[g.inputs[0]].shape[1].dependsOnBatch());
    }
    EXPECT_EQ(listed.size(), references.size());
}

TEST(Zoo, TorchvisionModelsProduceClassLogits) {
    EXPECT_EQ(outputShape(ts::loadModel("zoo:resnet50")), "[N, 1000]");
    EXPECT_EQ(outputShape(ts::loadModel("zoo:vgg16")), "[N, 1000]");
    EXPECT_EQ(outputShape(ts::loadModel("zoo:mobilenet_v2")), "[N, 1000]");
    ts::Graph inception = ts::loadModel("zoo:inception_v3");
    ASSERT_EQ(inception.outputs.size(), 2u);  // logits and auxiliary logits
    EXPECT_EQ(outputShape(inception, 0), "[N, 1000]");
    EXPECT_EQ(outputShape(inception, 1), "[N, 1000]");
    EXPECT_EQ(ts::shapeStr(inception.values[inception.inputs[0]].shape), "[N, 3, 299, 299]");
}

TEST(Zoo, NvidiaAndEfficientNetClassifiersProduceClassLogits) {
    for (const char* name : {"resnext101_32x4d", "se_resnext101_32x4d", "efficientnet_b0", "efficientnet_b4"}) {
        SCOPED_TRACE(name);
        EXPECT_EQ(outputShape(ts::loadModel(std::string("zoo:") + name)), "[N, 1000]");
        EXPECT_EQ(outputShape(ts::loadModel(std::string("zoo:") + name + "?classes=10")), "[N, 10]");
    }
    ts::Graph b4 = ts::loadModel("zoo:efficientnet_b4");
    EXPECT_EQ(ts::shapeStr(b4.values[b4.inputs[0]].shape), "[N, 3, 380, 380]");
    // Counted as in kReferences with num_classes=10.
    EXPECT_EQ(ts::loadModel("zoo:resnext101_32x4d?classes=10").parameterCount(), 42'149'194);
    EXPECT_EQ(ts::loadModel("zoo:efficientnet_b0?classes=10").parameterCount(), 4'020'358);
    EXPECT_EQ(ts::loadModel("zoo:efficientnet_b0?image=160").parameterCount(), 5'288'548);
}

// EfficientNet's activations are nn.SiLU (torchvision's Conv2dNormActivation and SqueezeExcitation;
// NVIDIA's LayerBuilder: nn.SiLU(inplace=True)): one operator that saves its input, not x * sigmoid(x),
// which would save the sigmoid's output too. B0: the stem, the head, and in each of its 16 blocks the
// depthwise convolution's and the squeeze's, with the expansion's in the 15 that expand; the only
// sigmoids are the 16 excitation gates. What autograd saves for one training forward of
// torchvision's efficientnet_b0 at batch 2 and 64 x 64 (saved_tensors_hooks, every storage once,
// parameters and buffers left out; PyTorch 2.15 on the CPU): 14,723,208 bytes.
TEST(Zoo, EfficientNetSavesWhatItsSiluSaves) {
    const ts::Graph b0 = ts::loadModel("zoo:efficientnet_b0?image=64");
    int silu = 0, sigmoid = 0;
    for (const ts::Operation& op : b0.ops) silu += op.type == "Silu", sigmoid += op.type == "Sigmoid";
    EXPECT_EQ(silu, 2 + 16 * 2 + 15);
    EXPECT_EQ(sigmoid, 16);
    EXPECT_NEAR(ts::computeCosts(b0, 2).totals.activationBytes / 14'723'208.0, 1.0, 0.01);
}

// NVIDIA's efficientnet-widese variants (DeepLearningExamples' ConvNets, models/efficientnet.py:
// widese_mbconv, squeeze_hidden=True) squeeze each excitation to a quarter of the block's expanded
// channels instead of its input's. Counted in PyTorch 2.15: torchvision's efficientnet_b0 / b4 with every
// SqueezeExcitation(expanded, max(1, expanded // 4)) put back in its place.
TEST(Zoo, WideSqueezeEfficientNetsCountAsNvidiasWideSe) {
    EXPECT_EQ(ts::loadModel("zoo:efficientnet_b0?se=wide").parameterCount(), 8'423'848);
    EXPECT_EQ(ts::loadModel("zoo:efficientnet_b0?se=wide&classes=10").parameterCount(), 7'155'658);
    EXPECT_EQ(ts::loadModel("zoo:efficientnet_b4?se=wide").parameterCount(), 34'927'246);
    EXPECT_EQ(ts::loadModel("zoo:efficientnet_b4?se=wide&classes=10").parameterCount(), 33'152'176);
    EXPECT_EQ(ts::loadModel("zoo:efficientnet_b0?se=base").parameterCount(), 5'288'548);
    const ts::Graph wide = ts::loadModel("zoo:efficientnet_b0?se=wide");
    // features.2.0: 16 channels in, expanded 6x to 96: squeezed to 24 (base: 4).
    EXPECT_EQ(ts::shapeStr(wide.values[wide.findValue("features.2.0.block.2.fc1.weight")].shape), "[24, 96, 1, 1]");
}

TEST(Zoo, Ssd300PredictsEveryDefaultBox) {
    // 38^2 * 4 + 19^2 * 6 + 10^2 * 6 + 5^2 * 6 + 3^2 * 4 + 1^2 * 4 = 8732 boxes at 300 x 300.
    ts::Graph ssd = ts::loadModel("zoo:ssd300");
    ASSERT_EQ(ssd.outputs.size(), 2u);
    EXPECT_EQ(outputShape(ssd, 0), "[N, 4, 8732]");
    EXPECT_EQ(outputShape(ssd, 1), "[N, 81, 8732]");
    auto shapeOf = [&](const char* parameter) {
        int v = ssd.findValue(parameter);
        return v < 0 ? std::string("missing") : ts::shapeStr(ssd.values[size_t(v)].shape);
    };
    EXPECT_EQ(shapeOf("conf.0.weight"), "[324, 1024, 3, 3]");
    EXPECT_EQ(shapeOf("loc.5.weight"), "[16, 256, 3, 3]");
    EXPECT_EQ(shapeOf("additional_blocks.4.3.weight"), "[256, 128, 3, 3]");
    // layer3's first block keeps the 38 x 38 map: its downsample is a stride-1 1x1 convolution.
    EXPECT_EQ(shapeOf("feature_extractor.feature_extractor.6.0.downsample.0.weight"), "[1024, 512, 1, 1]");
    EXPECT_EQ(shapeOf("feature_extractor.feature_extractor.7.0.conv1.weight"), "missing");  // no layer4
    // 20 classes + background: counted as in kReferences with SSD300's label_num = 21.
    ts::Graph voc = ts::loadModel("zoo:ssd300?classes=21");
    EXPECT_EQ(voc.parameterCount(), 15'428'142);
    EXPECT_EQ(outputShape(voc, 1), "[N, 21, 8732]");
    // 257 x 257: maps 33, 17, 9, 5, 3, 1 -> 4356 + 1734 + 486 + 150 + 36 + 4 boxes.
    EXPECT_EQ(outputShape(ts::loadModel("zoo:ssd300?image=257"), 0), "[N, 4, 6766]");
}

// nnU-Net as NVIDIA benchmarks it on BraTS: 3D on 128^3 patches (filters capped at 320), 2D on 192 x 160
// slices (capped at 512; MONAI 1.0.0's DynUNet with DLE's 2D arguments has 20,613,092 parameters); the
// decoder's first block concatenates the upsampled bottleneck with the last skip (320 + 320 in 3D); the
// loss is one scalar beside the logits.
TEST(Zoo, NnUNetAsNvidiaBenchmarksIt) {
    ts::Graph unet3d = ts::loadModel("zoo:nnunet");
    ASSERT_EQ(unet3d.outputs.size(), 2u);
    EXPECT_EQ(outputShape(unet3d, 0), "[]");
    EXPECT_EQ(outputShape(unet3d, 1), "[N, 4, 128, 128, 128]");
    auto shapeOf = [](const ts::Graph& g, const char* parameter) {
        int v = g.findValue(parameter);
        return v < 0 ? std::string("missing") : ts::shapeStr(g.values[size_t(v)].shape);
    };
    EXPECT_EQ(shapeOf(unet3d, "upsamples.0.conv_block.conv1.conv.weight"), "[320, 640, 3, 3, 3]");
    EXPECT_EQ(shapeOf(unet3d, "upsamples.0.transp_conv.conv.weight"), "[320, 320, 2, 2, 2]");
    EXPECT_EQ(shapeOf(unet3d, "input_block.conv1.conv.bias"), "missing");  // MONAI's convs: no bias
    EXPECT_EQ(shapeOf(unet3d, "output_block.conv.conv.bias"), "[4]");
    ts::Graph unet2d = ts::loadModel("zoo:nnunet?dim=2");
    EXPECT_EQ(unet2d.parameterCount(), 20'613'092);
    EXPECT_EQ(outputShape(unet2d, 1), "[N, 4, 192, 160]");
    EXPECT_EQ(shapeOf(unet2d, "bottleneck.conv1.conv.weight"), "[512, 512, 3, 3]");
    // Another patch changes the shapes, not the parameters.
    ts::Graph small = ts::loadModel("zoo:nnunet?patch=64");
    EXPECT_EQ(small.parameterCount(), 31'192'868);
    EXPECT_EQ(outputShape(small, 1), "[N, 4, 64, 64, 64]");
    EXPECT_NE(errorOf("zoo:nnunet?patch=48").find("patch must be 0 or a multiple of 32 from 64, got 48"),
              std::string::npos);
    EXPECT_NE(errorOf("zoo:nnunet?patch=32").find("got 32"), std::string::npos);
    EXPECT_NE(errorOf("zoo:nnunet?dim=4").find("dim"), std::string::npos);
    // DLE's 3D AMP runs take apex's InstanceNorm3dNVFuser, which keeps a channels-last layout: every
    // instance norm says so, and nothing else changes.
    int norms = 0, keeping = 0;
    for (const ts::Graph& g : {unet3d, ts::loadModel("zoo:nnunet?norm=instance_nvfuser")})
        for (const auto& op : g.ops)
            if (op.type == "InstanceNormalization") ++norms, keeping += op.attrInt("keeps_layout", 0) != 0;
    EXPECT_EQ(norms, 44);
    EXPECT_EQ(keeping, 22);
    EXPECT_EQ(ts::loadModel("zoo:nnunet?norm=instance_nvfuser").parameterCount(), 31'192'868);
    EXPECT_NE(errorOf("zoo:nnunet?dim=2&norm=instance_nvfuser").find("3D only"), std::string::npos);
}

TEST(Zoo, ImageSizeChangesShapesNotParameters) {
    ts::Graph small = ts::loadModel("zoo:resnet50?image=160");
    ts::Graph full = ts::loadModel("zoo:resnet50");
    EXPECT_EQ(small.parameterCount(), 25'557'032);
    EXPECT_EQ(small.source, "zoo:resnet50?image=160");
    EXPECT_EQ(ts::shapeStr(small.values[small.inputs[0]].shape), "[N, 3, 160, 160]");
    // conv1 output: 224 -> 112, 160 -> 80.
    auto conv1Shape = [](const ts::Graph& g) {
        for (const auto& op : g.ops)
            if (op.modulePath == "conv1") return ts::shapeStr(g.values[op.outputs[0]].shape);
        return std::string();
    };
    EXPECT_EQ(conv1Shape(small), "[N, 64, 80, 80]");
    EXPECT_EQ(conv1Shape(full), "[N, 64, 112, 112]");
    EXPECT_EQ(ts::loadModel("zoo:resnet50?classes=10").parameterCount(), 23'528'522);  // torchvision num_classes=10
    EXPECT_EQ(ts::loadModel("zoo:inception_v3?aux=0").parameterCount(), 23'834'568);   // aux_logits=False
}

TEST(Zoo, SequenceModelsUseSymbolicLengths) {
    ts::Graph bert = ts::loadModel("zoo:bert_large?seq=512");
    EXPECT_EQ(bert.defaults.seq, 512);
    EXPECT_EQ(bert.parameterCount(), 335'141'888);
    EXPECT_EQ(ts::shapeStr(bert.values[bert.inputs[0]].shape), "[N, S]");
    EXPECT_EQ(bert.values[bert.inputs[0]].dtype, ts::DType::Int64);
    EXPECT_EQ(outputShape(bert, 0), "[N, S, 1024]");
    EXPECT_EQ(outputShape(bert, 1), "[N, 1024]");  // pooler
    EXPECT_EQ(ts::loadModel("zoo:bert_base").defaults.seq, 128);

    ts::Graph gpt2 = ts::loadModel("zoo:gpt2?seq=1024");
    EXPECT_EQ(gpt2.defaults.seq, 1024);
    EXPECT_EQ(outputShape(gpt2), "[N, S, 50257]");
    EXPECT_EQ(ts::loadModel("zoo:gpt2").defaults.seq, 512);

    ts::Graph t = ts::loadModel("zoo:transformer?vocab=1000");
    // Only the shared embedding depends on the vocabulary: 176,361,472 + 1000 * 1024.
    EXPECT_EQ(t.parameterCount(), 176'361'472 + 1000 * 1024);
    EXPECT_EQ(outputShape(t), "[N, S, 1000]");

    ts::Graph gnmt = ts::loadModel("zoo:gnmt?seq=30");
    EXPECT_EQ(gnmt.defaults.seq, 30);
    EXPECT_EQ(outputShape(gnmt), "[S, N, 32320]");
}

TEST(Zoo, ModulePathsFollowTheReferenceImplementations) {
    ts::Graph resnet = ts::loadModel("zoo:resnet50");
    EXPECT_TRUE(hasModule(resnet, "layer1.0.conv1"));
    EXPECT_TRUE(hasModule(resnet, "layer4.2.bn3"));
    EXPECT_TRUE(hasModule(resnet, "layer2.0.downsample.0"));
    EXPECT_GE(resnet.findValue("layer3.5.conv2.weight"), 0);
    EXPECT_GE(resnet.findValue("bn1.running_mean"), 0);
    EXPECT_EQ(resnet.values[resnet.findValue("bn1.running_mean")].kind, ts::ValueKind::Buffer);

    ts::Graph bert = ts::loadModel("zoo:bert_base");
    for (const char* path : {"embeddings.word_embeddings", "encoder.layer.3.attention.self.query",
                             "encoder.layer.3.attention.output.dense", "encoder.layer.3.intermediate.dense",
                             "encoder.layer.3.output.LayerNorm", "pooler.dense"})
        EXPECT_TRUE(hasModule(bert, path)) << path;

    ts::Graph gpt2 = ts::loadModel("zoo:gpt2");
    for (const char* path : {"transformer.h.0.attn.c_attn", "transformer.h.11.mlp.c_fc", "lm_head"})
        EXPECT_TRUE(hasModule(gpt2, path)) << path;

    ts::Graph dcgan = ts::loadModel("zoo:dcgan");
    EXPECT_TRUE(hasModule(dcgan, "generator.main.0"));
    EXPECT_TRUE(hasModule(dcgan, "discriminator.main.0"));
    EXPECT_EQ(ts::shapeStr(dcgan.values[dcgan.findValue("generator.main.0.weight")].shape), "[100, 512, 4, 4]");

    // NVIDIA's ResNeXt keeps its stages in one Sequential "layers"; SE sits in each block's "squeeze".
    ts::Graph seResNeXt = ts::loadModel("zoo:se_resnext101_32x4d");
    for (const char* path : {"layers.0.0.conv1", "layers.2.22.conv3", "layers.3.0.downsample.0",
                             "layers.3.2.squeeze.squeeze", "layers.3.2.squeeze.expand", "fc"})
        EXPECT_TRUE(hasModule(seResNeXt, path)) << path;
    EXPECT_EQ(ts::shapeStr(seResNeXt.values[seResNeXt.findValue("layers.3.2.conv2.weight")].shape),
              "[1024, 32, 3, 3]");  // 32 groups of 32 channels
    EXPECT_EQ(ts::shapeStr(seResNeXt.values[seResNeXt.findValue("layers.3.2.squeeze.squeeze.weight")].shape),
              "[16, 2048, 1, 1]");
    EXPECT_FALSE(hasModule(ts::loadModel("zoo:resnext101_32x4d"), "layers.0.0.squeeze.squeeze"));

    ts::Graph efficientnet = ts::loadModel("zoo:efficientnet_b0");
    for (const char* path : {"features.0.0", "features.1.0.block.1.fc1", "features.2.0.block.0.2",
                             "features.6.3.block.3.1", "features.8.0", "classifier.1"})
        EXPECT_TRUE(hasModule(efficientnet, path)) << path;
    // SE squeezes to a quarter of the block's input channels (40 / 4), not of the expanded 240.
    EXPECT_EQ(ts::shapeStr(efficientnet.values[efficientnet.findValue("features.4.0.block.2.fc1.weight")].shape),
              "[10, 240, 1, 1]");
    ts::Graph b4 = ts::loadModel("zoo:efficientnet_b4");
    // B4: stages scaled by 1.8 in depth (ceil(4 * 1.8) = 8 blocks in stage 6), 1.4 in width (1792 last).
    EXPECT_TRUE(hasModule(b4, "features.6.7.block.0.0"));
    EXPECT_FALSE(hasModule(b4, "features.6.8.block.0.0"));
    EXPECT_EQ(ts::shapeStr(b4.values[b4.findValue("classifier.1.weight")].shape), "[1000, 1792]");

    ts::Graph gnmt = ts::loadModel("zoo:gnmt");
    EXPECT_TRUE(hasModule(gnmt, "decoder.att_rnn.attn"));
    EXPECT_TRUE(hasModule(gnmt, "encoder.rnn_layers.0"));
}

TEST(Zoo, TrainingFormHasDropoutAndTrainingBatchNorm) {
    auto count = [](const ts::Graph& g, const std::string& type) {
        int n = 0;
        for (const auto& op : g.ops) n += op.type == type;
        return n;
    };
    ts::Graph vgg = ts::loadModel("zoo:vgg16");
    EXPECT_EQ(count(vgg, "Dropout"), 2);
    // BERT-Base with eager attention: embeddings + 3 per layer (attention probabilities, attention
    // output, output); with scaled_dot_product_attention (the default) the first is inside it.
    EXPECT_EQ(count(ts::loadModel("zoo:bert_base?attention=math"), "Dropout"), 1 + 12 * 3);
    EXPECT_EQ(count(ts::loadModel("zoo:bert_base"), "Dropout"), 1 + 12 * 2);
    ts::Graph resnet = ts::loadModel("zoo:resnet50");
    EXPECT_EQ(count(resnet, "BatchNormalization"), 53);
    for (const auto& op : resnet.ops)
        if (op.type == "BatchNormalization") {
            EXPECT_EQ(op.attrInt("training_mode", 0), 1);
        }
    // DCGAN: the discriminator runs on real and fake images, sharing its parameters.
    ts::Graph dcgan = ts::loadModel("zoo:dcgan");
    EXPECT_EQ(count(dcgan, "Conv"), 10);
    EXPECT_EQ(dcgan.outputs.size(), 2u);
    EXPECT_EQ(outputShape(dcgan, 0), "[N]");
}

TEST(Zoo, BadNamesAndOptionsAreClearModelErrors) {
    EXPECT_NE(errorOf("zoo:resnet51").find("zoo:resnet51: unknown zoo model"), std::string::npos);
    EXPECT_NE(errorOf("zoo:resnet50?depth=3").find("zoo:resnet50: unknown option 'depth'"), std::string::npos);
    EXPECT_NE(errorOf("zoo:resnet50?image=16").find("option 'image' must be between 32 and 4096"), std::string::npos);
    EXPECT_NE(errorOf("zoo:resnet50?image=100000").find("option 'image'"), std::string::npos);
    EXPECT_NE(errorOf("zoo:resnet50?image=abc").find("option 'image' must be a whole number"), std::string::npos);
    EXPECT_NE(errorOf("zoo:resnet50?image=12x").find("must be a whole number"), std::string::npos);
    EXPECT_NE(errorOf("zoo:bert_base?seq=0").find("zoo:bert_base: option 'seq'"), std::string::npos);
    EXPECT_NE(errorOf("zoo:bert_base?seq=513").find("between 1 and 512"), std::string::npos);
    EXPECT_NE(errorOf("zoo:gpt2?seq=1025").find("between 1 and 1024"), std::string::npos);
    EXPECT_NE(errorOf("zoo:gpt2?seq=-5").find("option 'seq'"), std::string::npos);
    EXPECT_NE(errorOf("zoo:resnet50?batch=0").find("option 'batch'"), std::string::npos);
    EXPECT_EQ(ts::loadModel("zoo:resnet18?batch=32").defaults.batch, 32);
    EXPECT_NE(errorOf("zoo:ssd300?image=256").find("zoo:ssd300: option 'image' must be between 257"),
              std::string::npos);
    EXPECT_NE(errorOf("zoo:efficientnet_b4?classes=0").find("zoo:efficientnet_b4: option 'classes'"),
              std::string::npos);
    EXPECT_NE(errorOf("zoo:se_resnext101_32x4d?seq=8").find("unknown option 'seq'"), std::string::npos);
    // Options the shape checks reject are reported with the model, not as a crash.
    std::string tooSmall = errorOf("zoo:inception_v3?image=76");
    EXPECT_EQ(tooSmall.rfind("zoo:inception_v3: ", 0), 0u) << tooSmall;
    EXPECT_EQ(ts::buildZooModel("inception_v3", {{"image", "76"}, {"aux", "0"}}).parameterCount(), 23'834'568);
}
