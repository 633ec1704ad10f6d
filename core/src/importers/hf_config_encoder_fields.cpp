// The fields of the encoder and encoder-decoder families' config.json (hf_config_reader.cpp reads the
// family, the head and the options; hf_config_fields.cpp the decoders'): BERT, RoBERTa, DistilBERT,
// ModernBERT and ViT, then BART, mBART, T5 and mT5, with transformers' own defaults (its 5.x
// configuration classes) for what a config may leave out.
#include <algorithm>
#include <string>

#include "importers/hf_config_json.h"

namespace ts::hf {
namespace {

// DistilBERT's config (DistilBertConfig): its own names (dim, n_layers, n_heads, hidden_dim), LayerNorms of
// eps 1e-12 and no token types; `dropout` after the embeddings and each FFN, `seq_classif_dropout` in the
// classifier. sinusoidal_pos_embds fills the position table with fixed values, still a parameter.
void readDistilBert(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, 30522);
    c.hidden = r.integer("dim", 1, kMaxHidden, 768);
    c.layers = r.integer("n_layers", 1, kMaxLayers, 6);
    c.heads = r.integer("n_heads", 1, kMaxHeads, 12);
    c.kvHeads = c.heads;
    if (c.hidden % c.heads != 0) throw ConfigError("\"dim\" is not a multiple of \"n_heads\"");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("hidden_dim", 1, kMaxIntermediate, 3072);
    c.activation = activationOf(r.string("activation", "gelu"), "activation");
    c.eps = 1e-12;
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 512);
    c.residualDropout = r.number("dropout", 0, 0.999, 0.1);
    c.attentionDropout = r.number("attention_dropout", 0, 0.999, 0.1);
    c.classifierDropout = r.number("seq_classif_dropout", 0, 0.999, 0.2);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.typeVocab = 0;
    c.lossInFp32 = false;
}

// ModernBERT (ModernBertConfig): bias-free LayerNorms and linear layers by default, Wqkv and the GLU MLP's Wi
// (2 x intermediate_size), rotary positions, global attention every global_attn_every_n_layers-th layer
// (from the first) and local attention over local_attention tokens in the others (unless layer_types
// says), the prediction head (dense, classifier_activation, norm) before the decoder and the classifier.
void readModernBert(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, 50368);
    c.hidden = r.integer("hidden_size", 1, kMaxHidden, 768);
    c.layers = r.integer("num_hidden_layers", 1, kMaxLayers, 22);
    c.heads = r.integer("num_attention_heads", 1, kMaxHeads, 12);
    c.kvHeads = c.heads;
    if (c.hidden % c.heads != 0) throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\"");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("intermediate_size", 1, kMaxIntermediate, 1152);
    c.activation = activationOf(r.string("hidden_activation", "gelu"), "hidden_activation");
    c.headActivation = activationOf(r.string("classifier_activation", "gelu"), "classifier_activation");
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 8192);
    c.eps = r.number("norm_eps", 0, 1, 1e-5);
    c.normBias = r.boolean("norm_bias", false);
    c.qkvBias = c.outputBias = r.boolean("attention_bias", false);
    c.mlpBias = r.boolean("mlp_bias", false);
    c.headBias = r.boolean("classifier_bias", false);
    c.decoderBias = r.boolean("decoder_bias", true);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.embeddingDropout = r.number("embedding_dropout", 0, 0.999, 0.0);
    c.attentionDropout = r.number("attention_dropout", 0, 0.999, 0.0);
    c.residualDropout = r.number("mlp_dropout", 0, 0.999, 0.0);
    c.classifierDropout = r.number("classifier_dropout", 0, 0.999, 0.0);
    const std::string pooling = r.string("classifier_pooling", "cls");
    if (pooling != "cls" && pooling != "mean")
        throw ConfigError("\"classifier_pooling\" must be \"cls\" or \"mean\", got \"" + pooling + "\"");
    c.meanPooling = pooling == "mean";
    c.localAttention = r.integer("local_attention", 2, kMaxPositions, 128);
    c.slidingWindow = c.localAttention / 2 + 1;  // each token sees local_attention / 2 on either side
    if (r.has("layer_types")) {
        readLayerTypes(c, r, 1);
    } else {
        const int64_t every = r.integer("global_attn_every_n_layers", 1, kMaxLayers, 3);
        c.slidingLayers.assign(static_cast<size_t>(c.layers), false);
        for (int64_t i = 0; i < c.layers; ++i) c.slidingLayers[static_cast<size_t>(i)] = i % every != 0;
    }
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, 50283);
}

}  // namespace

void readEncoder(Config& c, const Reader& r) {
    if (c.family == Family::DistilBert) return readDistilBert(c, r);
    if (c.family == Family::ModernBert) return readModernBert(c, r);
    c.hidden = r.integer("hidden_size", 1, kMaxHidden);
    c.layers = r.integer("num_hidden_layers", 1, kMaxLayers);
    c.heads = r.integer("num_attention_heads", 1, kMaxHeads);
    c.kvHeads = c.heads;
    if (c.hidden % c.heads != 0) throw ConfigError("\"hidden_size\" is not a multiple of \"num_attention_heads\"");
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("intermediate_size", 1, kMaxIntermediate);
    c.activation = activationOf(r.string("hidden_act", "gelu"), "hidden_act");
    c.eps = r.number("layer_norm_eps", 0, 1, 1e-12);
    c.residualDropout = r.number("hidden_dropout_prob", 0, 0.999, c.family == Family::Vit ? 0.0 : 0.1);
    c.attentionDropout = r.number("attention_probs_dropout_prob", 0, 0.999, c.family == Family::Vit ? 0.0 : 0.1);
    c.qkvBias = c.outputBias = c.mlpBias = true;
    if (c.family == Family::Vit) {
        c.qkvBias = r.boolean("qkv_bias", true);
        c.image = r.integer("image_size", 1, kMaxImage, 224);
        c.patch = r.integer("patch_size", 1, kMaxImage, 16);
        c.channels = r.integer("num_channels", 1, 1024, 3);
        if (c.image % c.patch != 0) throw ConfigError("\"image_size\" is not a multiple of \"patch_size\"");
        c.poolerSize = r.integer("pooler_output_size", 1, kMaxHidden, c.hidden);
        const std::string act = r.string("pooler_act", "tanh");
        if (act != "tanh") throw ConfigError("\"pooler_act\" \"" + act + "\" is not supported (tanh)");
        return;
    }
    c.vocab = r.integer("vocab_size", 1, kMaxVocab);
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 512);
    c.typeVocab = r.integer("type_vocab_size", 0, kMaxVocab, 2);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, c.family == Family::Roberta ? 1 : 0);
    // BertForMaskedLM's and RobertaForMaskedLM's CrossEntropyLoss takes the logits in the model's dtype.
    c.lossInFp32 = false;
    if (r.has("classifier_dropout"))
        c.classifierDropout = r.number("classifier_dropout", 0, 0.999, 0.0);
    else
        c.classifierDropout = c.residualDropout;
}

// BART and mBART (BartConfig, MBartConfig: the same fields and defaults, facebook/bart-large's sizes): an
// encoder of encoder_layers and a decoder of decoder_layers, each with its own heads and MLP width, over
// one d_model; learned positions (max_position_embeddings + 2 rows each); nn.LayerNorm's eps. LayerDrop
// (encoder_layerdrop, decoder_layerdrop) skips whole layers at random in training: not modelled.
void readSeq2Seq(Config& c, const Reader& r) {
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, 50265);
    c.hidden = r.integer("d_model", 1, kMaxHidden, 1024);
    c.layers = r.integer("encoder_layers", 1, kMaxLayers, 12);
    c.decoderLayers = r.integer("decoder_layers", 1, kMaxLayers, 12);
    c.heads = r.integer("encoder_attention_heads", 1, kMaxHeads, 16);
    c.decoderHeads = r.integer("decoder_attention_heads", 1, kMaxHeads, 16);
    if (c.hidden % c.heads != 0 || c.hidden % c.decoderHeads != 0)
        throw ConfigError(
            "\"d_model\" is not a multiple of \"encoder_attention_heads\" and "
            "\"decoder_attention_heads\"");
    c.kvHeads = c.heads;
    c.headDim = c.hidden / c.heads;
    c.intermediate = r.integer("encoder_ffn_dim", 1, kMaxIntermediate, 4096);
    c.decoderIntermediate = r.integer("decoder_ffn_dim", 1, kMaxIntermediate, 4096);
    c.activation = activationOf(r.string("activation_function", "gelu"), "activation_function");
    c.maxPositions = r.integer("max_position_embeddings", 1, kMaxPositions, 1024);
    c.eps = 1e-5;
    c.residualDropout = r.number("dropout", 0, 0.999, 0.1);
    c.attentionDropout = r.number("attention_dropout", 0, 0.999, 0.0);
    c.activationDropout = r.number("activation_dropout", 0, 0.999, 0.0);
    c.scaleEmbedding = r.boolean("scale_embedding", false);
    c.tieEmbeddings = r.boolean("tie_word_embeddings", true);
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, 1);
    c.qkvBias = c.outputBias = c.mlpBias = true;
    c.preNorm = c.family == Family::MBart;
    // BartForConditionalGeneration's CrossEntropyLoss takes the logits in the model's dtype.
    c.lossInFp32 = false;
}

// T5 and mT5 (T5Config, MT5Config: t5-small's and mt5-small's sizes by default): num_layers encoder blocks
// and num_decoder_layers decoder blocks (num_layers by default) of num_heads heads of d_kv features, an
// MLP of d_ff, feed_forward_proj "ACT" or "gated-ACT" ("gated-gelu" is gelu_new), T5LayerNorm's
// layer_norm_epsilon. transformers 5 ties lm_head to the shared embedding whatever the config says; a
// config's tie_word_embeddings false (T5 v1.1, mT5, FLAN-T5) only drops the decoder output's
// d_model^-0.5 scaling. Positions are relative: no table bounds the length.
void readT5(Config& c, const Reader& r) {
    const bool mt5 = c.family == Family::MT5;
    c.vocab = r.integer("vocab_size", 1, kMaxVocab, mt5 ? 250112 : 32128);
    c.hidden = r.integer("d_model", 1, kMaxHidden, 512);
    c.headDim = r.integer("d_kv", 1, kMaxHidden, 64);
    c.intermediate = r.integer("d_ff", 1, kMaxIntermediate, mt5 ? 1024 : 2048);
    c.decoderIntermediate = c.intermediate;
    c.layers = r.integer("num_layers", 1, kMaxLayers, mt5 ? 8 : 6);
    c.decoderLayers = r.integer("num_decoder_layers", 1, kMaxLayers, c.layers);
    c.heads = c.kvHeads = c.decoderHeads = r.integer("num_heads", 1, kMaxHeads, mt5 ? 6 : 8);
    c.relativeBuckets = r.integer("relative_attention_num_buckets", 1, kMaxPositions, 32);
    c.residualDropout = c.attentionDropout = c.activationDropout = r.number("dropout_rate", 0, 0.999, 0.1);
    c.eps = r.number("layer_norm_epsilon", 0, 1, 1e-6);
    const std::string projection = r.string("feed_forward_proj", mt5 ? "gated-gelu" : "relu");
    const size_t dash = projection.find('-');
    c.gatedMlp = dash != std::string::npos;
    if (c.gatedMlp && (projection.substr(0, dash) != "gated" || projection.find('-', dash + 1) != std::string::npos))
        throw ConfigError("\"feed_forward_proj\" must be \"ACT\" or \"gated-ACT\", got \"" + projection + "\"");
    const std::string act = c.gatedMlp ? projection.substr(dash + 1) : projection;
    c.activation = activationOf(projection == "gated-gelu" ? "gelu_new" : act, "feed_forward_proj");
    c.scaleDecoderOutput = r.boolean("tie_word_embeddings", true);
    c.tieEmbeddings = true;
    c.maxPositions = kMaxPositions;
    c.padTokenId = r.integer("pad_token_id", 0, kMaxVocab, 0);
    c.qkvBias = c.outputBias = c.mlpBias = false;
    // T5ForConditionalGeneration's CrossEntropyLoss takes the logits in the model's dtype.
    c.lossInFp32 = false;
}

}  // namespace ts::hf
