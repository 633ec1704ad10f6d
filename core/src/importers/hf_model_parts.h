#pragma once
// What the Hugging Face builders share: hf_models.cpp holds these and the dispatch by family,
// hf_decoders.cpp the decoder families with RMSNorms (Llama's layout and its relatives),
// hf_decoders_layernorm.cpp those with LayerNorms (GPT-2, GPT-NeoX, Phi, MPT, StarCoder2), hf_encoders.cpp
// BERT, RoBERTa and ViT, hf_seq2seq.cpp BART and mBART, hf_t5.cpp T5 and mT5.
#include <cstdint>
#include <string>
#include <utility>

#include "importers/hf_config.h"
#include "trainscope/core/builder.h"

namespace ts::hf {

// `x` itself when p is 0 (no module then), else a Dropout in `module`.
int dropout(ModelBuilder& b, const std::string& module, int x, double p);
// The config's activation (Config::activation) in `module`.
int activation(ModelBuilder& b, const Config& c, int x, const std::string& module);
// [N, T, heads*dim] -> [N, heads, T, dim] and back.
int toHeads(ModelBuilder& b, int x, int64_t heads, int64_t dim);
int fromHeads(ModelBuilder& b, int x, int64_t width);
// A LayerNorm over the last axis, with a bias where `bias` (ModernBERT's norm_bias, MPT's no_bias).
int layerNorm(ModelBuilder& b, const std::string& module, int x, double eps, bool bias);
// A shape vector known at build time, possibly symbolic (Expand's target).
int shapeConstant(ModelBuilder& b, const Shape& shape);
// One ScaledDotProductAttention operator on the config's backend; mask -1 for none; sinks (a [heads]
// parameter, GPT-OSS's) -1 for none.
int attention(ModelBuilder& b, const Config& c, int q, int k, int v, int mask, bool causal, int sinks = -1);

// ---- heads ----
int crossEntropy(ModelBuilder& b, int scores, int targets);
// Logits over the vocabulary: the embedding matrix transposed when tied, else a weight of its own.
int vocabProjection(ModelBuilder& b, const Config& c, const std::string& module, int x, int embedWeight);
// Token-level loss over [N, S, vocab] logits with [N, S] labels (finishTokenLoss, hf_models.cpp); S is
// `length` (an encoder-decoder's target length).
Graph finishTokenLoss(ModelBuilder& b, const Config& c, int logits, const Dim& length = Dim::seq());
// An encoder's padding mask as attention scores take it: (1 - mask[:, None, None, :]) * the dtype's lowest
// value, from the [N, S] attention_mask input.
int extendedMask(ModelBuilder& b, int attentionMask);
Graph finishClassification(ModelBuilder& b, const Config& c, int logits);

// The families' graphs (hf_decoders.cpp, hf_encoders.cpp), with `b` made for the config's architecture.
Graph buildDecoder(ModelBuilder& b, const Config& c);
Graph buildEncoder(ModelBuilder& b, const Config& c);
Graph buildVit(ModelBuilder& b, const Config& c);
// An encoder-decoder's inputs (hf_models.cpp): input_ids and attention_mask [N, S], decoder_input_ids
// [N, T], T being target_seq or else the sequence length itself.
struct Seq2SeqInputs {
    Dim target = Dim::seq();
    int ids = -1, attentionMask = -1, decoderIds = -1;
};
Seq2SeqInputs seq2seqInputs(ModelBuilder& b, const Config& c);
Graph buildSeq2Seq(ModelBuilder& b, const Config& c);  // hf_seq2seq.cpp
Graph buildT5(ModelBuilder& b, const Config& c);       // hf_t5.cpp
// ---- the decoders' parts (hf_decoders.cpp) ----
// The rotary embedding's cos and sin tables, computed once per forward by the rotary_emb module.
struct Rotary {
    int cos = -1, sin = -1;
    int64_t width = 0;  // rotated features per head; 0: no rotary embedding
};
Rotary rotaryTables(ModelBuilder& b, const Config& c, const std::string& module);
int rotate(ModelBuilder& b, const Rotary& r, int x);
// Llama's grouped-query self-attention of layer `layer` (self_attn), with its family's variants.
int llamaAttention(ModelBuilder& b, const Config& c, int x, const Rotary& r, int64_t layer);
// The LayerNorm families' bodies (hf_decoders_layernorm.cpp): the final hidden states and the embedding weight.
std::pair<int, int> gpt2Model(ModelBuilder& b, const Config& c, int ids);
std::pair<int, int> gptNeoXModel(ModelBuilder& b, const Config& c, int ids);
std::pair<int, int> phiModel(ModelBuilder& b, const Config& c, int ids);
std::pair<int, int> mptModel(ModelBuilder& b, const Config& c, int ids);
std::pair<int, int> starcoder2Model(ModelBuilder& b, const Config& c, int ids);

// transformers' RMSNorm as the kernels its Python runs (hf_decoders.cpp's families, T5's T5LayerNorm):
// `width` features, the config's eps, the family's form of the weight.
int rmsNorm(ModelBuilder& b, const Config& c, const std::string& module, int x, int64_t width);

}  // namespace ts::hf
