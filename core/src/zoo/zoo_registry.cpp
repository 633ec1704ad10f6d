// The built-in model zoo: the list of models, their options, and the pieces the families share.
#include <charconv>
#include <cmath>
#include <functional>
#include <utility>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts {
namespace zoo {
namespace {

constexpr int64_t kMaxBatch = int64_t(1) << 20;

const ZooParam kBatch{"batch", "1", "batch size shown by default"};
ZooParam imageParam(const char* def) {
    return {"image", def, "input image height and width in pixels"};
}
const ZooParam kClasses{"classes", "1000", "number of output classes"};
const ZooParam kEfficientNetSqueeze{
    "se", "base",
    "base: each squeeze-and-excitation squeezes to a quarter of its block's input channels (the paper's, "
    "torchvision's); wide: to a quarter of its expanded channels (NVIDIA DeepLearningExamples' "
    "efficientnet-widese)"};
const ZooParam kBertHead{"head", "none",
                         "none: BertModel; pretraining: BertForPreTraining (MLM + NSP heads and loss); squad: "
                         "BertForQuestionAnswering (start/end logits and loss)"};
const ZooParam kBertVocab{"vocab", "30522", "WordPiece vocabulary size (NVIDIA's BERT pads it to 30528)"};
const ZooParam kBertMasked{"masked", "0",
                           "head=pretraining: positions per sequence the masked-LM head predicts (NVIDIA gathers "
                           "max_predictions_per_seq, 20 at seq 128, 80 at 512); 0: every position"};
}  // namespace

ZooParam attentionParam(const char* def) {
    return {"attention", def,
            "scaled_dot_product_attention backend the costs assume: flash, efficient (memory-efficient) or math "
            "(transformers' eager attention: matmul, softmax, dropout, matmul)"};
}

namespace {

ZooParam seqParam(const char* def, const char* max) {
    return {"seq", def, std::string("sequence length shown by default (at most ") + max + ")"};
}

struct Model {
    ZooEntry entry;
    std::function<Graph(const ZooArgs&)> build;
};

const std::vector<Model>& models() {
    static const std::vector<Model> list = {
        {{"resnet18",
          "ResNet-18 image classifier (torchvision), 11.7M parameters",
          {imageParam("224"), kClasses, kBatch}},
         [](const ZooArgs& a) { return buildResNet(a, 18); }},
        {{"resnet50",
          "ResNet-50 v1.5 image classifier (torchvision), 25.6M parameters",
          {imageParam("224"), kClasses, kBatch}},
         [](const ZooArgs& a) { return buildResNet(a, 50); }},
        {{"resnet101",
          "ResNet-101 v1.5 image classifier (torchvision), 44.5M parameters",
          {imageParam("224"), kClasses, kBatch}},
         [](const ZooArgs& a) { return buildResNet(a, 101); }},
        {{"resnext101_32x4d",
          "ResNeXt-101 32x4d image classifier (NVIDIA DeepLearningExamples), 44.2M parameters",
          {imageParam("224"), kClasses, kBatch}},
         [](const ZooArgs& a) { return buildResNeXt101(a, false); }},
        {{"se_resnext101_32x4d",
          "SE-ResNeXt-101 32x4d image classifier (NVIDIA DeepLearningExamples), 45.3M parameters",
          {imageParam("224"), kClasses, kBatch}},
         [](const ZooArgs& a) { return buildResNeXt101(a, true); }},
        {{"inception_v3",
          "Inception v3 with auxiliary classifier (torchvision), 27.2M parameters",
          {imageParam("299"), kClasses, {"aux", "1", "1: train with the auxiliary classifier, 0: without"}, kBatch}},
         buildInceptionV3},
        {{"vgg16", "VGG-16 image classifier (torchvision), 138.4M parameters", {imageParam("224"), kClasses, kBatch}},
         buildVgg16},
        {{"mobilenet_v2",
          "MobileNet v2 image classifier (torchvision), 3.5M parameters",
          {imageParam("224"), kClasses, kBatch}},
         buildMobileNetV2},
        {{"efficientnet_b0",
          "EfficientNet-B0 image classifier (torchvision), 5.3M parameters",
          {imageParam("224"), kClasses, kEfficientNetSqueeze, kBatch}},
         [](const ZooArgs& a) { return buildEfficientNet(a, 0); }},
        {{"efficientnet_b4",
          "EfficientNet-B4 image classifier (torchvision), 19.3M parameters",
          {imageParam("380"), kClasses, kEfficientNetSqueeze, kBatch}},
         [](const ZooArgs& a) { return buildEfficientNet(a, 4); }},
        {{"ssd300",
          "SSD300 v1.1 object detector, ResNet-50 backbone (NVIDIA DeepLearningExamples), 22.9M parameters",
          {imageParam("300"), {"classes", "81", "number of classes including the background (COCO: 81)"}, kBatch}},
         buildSsd300},
        {{"bert_base",
          "BERT-Base encoder with pooler (Hugging Face BertModel), 109.5M parameters",
          {seqParam("128", "512"), kBertHead, kBertVocab, kBertMasked, attentionParam("efficient"), kBatch}},
         [](const ZooArgs& a) { return buildBert(a, false); }},
        {{"bert_large",
          "BERT-Large encoder with pooler (Hugging Face BertModel), 335.1M parameters",
          {seqParam("128", "512"), kBertHead, kBertVocab, kBertMasked, attentionParam("efficient"), kBatch}},
         [](const ZooArgs& a) { return buildBert(a, true); }},
        {{"gpt2",
          "GPT-2 small language model (Hugging Face GPT2LMHeadModel), 124.4M parameters",
          {seqParam("512", "1024"), attentionParam("flash"), kBatch}},
         [](const ZooArgs& a) { return buildGpt2(a, false); }},
        {{"gpt2_large",
          "GPT-2 large language model (Hugging Face GPT2LMHeadModel), 774.0M parameters",
          {seqParam("512", "1024"), attentionParam("flash"), kBatch}},
         [](const ZooArgs& a) { return buildGpt2(a, true); }},
        {{"transformer",
          "Transformer big for translation (Vaswani et al., nn.Transformer), 209.1M parameters",
          {seqParam("128", "1024"), {"vocab", "32000", "shared source/target vocabulary size"}, kBatch}},
         buildTransformerBig},
        {{"gnmt",
          "GNMT v2 LSTM translation model with attention (NVIDIA/MLPerf), 160.7M parameters",
          {seqParam("50", "1024"), {"vocab", "32320", "shared source/target vocabulary size"}, kBatch}},
         buildGnmt},
        {{"bart_large",
          "BART-large sequence-to-sequence model (Hugging Face BartForConditionalGeneration, NVIDIA's configuration), "
          "406.3M parameters",
          {seqParam("128", "1024"),
           {"target_seq", "0", "decoder (target) length; 0: the source length"},
           attentionParam("math"),
           kBatch}},
         buildBartLarge},
        {{"transformer_xl_base",
          "Transformer-XL base language model on WikiText-103 (NVIDIA DeepLearningExamples), 192.0M parameters",
          {seqParam("192", "2048"), {"mem", "192", "memory length: cached hidden states per layer"}, kBatch}},
         [](const ZooArgs& a) { return buildTransformerXl(a, false); }},
        {{"transformer_xl_large",
          "Transformer-XL large language model on WikiText-103 (NVIDIA DeepLearningExamples), 285.2M parameters",
          {seqParam("384", "2048"), {"mem", "384", "memory length: cached hidden states per layer"}, kBatch}},
         [](const ZooArgs& a) { return buildTransformerXl(a, true); }},
        {{"ncf",
          "NCF (NeuMF) recommender on MovieLens-20m (NVIDIA DeepLearningExamples), 31.8M parameters",
          {{"users", "138493", "number of users"},
           {"items", "26744", "number of items"},
           {"factors", "64", "GMF embedding size (predictive factors)"},
           kBatch}},
         buildNcf},
        {{"nnunet",
          "nnU-Net for brain-tumour segmentation (MONAI DynUNet, NVIDIA DeepLearningExamples' BraTS set-up): 2D on "
          "192 x 160 slices, 20.6M parameters; 3D on 128^3 patches, 31.2M parameters",
          {{"dim", "3", "2: slices of 192 x 160, 3: patches of 128 x 128 x 128"},
           {"patch", "0", "0: BraTS's patch above; else every side this long (a multiple of 32, from 64)"},
           {"norm", "instance",
            "instance: nn.InstanceNorm (on channels-last tensors PyTorch copies to channels-first and back); "
            "instance_nvfuser: apex's InstanceNorm3dNVFuser (3D), which keeps the layout"},
           kBatch}},
         buildNnUNet},
        {{"dcgan",
          "DCGAN 64x64 generator and discriminator training step (PyTorch example), 6.3M parameters",
          {kBatch}},
         buildDcgan},
    };
    return list;
}

std::string sourceWithOptions(const std::string& name, const std::map<std::string, std::string>& params) {
    std::string s = "zoo:" + name;
    char sep = '?';
    for (const auto& [k, v] : params) {
        s += sep + k + "=" + v;
        sep = '&';
    }
    return s;
}

}  // namespace

ZooArgs::ZooArgs(const ZooEntry& entry, const std::map<std::string, std::string>& params)
    : entry_(entry), params_(params) {
    for (const auto& [key, value] : params_) {
        bool known = false;
        for (const ZooParam& p : entry_.params) known |= p.name == key;
        if (known) continue;
        std::string names;
        for (const ZooParam& p : entry_.params) names += (names.empty() ? "" : ", ") + p.name;
        fail("unknown option '" + key + "' (options: " + names + ")");
    }
}

void ZooArgs::fail(const std::string& problem) const {
    throw ModelError(source(), problem);
}

int64_t ZooArgs::integer(const std::string& key, int64_t min, int64_t max) const {
    std::string text;
    for (const ZooParam& p : entry_.params)
        if (p.name == key) text = p.defaultValue;
    if (auto it = params_.find(key); it != params_.end()) text = it->second;
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        fail("option '" + key + "' must be a whole number, got '" + text + "'");
    if (value < min || value > max)
        fail("option '" + key + "' must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
             text);
    return value;
}

std::string ZooArgs::choice(const std::string& key, const std::vector<std::string>& allowed) const {
    std::string text;
    for (const ZooParam& p : entry_.params)
        if (p.name == key) text = p.defaultValue;
    if (auto it = params_.find(key); it != params_.end()) text = it->second;
    std::string names;
    for (const std::string& name : allowed) {
        if (name == text) return text;
        names += (names.empty() ? "" : ", ") + name;
    }
    fail("option '" + key + "' must be one of " + names + ", got '" + text + "'");
}

int forwardConstant(ModelBuilder& b, const std::string& name, Shape shape, DType dtype) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.kind = ValueKind::Constant;
    return b.graph().addValue(std::move(v));
}

std::vector<int> splitLastAxis(ModelBuilder& b, int x, int64_t parts, int64_t partSize, const std::string& module) {
    int sizes = b.constantInts(std::vector<int64_t>(static_cast<size_t>(parts), partSize), {Dim(parts)});
    return b.op("Split", {x, sizes}, {{"axis", int64_t{-1}}}, static_cast<int>(parts), module);
}

int sliceAxis(ModelBuilder& b, int x, int64_t axis, int64_t start, int64_t end, const std::string& module) {
    int starts = b.constantInts({start}, {Dim(1)});
    int ends = b.constantInts({end}, {Dim(1)});
    int axes = b.constantInts({axis}, {Dim(1)});
    return b.op1("Slice", {x, starts, ends, axes}, {}, module);
}

// The width of attention's input `q` and of one of its heads; a width the heads do not divide is
// refused by name.
static std::pair<int64_t, int64_t> attentionWidths(ModelBuilder& b, int q, int64_t heads) {
    const Shape& qShape = b.graph().values.at(q).shape;
    if (qShape.empty() || !qShape.back().isConstant() || qShape.back().constant() % heads != 0)
        throw ShapeError("attention input " + shapeStr(qShape) + " does not split into " + std::to_string(heads) +
                         " heads");
    return {qShape.back().constant(), qShape.back().constant() / heads};
}

int scaledDotProductAttention(ModelBuilder& b, int q, int k, int v, int64_t heads, int mask, double dropout,
                              const std::string& dropoutModule) {
    const std::pair<int64_t, int64_t> widths = attentionWidths(b, q, heads);
    const int64_t width = widths.first, headDim = widths.second;  // named: clang 14 captures no bindings
    auto heads4d = [&](int x, std::vector<int64_t> perm) {
        return b.transpose(b.reshape(x, {0, 0, heads, headDim}), std::move(perm));
    };
    int qh = heads4d(q, {0, 2, 1, 3});  // [N, h, T, d]
    int kt = heads4d(k, {0, 2, 3, 1});  // [N, h, d, S]
    int vh = heads4d(v, {0, 2, 1, 3});  // [N, h, S, d]
    int scores = b.scale(b.matmul(qh, kt), 1.0 / std::sqrt(static_cast<double>(headDim)));
    if (mask >= 0) scores = b.add(scores, mask);
    int probs = b.softmax(scores, -1);
    if (dropout > 0) probs = b.dropout(dropoutModule, probs, dropout);
    int context = b.transpose(b.matmul(probs, vh), {0, 2, 1, 3});  // [N, T, h, d]
    return b.reshape(context, {0, 0, width});
}

int attentionOf(ModelBuilder& b, const std::string& backend, int q, int k, int v, int64_t heads, int mask, bool causal,
                double dropout, const std::string& dropoutModule) {
    if (backend == "math") return scaledDotProductAttention(b, q, k, v, heads, mask, dropout, dropoutModule);
    const std::pair<int64_t, int64_t> widths = attentionWidths(b, q, heads);
    const int64_t width = widths.first, headDim = widths.second;  // named: clang 14 captures no bindings
    auto heads4d = [&](int x) { return b.transpose(b.reshape(x, {0, 0, heads, headDim}), {0, 2, 1, 3}); };
    std::vector<int> in{heads4d(q), heads4d(k), heads4d(v)};
    if (backend == "efficient" && mask >= 0 && !causal) in.push_back(mask);
    int context = b.op1("ScaledDotProductAttention", in,
                        {{"backend", backend},
                         {"causal", int64_t{causal ? 1 : 0}},
                         {"scale", 1.0 / std::sqrt(static_cast<double>(headDim))},
                         {"dropout", dropout}});
    return b.reshape(b.transpose(context, {0, 2, 1, 3}), {0, 0, width});
}

}  // namespace zoo

const std::vector<ZooEntry>& zooModels() {
    static const std::vector<ZooEntry> entries = [] {
        std::vector<ZooEntry> e;
        for (const zoo::Model& m : zoo::models()) e.push_back(m.entry);
        return e;
    }();
    return entries;
}

Graph buildZooModel(const std::string& name, const std::map<std::string, std::string>& params) {
    const zoo::Model* model = nullptr;
    for (const zoo::Model& m : zoo::models())
        if (m.entry.name == name) model = &m;
    if (!model) {
        std::string names;
        for (const zoo::Model& m : zoo::models()) names += (names.empty() ? "" : ", ") + m.entry.name;
        throw ModelError("zoo:" + name, "unknown zoo model (available: " + names + ")");
    }
    zoo::ZooArgs args(model->entry, params);
    const int64_t batch = args.integer("batch", 1, zoo::kMaxBatch);
    Graph g;
    try {
        g = model->build(args);
    } catch (const ShapeError& e) {
        args.fail(std::string("cannot be built with these options: ") + e.what());
    }
    g.name = name;
    g.source = zoo::sourceWithOptions(name, params);
    g.format = "zoo";
    g.defaults.batch = batch;
    return g;
}

}  // namespace ts
