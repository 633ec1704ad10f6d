#!/usr/bin/env python3
"""Checks `trainscope-cli inspect config.json --json` (a Hugging Face config as a model source) against
transformers' own models, one family at a time.

    check_hf_config.py --cli CLI --family llama --out DIR [--real tests/data/hf-configs/X.json ...]

For small configs of the family (several variants: grouped-query heads, tied or untied embeddings, biases,
head_dim, partial rotary, experts and dense layers, each head class), built with transformers' config classes and written as JSON:
- totals.parameters equals sum(p.numel() for p in model.parameters()) of the transformers class named in
  `architectures` (buffers excluded, tied weights once), or, where transformers holds parameters that a
  training step never reaches (no gradient), the count of those it reaches;
- the forward FLOPs of TrainScope's matrix products (MatMul, Gemm, and the two products of each
  ScaledDotProductAttention, 4*N*H*T*S*d at ?attention=math) equal torch.utils.flop_counter's count of one
  forward of the eager model at batch 2, sequence 16, plus the bias adds TrainScope counts inside Gemm
  (rank-2 linear layers with a bias);
- every nn.Linear / nn.Conv2d / Conv1D module path of the model is a layer path.
For the published configs given with --real (written by hand from the models' config.json), the parameter
count equals that of the model built on the meta device (no memory, no weights).
Exits 77 (ctest: skipped) without torch and transformers.
"""
import argparse
import json
import os
import subprocess
import sys

from real_models_common import torch_and_transformers

BATCH, SEQ = 2, 16

torch, transformers = torch_and_transformers()
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402: after the check that torch imports

T = transformers
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=176, vocab_size=1000)


def small_configs(family):
    """(variant name, config, architecture class name) for the family."""
    if family in ("llama", "mistral", "qwen2", "qwen3", "gemma", "phi3"):
        cls = {"llama": T.LlamaConfig, "mistral": T.MistralConfig, "qwen2": T.Qwen2Config, "qwen3": T.Qwen3Config,
               "gemma": T.GemmaConfig, "phi3": T.Phi3Config}[family]
        prefix = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2", "qwen3": "Qwen3", "gemma": "Gemma",
                  "phi3": "Phi3"}[family]
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0)
        out = [("gqa", cls(**base), prefix + "ForCausalLM"),
               ("tied", cls(**dict(base, tie_word_embeddings=True)), prefix + "ForCausalLM"),
               ("seqcls", cls(**dict(base, num_labels=3)), prefix + "ForSequenceClassification"),
               ("base", cls(**dict(base, num_key_value_heads=1)), prefix + "Model")]
        if family == "llama":
            out.append(("bias-headdim", cls(**dict(base, attention_bias=True, mlp_bias=True, head_dim=24)),
                        "LlamaForCausalLM"))
        if family in ("mistral", "gemma"):
            out.append(("headdim", cls(**dict(base, head_dim=32)), prefix + "ForCausalLM"))
        if family == "qwen3":  # the variants above take Qwen3Config's default head_dim, 128, not 64 / 4
            out.append(("bias-headdim", cls(**dict(base, attention_bias=True, head_dim=24)), "Qwen3ForCausalLM"))
        if family == "phi3":
            out.append(("partial-rotary", cls(**dict(base, partial_rotary_factor=0.5)), "Phi3ForCausalLM"))
        return out
    if family in ("gemma2", "gemma3_text"):
        # Gemma 2's soft caps (default 50 and 30), its alternating sliding windows, Gemma 3's q/k norms and
        # its every-sixth-layer global attention; windows shorter than SEQ so that they bind.
        g2 = family == "gemma2"
        cls = T.Gemma2Config if g2 else T.Gemma3TextConfig
        lm, seqcls, base_cls = (("Gemma2ForCausalLM", "Gemma2ForSequenceClassification", "Gemma2Model") if g2 else
                                ("Gemma3ForCausalLM", "Gemma3TextForSequenceClassification", "Gemma3TextModel"))
        base = dict(SMALL, num_hidden_layers=3, num_key_value_heads=2, pad_token_id=0, head_dim=16, sliding_window=8,
                    query_pre_attn_scalar=24)
        out = [("window", cls(**base), lm),
               ("untied", cls(**dict(base, tie_word_embeddings=False, head_dim=24)), lm),
               ("seqcls", cls(**dict(base, num_labels=3)), seqcls),
               ("base", cls(**dict(base, num_key_value_heads=1)), base_cls)]
        if g2:
            out.append(("no-softcap", cls(**dict(base, attn_logit_softcapping=None, final_logit_softcapping=None)), lm))
        else:
            out.append(("softcap", cls(**dict(base, attn_logit_softcapping=40.0, final_logit_softcapping=20.0,
                                              layer_types=["full_attention", "sliding_attention", "full_attention"])),
                        lm))
        return out
    if family == "smollm3":  # Llama with NoPE layers (every 4th, or as no_rope_layers says) and tied embeddings
        base = dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, pad_token_id=0)
        cls = T.SmolLM3Config
        return [("nope", cls(**base), "SmolLM3ForCausalLM"),
                ("listed-window-bias", cls(**dict(base, no_rope_layers=[1, 0, 1, 0], use_sliding_window=True,
                                                  sliding_window=8, attention_bias=True, mlp_bias=True,
                                                  tie_word_embeddings=False)), "SmolLM3ForCausalLM"),
                ("seqcls", cls(**dict(base, num_labels=3)), "SmolLM3ForSequenceClassification"),
                ("base", cls(**base), "SmolLM3Model")]
    if family == "olmo2":  # norms on the sub-layers' outputs, q_norm and k_norm over the whole projections
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0)
        return [("gqa", T.Olmo2Config(**base), "Olmo2ForCausalLM"),
                ("tied-bias", T.Olmo2Config(**dict(base, tie_word_embeddings=True, attention_bias=True)),
                 "Olmo2ForCausalLM"),
                ("seqcls", T.Olmo2Config(**dict(base, num_labels=3)), "Olmo2ForSequenceClassification"),
                ("base", T.Olmo2Config(**base), "Olmo2Model")]
    if family == "olmo3":  # OLMo 2 with windows of 8 (shorter than SEQ, so that they bind) in three layers of four
        base = dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, pad_token_id=0, sliding_window=8)
        return [("window", T.Olmo3Config(**base), "Olmo3ForCausalLM"),
                ("listed-tied-bias", T.Olmo3Config(**dict(base, tie_word_embeddings=True, attention_bias=True,
                                                         layer_types=["full_attention", "sliding_attention",
                                                                      "full_attention", "sliding_attention"])),
                 "Olmo3ForCausalLM"),
                ("seqcls", T.Olmo3Config(**dict(base, num_labels=3)), "Olmo3ForSequenceClassification"),
                ("base", T.Olmo3Config(**base), "Olmo3Model")]
    if family == "glm4":  # four RMSNorms a layer, q, k, v biases, half of each head rotated, a fused gate_up_proj
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0, head_dim=16)
        return [("gqa", T.Glm4Config(**base), "Glm4ForCausalLM"),
                ("no-bias-rotary-tied", T.Glm4Config(**dict(base, attention_bias=False, partial_rotary_factor=0.25,
                                                            head_dim=32, tie_word_embeddings=True)), "Glm4ForCausalLM"),
                ("seqcls", T.Glm4Config(**dict(base, num_labels=3)), "Glm4ForSequenceClassification"),
                ("base", T.Glm4Config(**base), "Glm4Model")]
    if family == "granite":  # Llama with its scalars: embedding, residual, attention and logits
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0, embedding_multiplier=12.0, residual_multiplier=0.22,
                    attention_multiplier=0.05, logits_scaling=8.0)
        return [("scalars", T.GraniteConfig(**base), "GraniteForCausalLM"),
                ("tied-bias", T.GraniteConfig(**dict(base, tie_word_embeddings=True, attention_bias=True, mlp_bias=True)),
                 "GraniteForCausalLM"),
                ("base", T.GraniteConfig(**base), "GraniteModel")]
    if family == "deepseek_v3":
        # multi-head latent attention (q through a rank-24 bottleneck or one q_proj; a rank-32 key-value latent;
        # heads of 16 + 8 rotated features, values of 12), a dense first layer, sigmoid-scored experts with a
        # shared one
        base = dict(SMALL, num_key_value_heads=4, pad_token_id=0, n_routed_experts=4, num_experts_per_tok=2,
                    moe_intermediate_size=48,
                    n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=32, q_lora_rank=24, qk_nope_head_dim=16,
                    qk_rope_head_dim=8, v_head_dim=12, n_group=2, topk_group=1)
        cls = T.DeepseekV3Config
        return [("mla", cls(**base), "DeepseekV3ForCausalLM"),
                ("q-proj", cls(**dict(base, q_lora_rank=None, n_shared_experts=2, first_k_dense_replace=0)),
                 "DeepseekV3ForCausalLM"),
                ("seqcls", cls(**dict(base, num_labels=3)), "DeepseekV3ForSequenceClassification"),
                ("base", cls(**base), "DeepseekV3Model")]
    if family == "glm4_moe":
        # Llama's attention with half of each head rotated (or as partial_rotary_factor says), q, k, v biases and
        # per-head q and k norms where set; DeepSeek-V3's sigmoid-scored experts with a shared one after a dense
        # first layer
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0, n_routed_experts=4, num_experts_per_tok=2,
                    moe_intermediate_size=48, n_shared_experts=1, first_k_dense_replace=1, head_dim=16)
        cls = T.Glm4MoeConfig
        return [("moe", cls(**base), "Glm4MoeForCausalLM"),
                ("bias-qk-norm", cls(**dict(base, attention_bias=True, use_qk_norm=True, n_shared_experts=2,
                                            first_k_dense_replace=0, partial_rotary_factor=0.25, head_dim=24)),
                 "Glm4MoeForCausalLM"),
                ("base", cls(**dict(base, tie_word_embeddings=True)), "Glm4MoeModel")]
    if family == "olmoe":  # whole-projection q and k norms, softmax-routed experts in every layer, clip_qkv
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0, num_experts=4, num_experts_per_tok=2)
        cls = T.OlmoeConfig
        return [("moe", cls(**base), "OlmoeForCausalLM"),
                ("clip-bias-norm-topk", cls(**dict(base, clip_qkv=8.0, attention_bias=True, norm_topk_prob=True,
                                                   num_experts_per_tok=3)), "OlmoeForCausalLM"),
                ("base", cls(**dict(base, tie_word_embeddings=True)), "OlmoeModel")]
    if family == "starcoder2":  # LayerNorms, biases, a GELU MLP, windows of 8 (shorter than SEQ, so that they bind)
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0, sliding_window=8, residual_dropout=0.1,
                    embedding_dropout=0.1)
        cls = T.Starcoder2Config
        return [("window", cls(**base), "Starcoder2ForCausalLM"),
                ("untied-no-bias-global", cls(**dict(base, use_bias=False, tie_word_embeddings=False,
                                                     sliding_window=None, hidden_act="gelu")),
                 "Starcoder2ForCausalLM"),
                ("seqcls", cls(**dict(base, num_labels=3)), "Starcoder2ForSequenceClassification"),
                ("base", cls(**base), "Starcoder2Model")]
    if family == "gpt_oss":
        # sinks, biased attention, windows of 8 in alternate layers (shorter than SEQ, so that they bind), the
        # router's bias and the experts' transposed, interleaved and biased weights
        base = dict(SMALL, num_hidden_layers=3, num_key_value_heads=2, pad_token_id=0, head_dim=16, sliding_window=8,
                    num_local_experts=4, num_experts_per_tok=2)
        cls = T.GptOssConfig
        return [("moe", cls(**base), "GptOssForCausalLM"),
                ("no-bias-global", cls(**dict(base, attention_bias=False, head_dim=24, num_experts_per_tok=3,
                                              layer_types=["full_attention", "sliding_attention", "full_attention"])),
                 "GptOssForCausalLM"),
                ("seqcls", cls(**dict(base, num_labels=3)), "GptOssForSequenceClassification"),
                ("base", cls(**dict(base, tie_word_embeddings=True)), "GptOssModel")]
    if family in ("mixtral", "qwen2_moe", "qwen3_moe"):
        base = dict(SMALL, num_key_value_heads=2, pad_token_id=0, num_experts_per_tok=2)
        if family == "mixtral":
            cls, prefix = T.MixtralConfig, "Mixtral"
            base["num_local_experts"] = 4
        elif family == "qwen2_moe":  # and a shared expert of 96 with its sigmoid gate
            cls, prefix = T.Qwen2MoeConfig, "Qwen2Moe"
            base.update(num_experts=4, moe_intermediate_size=48, shared_expert_intermediate_size=96)
        else:
            cls, prefix = T.Qwen3MoeConfig, "Qwen3Moe"
            base.update(num_experts=4, moe_intermediate_size=48)
        out = [("moe", cls(**base), prefix + "ForCausalLM"),
               ("seqcls", cls(**dict(base, num_labels=3)), prefix + "ForSequenceClassification"),
               ("base", cls(**dict(base, num_experts_per_tok=3, tie_word_embeddings=True)), prefix + "Model")]
        if family == "qwen2_moe":  # a dense MLP off the sparse step and in mlp_only_layers; no q, k, v biases
            out.append(("dense-layers", cls(**dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, num_experts=4,
                                                   num_experts_per_tok=2, moe_intermediate_size=48,
                                                   shared_expert_intermediate_size=32, qkv_bias=False,
                                                   norm_topk_prob=True, decoder_sparse_step=2, mlp_only_layers=[3])),
                        "Qwen2MoeForCausalLM"))
        if family == "qwen3_moe":  # dense MLPs in layer 0 (mlp_only_layers) and off the sparse step
            out.append(("dense-layers", cls(**dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, num_experts=4,
                                                   num_experts_per_tok=2, moe_intermediate_size=48, head_dim=24,
                                                   norm_topk_prob=True, decoder_sparse_step=2, mlp_only_layers=[3])),
                        "Qwen3MoeForCausalLM"))
        return out
    if family == "gpt2":
        base = dict(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=64)
        return [("lm", T.GPT2Config(**base), "GPT2LMHeadModel"),
                ("inner-untied", T.GPT2Config(**dict(base, n_inner=100, tie_word_embeddings=False)),
                 "GPT2LMHeadModel"),
                ("seqcls", T.GPT2Config(**dict(base, num_labels=3, pad_token_id=0)), "GPT2ForSequenceClassification"),
                ("base", T.GPT2Config(**base), "GPT2Model")]
    if family == "gpt_neox":
        return [("parallel", T.GPTNeoXConfig(**SMALL), "GPTNeoXForCausalLM"),
                ("sequential", T.GPTNeoXConfig(**dict(SMALL, use_parallel_residual=False, attention_bias=False,
                                                      rotary_pct=0.5, tie_word_embeddings=True)),
                 "GPTNeoXForCausalLM"),
                ("seqcls", T.GPTNeoXConfig(**dict(SMALL, num_labels=3, pad_token_id=0)),
                 "GPTNeoXForSequenceClassification"),
                ("base", T.GPTNeoXConfig(**SMALL), "GPTNeoXModel")]
    if family == "mpt":  # transformers' MptModel: no biases, ALiBi (no position table), the MLP at 4 x d_model
        base = dict(d_model=64, n_heads=4, n_layers=2, vocab_size=1000, max_seq_len=64)
        return [("lm", T.MptConfig(**base), "MptForCausalLM"),
                ("untied", T.MptConfig(**dict(base, tie_word_embeddings=False)), "MptForCausalLM"),
                ("seqcls", T.MptConfig(**dict(base, num_labels=3, pad_token_id=0)), "MptForSequenceClassification"),
                ("base", T.MptConfig(**base), "MptModel")]
    if family == "phi":  # LayerNorms, biases, partial rotary, the parallel attention and MLP, lm_head's bias
        base = dict(SMALL, pad_token_id=0)
        return [("lm", T.PhiConfig(**base), "PhiForCausalLM"),
                ("gqa-qk-norm", T.PhiConfig(**dict(base, num_key_value_heads=2, qk_layernorm=True,
                                                   partial_rotary_factor=0.4, tie_word_embeddings=True)),
                 "PhiForCausalLM"),
                ("seqcls", T.PhiConfig(**dict(base, num_labels=3)), "PhiForSequenceClassification"),
                ("base", T.PhiConfig(**base), "PhiModel")]
    if family == "distilbert":
        base = dict(dim=64, n_layers=2, n_heads=4, hidden_dim=176, vocab_size=1000, max_position_embeddings=64)
        return [("mlm", T.DistilBertConfig(**base), "DistilBertForMaskedLM"),
                ("mlm-untied-relu", T.DistilBertConfig(**dict(base, tie_word_embeddings=False, activation="relu")),
                 "DistilBertForMaskedLM"),
                ("seqcls", T.DistilBertConfig(**dict(base, num_labels=3)), "DistilBertForSequenceClassification"),
                ("base", T.DistilBertConfig(**base), "DistilBertModel")]
    if family == "modernbert":  # global attention every 3rd layer, local windows of 8 (4 each side) in the others
        base = dict(SMALL, num_hidden_layers=4, local_attention=8, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                    cls_token_id=1, sep_token_id=2)
        cls = T.ModernBertConfig
        return [("mlm", cls(**base), "ModernBertForMaskedLM"),
                ("mlm-biases-untied", cls(**dict(base, norm_bias=True, attention_bias=True, mlp_bias=True,
                                                 classifier_bias=True, tie_word_embeddings=False,
                                                 hidden_activation="silu")), "ModernBertForMaskedLM"),
                ("seqcls-cls", cls(**dict(base, num_labels=3)), "ModernBertForSequenceClassification"),
                ("seqcls-mean", cls(**dict(base, num_labels=3, classifier_pooling="mean")),
                 "ModernBertForSequenceClassification"),
                ("base", cls(**base), "ModernBertModel")]
    if family in ("bert", "roberta", "xlm-roberta"):
        cls, prefix = {"bert": (T.BertConfig, "Bert"), "roberta": (T.RobertaConfig, "Roberta"),
                       "xlm-roberta": (T.XLMRobertaConfig, "XLMRoberta")}[family]
        base = dict(SMALL, max_position_embeddings=64 if family == "bert" else 66)
        return [("mlm", cls(**base), prefix + "ForMaskedLM"),
                ("mlm-untied", cls(**dict(base, tie_word_embeddings=False, type_vocab_size=1)), prefix + "ForMaskedLM"),
                ("seqcls", cls(**dict(base, num_labels=3)), prefix + "ForSequenceClassification"),
                ("base", cls(**base), prefix + "Model")]
    if family in ("bart", "mbart"):  # the decoder's depth, heads and MLP width apart from the encoder's
        cls, prefix = {"bart": (T.BartConfig, "Bart"), "mbart": (T.MBartConfig, "MBart")}[family]
        base = dict(d_model=64, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
                    decoder_attention_heads=2, encoder_ffn_dim=176, decoder_ffn_dim=96, vocab_size=1000,
                    max_position_embeddings=64, dropout=0.1, activation_dropout=0.1)
        return [("lm", cls(**base), prefix + "ForConditionalGeneration"),
                ("lm-untied-scaled-relu", cls(**dict(base, tie_word_embeddings=False, scale_embedding=True,
                                                     activation_function="relu")), prefix + "ForConditionalGeneration"),
                ("base", cls(**base), prefix + "Model")]
    if family in ("t5", "mt5"):  # heads x d_kv wider than d_model, a deeper decoder, ReLU or gated MLPs
        cls, prefix = {"t5": (T.T5Config, "T5"), "mt5": (T.MT5Config, "MT5")}[family]
        base = dict(d_model=64, d_kv=24, d_ff=96, num_layers=2, num_decoder_layers=3, num_heads=4, vocab_size=1000,
                    relative_attention_num_buckets=8)
        return [("lm-relu", cls(**dict(base, feed_forward_proj="relu")), prefix + "ForConditionalGeneration"),
                ("lm-gated-untied", cls(**dict(base, feed_forward_proj="gated-gelu", tie_word_embeddings=False)),
                 prefix + "ForConditionalGeneration"),
                ("base-gated-silu", cls(**dict(base, feed_forward_proj="gated-silu")), prefix + "Model")]
    if family == "vit":
        base = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=176, image_size=32,
                    patch_size=8)
        return [("classifier", T.ViTConfig(**dict(base, num_labels=5)), "ViTForImageClassification"),
                ("base", T.ViTConfig(**base), "ViTModel"),
                ("nobias-pooler", T.ViTConfig(**dict(base, qkv_bias=False, pooler_output_size=48)), "ViTModel")]
    raise SystemExit(f"unknown family {family}")


def example_inputs(config, family):
    if family == "vit":
        return {"pixel_values": torch.randn(BATCH, config.num_channels, config.image_size, config.image_size)}
    ids = torch.randint(3, config.vocab_size, (BATCH, SEQ))
    if family in ("bert", "roberta", "xlm-roberta", "distilbert", "modernbert"):
        return {"input_ids": ids, "attention_mask": torch.ones(BATCH, SEQ, dtype=torch.long)}
    if family in ("bart", "mbart", "t5", "mt5"):  # the decoder's input as long as the encoder's (TrainScope's default)
        return {"input_ids": ids, "attention_mask": torch.ones(BATCH, SEQ, dtype=torch.long),
                "decoder_input_ids": torch.randint(3, config.vocab_size, (BATCH, SEQ))}
    return {"input_ids": ids}


def linear_layers(model):
    """Module paths of the linear/conv layers, and the bias adds TrainScope counts inside Conv and Gemm (rank-2
    linear inputs)."""
    conv1d = transformers.pytorch_utils.Conv1D
    paths, gemm_bias, handles = [], [0], []

    def hook(mod, inp, out):
        if getattr(mod, "bias", None) is not None and (inp[0].dim() == 2 or isinstance(mod, torch.nn.Conv2d)):
            gemm_bias[0] += out.numel()

    for name, mod in model.named_modules():
        if isinstance(mod, (torch.nn.Linear, torch.nn.Conv2d, conv1d)):
            paths.append(name)
            handles.append(mod.register_forward_hook(hook))
    return paths, gemm_bias, handles


def used_parameters(model, config, family):
    """Elements of the parameters a training step reaches (gradient defined after backward)."""
    model.train()
    model.zero_grad(set_to_none=True)
    out = model(**example_inputs(config, family))
    loss = sum(t.float().sum() for t in out.to_tuple() if torch.is_tensor(t) and t.is_floating_point())
    loss.backward()
    model.eval()
    return sum(p.numel() for p in model.parameters() if p.grad is not None)


def inspect(cli, spec):
    cmd = [cli, "inspect", spec, "--batch", str(BATCH), "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit status {run.returncode}: {run.stderr.strip()}")
    return json.loads(run.stdout)


def trainscope_matmul_flops(report, config):
    total = 0
    for layer in report["layers"]:
        if layer["op"] in ("MatMul", "Gemm", "Conv"):
            total += layer["forward_flops"]
        elif layer["op"] == "ScaledDotProductAttention":  # q k^T and p v, every score (math backend)
            n, h, t, dv = layer["output_shape"]
            # DeepSeek-V3's query and key heads are wider than its value heads.
            dq = (config.qk_nope_head_dim + config.qk_rope_head_dim) if hasattr(config, "qk_nope_head_dim") else dv
            total += 2 * n * h * t * t * (dq + dv)
        elif layer["op"] == "MixtureOfExperts":  # per route: gate-up (H x 2I) and down (I x H) products
            n, t, h = layer["output_shape"]
            inner = getattr(config, "moe_intermediate_size", None) or config.intermediate_size
            total += 6 * n * t * config.num_experts_per_tok * h * inner
    return total


def write_config(config, arch, path):
    d = config.to_dict()
    d["architectures"] = [arch]
    with open(path, "w") as f:
        json.dump(d, f, indent=1)


def check_small(cli, family, out_dir, rows):
    failures = []
    for variant, config, arch in small_configs(family):
        path = os.path.join(out_dir, f"{family}-{variant}.json")
        write_config(config, arch, path)
        config._attn_implementation = "eager"
        config._experts_implementation = "eager"  # the flop counter does not count grouped_mm
        model = getattr(transformers, arch)(config).eval()
        params = sum(p.numel() for p in model.parameters())
        paths, gemm_bias, handles = linear_layers(model)
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            model(**example_inputs(config, family))
        for h in handles:
            h.remove()
        used = used_parameters(model, config, family)
        spec = path + ("" if family == "vit" else f"?seq={SEQ}") + ("&" if family != "vit" else "?") + "attention=math"
        try:
            report = inspect(cli, spec)
        except RuntimeError as e:
            failures.append(str(e))
            continue
        got = report["totals"]["parameters"]
        rows.append((f"{family} {variant} ({arch})", got, params if used == params else used))
        # TrainScope counts the parameters the forward uses; transformers 5 also keeps a few it never uses
        # (the masked-LM head's "bias" beside an untied decoder's own), noted below.
        if got != (params if used == params else used):
            failures.append(f"{family} {variant}: parameters {got} != transformers' {params} (used {used})")
        if used != params:
            print(f"note: {family} {variant}: {params - used} of transformers' parameters get no gradient in a "
                  f"training step (unused by the forward); TrainScope {got}, used {used}")
        flops = trainscope_matmul_flops(report, config)
        expected = counter.get_total_flops() + gemm_bias[0]
        if flops != expected:
            failures.append(f"{family} {variant}: matrix-product forward FLOPs {flops} != flop counter "
                            f"{counter.get_total_flops()} + Gemm bias adds {gemm_bias[0]} (ratio {flops / expected:.6f})")
        layer_paths = {l["path"] for l in report["layers"]}
        missing = [p for p in paths if p not in layer_paths]
        if missing:
            failures.append(f"{family} {variant}: {len(missing)} linear/conv module paths have no layer, e.g. "
                            f"{missing[:3]}")
    return failures


def check_real(cli, path, rows):
    with open(path) as f:
        d = json.load(f)
    arch = d["architectures"][0]
    config = transformers.CONFIG_MAPPING[d["model_type"]].from_dict(d)
    # A remote-code class name (MosaicML's MPTForCausalLM) is transformers' own in another case.
    cls = getattr(transformers, arch, None) or next(getattr(transformers, n) for n in dir(transformers)
                                                    if n.lower() == arch.lower())
    with torch.device("meta"):
        model = cls(config)
    params = sum(p.numel() for p in model.parameters())
    report = inspect(cli, path)
    got = report["totals"]["parameters"]
    rows.append((f"{os.path.basename(path)} ({arch})", got, params))
    return [] if got == params else [f"{path}: parameters {got} != transformers' {params}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--family", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--real", nargs="*", default=[])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    rows = []
    failures = check_small(args.cli, args.family, args.out, rows)
    for path in args.real:
        failures += check_real(args.cli, path, rows)
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    for name, got, want in rows:
        print(f"{name}: TrainScope {got}, transformers {want}{'' if got == want else '  MISMATCH'}")
    print("(for the rows noted above, transformers' figure is the parameters a training step reaches)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
