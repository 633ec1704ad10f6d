// Neural Collaborative Filtering (NeuMF) as NVIDIA DeepLearningExamples trains it on MovieLens-20m
// (PyTorch/Recommendation/NCF: neumf.py, ncf.py defaults --factors 64 --layers 256 256 128 64
// --dropout 0.5, nn.BCEWithLogitsLoss averaged over the batch):
//
//   mf_user_embed, mf_item_embed     Embedding(users | items, factors), multiplied (GMF)
//   mlp_user_embed, mlp_item_embed   Embedding(users | items, 128), concatenated to 256
//   mlp.0-2                          Linear 256 -> 256 -> 128 -> 64, each followed by ReLU and dropout
//   final                            Linear(64 + factors, 1) on concat(GMF, MLP)
//
// Reference count at 138,493 users and 26,744 items: 31,832,577 parameters. One sample is one
// (user, item) pair: the batch dimension N.
#include <string>

#include "trainscope/core/errors.h"
#include "zoo/zoo_common.h"

namespace ts::zoo {
namespace {

constexpr int64_t kMlpLayers[] = {256, 256, 128, 64};
constexpr double kDropout = 0.5;

}  // namespace

Graph buildNcf(const ZooArgs& a) {
    const int64_t users = a.integer("users", 1, 100'000'000);
    const int64_t items = a.integer("items", 1, 100'000'000);
    const int64_t factors = a.integer("factors", 1, 4096);
    ModelBuilder b(a.model());
    int user = b.input("user", {Dim::batch()}, DType::Int64);
    int item = b.input("item", {Dim::batch()}, DType::Int64);
    int label = b.input("label", {Dim::batch(), 1});
    int gmf =
        b.mul(b.embedding("mf_user_embed", user, users, factors), b.embedding("mf_item_embed", item, items, factors));
    const int64_t half = kMlpLayers[0] / 2;
    int mlp = b.concat(
        {b.embedding("mlp_user_embed", user, users, half), b.embedding("mlp_item_embed", item, items, half)}, 1);
    for (size_t i = 1; i < std::size(kMlpLayers); ++i) {
        // Functional ReLU and dropout in forward(): they belong to the model itself, not to mlp.i.
        mlp = b.relu(b.linear("mlp." + std::to_string(i - 1), mlp, kMlpLayers[i]));
        mlp = b.dropout("", mlp, kDropout);
    }
    int logits = b.linear("final", b.concat({gmf, mlp}, 1), 1);  // forward(sigmoid=False) in training
    // BCEWithLogitsLoss: softplus(x) - x * y per sample, then the mean over the batch.
    int perSample = b.op1("Sub", {b.op1("Softplus", {logits}), b.mul(logits, label)});
    int loss = b.op1("ReduceMean", {perSample}, {{"keepdims", int64_t{0}}});
    return b.finish({loss, logits});
}

}  // namespace ts::zoo
