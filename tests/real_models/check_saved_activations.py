#!/usr/bin/env python3
"""Checks TrainScope's activation memory against the tensors PyTorch really saves for backward.

    check_saved_activations.py --cli CLI --out DIR [--tolerance PERCENT]

For a small model of each Hugging Face family (transformers' classes with random weights, built from
their config classes and written as config.json), one training forward with labels (so the loss is
included) on the CPU runs under torch.autograd.graph.saved_tensors_hooks; every storage saved for
backward that is not a parameter is counted once (views and tensors saved by several operators share
a storage). That is what autograd keeps alive between forward and backward, the activation term of
the memory model. `trainscope-cli predict CONFIG --json` must give the same bytes in
memory_bytes.activations within --tolerance (default 3%). The fused kernels write their output in the
query's memory layout: where the query is its projection viewed as heads (Llama, BERT, BART, T5), the
output projection reads a view of the attention's output, which TrainScope keeps once; where it is a
slice of a fused q, k, v projection, concatenated, or normalised per head after the transpose (GPT-2,
Phi-3, GPT-NeoX, Gemma 3), a copy (ops/saved_tensors.cpp). What is left is storage aliasing TrainScope does
not follow: GPT-2's value view keeps the whole fused-QKV storage alive (-2.6%).

fp32 for every family (transformers' "sdpa" attention, TrainScope's flash or efficient backend; and
"eager" against TrainScope's math backend for Llama). bf16 autocast for Llama only, where CPU and
CUDA autocast agree on every operator the model uses (linear layers in bf16; the RMSNorm and the
loss upcast by the model's own code); there the 16-bit copies of the weights, which autocast saves
for the weight gradients, are compared with memory_bytes.cast_weight_copies. And the model itself
converted to bf16 (model.to(torch.bfloat16), what FSDP's bf16 parameters compute with) for Llama,
Gemma, Phi-3, Qwen3 (its per-head q and k norms are RMSNorm islands too) and Mixtral (the experts'
saved intermediates in bf16, the router's probabilities in fp32), and Phi, OLMo 2, Gemma 2 and 3, GPT-OSS and BERT
(whose masked-LM loss takes the bf16 logits as they are: its log-probabilities in bf16), against --precision
bf16-params: the RMSNorm's fp32 island and the loss's fp32 logits are the model's own code. Eager attention
with dropout (BART in fp32 and as a bf16 model; BERT, GPT-2 and Llama as bf16 models): the probabilities in the
softmax's dtype (bf16 for BERT, BART and GPT-2, whose softmax takes none; fp32 for Llama's), the one-byte mask
and the dropped probabilities in the model's dtype.
LoRA as PEFT adds it (get_peft_model with its defaults: fp32 adapters, whose input each adapted layer casts
to fp32 and whose sum with the base's output it casts back), on Llama in fp32, under bf16 autocast, and as a
bf16 model under the bf16 autocast Hugging Face's Trainer adds (bf16=True; against bf16-params
--no-master-weights), and on Phi as that bf16 model, with and without lora_dropout, every linear layer of the
blocks or q and v only, against --lora RANK [--lora-targets] [--lora-dropout]; dropout there runs as CUDA's
fused kernel does (native_dropout: a one-byte mask), not as the CPU's F.dropout (a mask of the input's dtype).
Under autocast the weights' 16-bit copies are left out: TrainScope stores a frozen base in the compute dtype,
and the adapters' copies are rank-sized.
Exits 77 (ctest: skipped) without torch, transformers and peft.
"""
import os
import sys

from real_models_common import memory_check_args, predicted_memory, torch_and_transformers

BATCH, SEQ = 2, 96  # batch x sequence differs from every width, so no activation has a weight's shape

torch, transformers = torch_and_transformers()
T = transformers
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=176, vocab_size=1000,
             max_position_embeddings=256)

BART_SMALL = dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                  encoder_ffn_dim=176, decoder_ffn_dim=176, vocab_size=1000, max_position_embeddings=256, dropout=0.0)
T5_SMALL = dict(d_model=64, d_kv=16, d_ff=176, num_layers=2, num_decoder_layers=2, num_heads=4, vocab_size=1000,
                dropout_rate=0.0, decoder_start_token_id=0, feed_forward_proj="gated-gelu")

# (family, config, architecture, transformers' attention, TrainScope's backend, mode): mode "fp32",
# "autocast" (bf16 autocast over the fp32 model) or "bf16" (the model converted to bf16, as FSDP's
# bf16 parameters run it: TrainScope's bf16-params)
CASES = [
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "sdpa", "flash", "fp32"),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "eager", "math", "fp32"),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "sdpa", "flash", "autocast"),
    ("mistral", T.MistralConfig(**SMALL, num_key_value_heads=2), "MistralForCausalLM", "sdpa", "flash", "fp32"),
    ("qwen2", T.Qwen2Config(**SMALL, num_key_value_heads=2), "Qwen2ForCausalLM", "sdpa", "flash", "fp32"),
    ("qwen3", T.Qwen3Config(**SMALL, num_key_value_heads=2, head_dim=16), "Qwen3ForCausalLM", "sdpa", "flash",
     "fp32"),
    ("mixtral", T.MixtralConfig(**SMALL, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
     "MixtralForCausalLM", "sdpa", "flash", "fp32"),
    ("qwen3_moe", T.Qwen3MoeConfig(**SMALL, num_key_value_heads=2, head_dim=16, num_experts=4, num_experts_per_tok=2,
                                   moe_intermediate_size=48, norm_topk_prob=True), "Qwen3MoeForCausalLM", "sdpa",
     "flash", "fp32"),
    ("olmo2", T.Olmo2Config(**SMALL, num_key_value_heads=2), "Olmo2ForCausalLM", "sdpa", "flash", "fp32"),
    ("olmo2", T.Olmo2Config(**SMALL, num_key_value_heads=2), "Olmo2ForCausalLM", "sdpa", "flash", "bf16"),
    ("granite", T.GraniteConfig(**SMALL, num_key_value_heads=2, embedding_multiplier=12.0, residual_multiplier=0.22,
                                attention_multiplier=0.05, logits_scaling=8.0), "GraniteForCausalLM", "sdpa", "flash",
     "fp32"),
    ("qwen2_moe", T.Qwen2MoeConfig(**SMALL, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                                   moe_intermediate_size=48, shared_expert_intermediate_size=96),
     "Qwen2MoeForCausalLM", "sdpa", "flash", "fp32"),
    # DeepSeek-V3's latent attention with value heads as wide as the query heads (8 + 8 rotated and 16), so that the
    # CPU runs sdpa's fused kernel (it takes no narrower value heads, and neither does CUDA's flash: the efficient
    # kernel runs DeepSeek-V3's there); sigmoid-scored experts, a shared one, a dense first layer.
    ("deepseek_v3", T.DeepseekV3Config(**SMALL, num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2,
                                       moe_intermediate_size=48, n_shared_experts=1, first_k_dense_replace=1,
                                       kv_lora_rank=32, q_lora_rank=24, qk_nope_head_dim=8, qk_rope_head_dim=8,
                                       v_head_dim=16, n_group=2, topk_group=1), "DeepseekV3ForCausalLM", "sdpa", None,
     "fp32"),
    ("gemma", T.GemmaConfig(**SMALL, num_key_value_heads=1, head_dim=16), "GemmaForCausalLM", "sdpa", "flash",
     "fp32"),
    ("phi3", T.Phi3Config(**SMALL, num_key_value_heads=2, pad_token_id=0), "Phi3ForCausalLM", "sdpa", "flash", "fp32"),
    ("gpt_neox", T.GPTNeoXConfig(**SMALL), "GPTNeoXForCausalLM", "sdpa", "flash", "fp32"),
    # GPT-2 without dropout: on the CPU, dropout keeps a float mask of its input's size (x * noise), where
    # CUDA's fused dropout keeps one byte per element, and scaled_dot_product_attention with dropout falls
    # back to the math kernel, where CUDA runs flash; the masks are CUDA's in TrainScope.
    ("gpt2", T.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=256, resid_pdrop=0.0,
                          embd_pdrop=0.0, attn_pdrop=0.0), "GPT2LMHeadModel", "sdpa", "flash", "fp32"),
    ("gpt2", T.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=256, resid_pdrop=0.0,
                          embd_pdrop=0.0, attn_pdrop=0.0), "GPT2LMHeadModel", "eager", "math", "fp32"),
    ("bert", T.BertConfig(**SMALL, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0), "BertForMaskedLM",
     "sdpa", "efficient", "fp32"),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "sdpa", "flash", "bf16"),
    ("gemma", T.GemmaConfig(**SMALL, num_key_value_heads=1, head_dim=16), "GemmaForCausalLM", "sdpa", "flash",
     "bf16"),
    ("phi3", T.Phi3Config(**SMALL, num_key_value_heads=2, pad_token_id=0), "Phi3ForCausalLM", "sdpa", "flash", "bf16"),
    ("qwen3", T.Qwen3Config(**SMALL, num_key_value_heads=2, head_dim=16), "Qwen3ForCausalLM", "sdpa", "flash",
     "bf16"),
    ("mixtral", T.MixtralConfig(**SMALL, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
     "MixtralForCausalLM", "sdpa", "flash", "bf16"),
    # Gemma 2 in its default eager attention (soft-capped scores, a window of 32 in layer 0) and Gemma 3 in
    # transformers' default sdpa (TrainScope's default backend: None), whose local layer gets the window as a
    # mask at 96 tokens (k and v repeated to every head, the efficient kernel), in fp32 and as a bf16 model
    # (eager keeps the fp32 softmax's probabilities and their bf16 copy).
    ("gemma2", T.Gemma2Config(**SMALL, num_key_value_heads=2, head_dim=16, sliding_window=32), "Gemma2ForCausalLM",
     "eager", "math", "fp32"),
    ("gemma2", T.Gemma2Config(**SMALL, num_key_value_heads=2, head_dim=16, sliding_window=32), "Gemma2ForCausalLM",
     "eager", "math", "bf16"),
    ("gemma3_text", T.Gemma3TextConfig(**SMALL, num_key_value_heads=1, head_dim=16, sliding_window=32,
                                       layer_types=["sliding_attention", "full_attention"]), "Gemma3ForCausalLM",
     "sdpa", None, "fp32"),
    ("gemma3_text", T.Gemma3TextConfig(**SMALL, num_key_value_heads=1, head_dim=16, sliding_window=32,
                                       layer_types=["sliding_attention", "full_attention"]), "Gemma3ForCausalLM",
     "sdpa", None, "bf16"),
    # Phi (phi-2's layout: the attention and the MLP in parallel off one LayerNorm, partial rotary, gelu_new), in
    # fp32 and as a bf16 model; DistilBERT without dropout; BERT as a bf16 model, whose masked-LM loss takes the
    # bf16 logits as they are (no fp32 copy).
    ("phi", T.PhiConfig(**SMALL, partial_rotary_factor=0.4), "PhiForCausalLM", "sdpa", "flash", "fp32"),
    ("phi", T.PhiConfig(**SMALL, partial_rotary_factor=0.4), "PhiForCausalLM", "sdpa", "flash", "bf16"),
    ("distilbert", T.DistilBertConfig(dim=64, n_layers=2, n_heads=4, hidden_dim=176, vocab_size=1000,
                                      max_position_embeddings=256, dropout=0.0, attention_dropout=0.0),
     "DistilBertForMaskedLM", "sdpa", "efficient", "fp32"),
    ("bert", T.BertConfig(**SMALL, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0), "BertForMaskedLM",
     "sdpa", "efficient", "bf16"),
    # ModernBERT: local windows of 32 (16 each side) in two layers of three, which sdpa gets as masks at 96 tokens;
    # bias-free LayerNorms, the GLU MLP, its prediction head.
    ("modernbert", T.ModernBertConfig(**dict(SMALL, num_hidden_layers=3), local_attention=32, pad_token_id=0, bos_token_id=1,
                                      eos_token_id=2, cls_token_id=1, sep_token_id=2), "ModernBertForMaskedLM", "sdpa",
     None, "fp32"),
    ("modernbert", T.ModernBertConfig(**dict(SMALL, num_hidden_layers=3), local_attention=32, pad_token_id=0, bos_token_id=1,
                                      eos_token_id=2, cls_token_id=1, sep_token_id=2), "ModernBertForMaskedLM", "sdpa",
     None, "bf16"),
    # GPT-OSS in its eager attention (transformers gives it no sdpa): sinks, a window of 32 in layer 0, the
    # softmax in the scores' own dtype (one probabilities tensor in bf16, not an fp32 one and its copy), and
    # the experts' clamped SwiGLU with biases.
    ("gpt_oss", T.GptOssConfig(**SMALL, num_key_value_heads=2, head_dim=16, sliding_window=32, num_local_experts=4,
                               num_experts_per_tok=2), "GptOssForCausalLM", "eager", "math", "fp32"),
    ("gpt_oss", T.GptOssConfig(**SMALL, num_key_value_heads=2, head_dim=16, sliding_window=32, num_local_experts=4,
                               num_experts_per_tok=2), "GptOssForCausalLM", "eager", "math", "bf16"),
    # BART and mBART without dropout (labels shifted into the decoder's input): the encoder, the causal
    # self-attention and the cross-attention, in sdpa and eager; BART also as a bf16 model (its loss takes the
    # bf16 logits as they are).
    ("bart", T.BartConfig(**BART_SMALL), "BartForConditionalGeneration", "sdpa", None, "fp32"),
    ("bart", T.BartConfig(**BART_SMALL), "BartForConditionalGeneration", "eager", "math", "fp32"),
    ("bart", T.BartConfig(**BART_SMALL), "BartForConditionalGeneration", "sdpa", None, "bf16"),
    ("mbart", T.MBartConfig(**BART_SMALL), "MBartForConditionalGeneration", "sdpa", None, "fp32"),
    # Eager attention with dropout, as a bf16 model and in fp32: BERT, BART and GPT-2 take the softmax in the
    # scores' dtype (the bf16 probabilities, a one-byte mask, the dropped bf16 probabilities), Llama in fp32 (the
    # fp32 probabilities, the mask, the dropped probabilities cast to bf16 first). Dropout runs as CUDA's does
    # (cuda_dropout below).
    ("bart", T.BartConfig(**dict(BART_SMALL, dropout=0.1, attention_dropout=0.1)), "BartForConditionalGeneration",
     "eager", "math", "fp32"),
    ("bart", T.BartConfig(**dict(BART_SMALL, dropout=0.1, attention_dropout=0.1)), "BartForConditionalGeneration",
     "eager", "math", "bf16"),
    ("bert", T.BertConfig(**SMALL), "BertForMaskedLM", "eager", "math", "bf16"),
    ("gpt2", T.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=256), "GPT2LMHeadModel",
     "eager", "math", "bf16"),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2, attention_dropout=0.1), "LlamaForCausalLM", "eager",
     "math", "bf16"),
    # T5 in fp32: the relative-position bias as sdpa's float mask, made again by every attention ([1, heads, T, S]
    # without a padding mask) and kept by the kernel; and its eager attention. Not as a bf16 model: there the CPU's
    # sdpa takes its math path with fp32 scores (a float mask in bf16), which CUDA's efficient kernel does not.
    ("t5", T.T5Config(**T5_SMALL), "T5ForConditionalGeneration", "sdpa", None, "fp32"),
    ("t5", T.T5Config(**T5_SMALL), "T5ForConditionalGeneration", "eager", "math", "fp32"),
]


# (family, config, architecture, mode, PEFT target_modules, lora_dropout): LoRA of rank 8, alpha 16.
LORA_CASES = [
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "fp32", "all-linear", 0.05),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "bf16+autocast", "all-linear", 0.0),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "bf16+autocast", "all-linear", 0.05),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "bf16+autocast", ["q_proj", "v_proj"],
     0.1),
    ("llama", T.LlamaConfig(**SMALL, num_key_value_heads=2), "LlamaForCausalLM", "autocast", "all-linear", 0.05),
    ("phi", T.PhiConfig(**SMALL, partial_rotary_factor=0.4), "PhiForCausalLM", "bf16+autocast", "all-linear", 0.05),
]


def cuda_dropout(input, p=0.5, training=True, inplace=False):
    """F.dropout as CUDA runs it (native_dropout: a one-byte mask saved), where the CPU's keeps a float one."""
    return torch.native_dropout(input, p, True)[0] if training and p > 0 else input


def measured_bytes(config, arch, attention, mode, lora=None):
    """Saved-for-backward bytes of one training forward with labels: (activations, weight copies).
    lora: (target_modules, lora_dropout) of PEFT's LoRA of rank 8 on the model."""
    torch.manual_seed(0)
    model = getattr(T, arch)(config) if attention is None else getattr(T, arch)._from_config(
        config, attn_implementation=attention)
    if mode in ("bf16", "bf16+autocast"):
        model = model.to(torch.bfloat16)
    if lora:
        import peft
        model = peft.get_peft_model(model, peft.LoraConfig(r=8, lora_alpha=16, target_modules=lora[0],
                                                           lora_dropout=lora[1]))
    autocast = mode in ("autocast", "bf16+autocast")
    model.train()
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    weight_shapes = {tuple(p.shape) for p in model.parameters()}
    saved = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            saved[s.data_ptr()] = (tuple(t.shape), s.nbytes())
        return t

    ids = torch.randint(0, config.vocab_size, (BATCH, SEQ))
    ctx = torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast)
    dropout = torch.nn.functional.dropout
    torch.nn.functional.dropout = cuda_dropout
    try:
        with ctx, torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(input_ids=ids, labels=ids)
    finally:
        torch.nn.functional.dropout = dropout
    # Autocast's 16-bit weight copies are saved transposed (the linear layer's t()); activations are
    # [batch, ...] or [batch x sequence, ...].
    copies = sum(n for shape, n in saved.values()
                 if autocast and (shape in weight_shapes or shape[::-1] in weight_shapes)
                 and shape[0] not in (BATCH, BATCH * SEQ))
    return sum(n for _, n in saved.values()) - copies, copies


# Known gaps, held to their own bound (percent) in place of --tolerance: ModernBERT's sdpa keeps its two masks
# ([N, 1, T, S] in the model's dtype, the global and the sliding one, shared by the layers of each type) and
# its rotary embedding's q and k inputs, which TrainScope does not count (-7.4% in fp32, -6.0% in bf16).
KNOWN_GAPS = {("modernbert", "fp32"): 8.0, ("modernbert", "bf16"): 7.0}

PRECISION = {"fp32": "fp32-strict", "autocast": "amp-bf16", "bf16": "bf16-params", "bf16+autocast": "bf16-params"}
LABEL = {"fp32": "fp32", "autocast": "bf16 autocast", "bf16": "bf16 model", "bf16+autocast": "bf16 model+autocast"}


def predicted_bytes(cli, path, backend, mode, lora=None):
    options = ["--batch", str(BATCH), "--precision", PRECISION[mode], "--optimizer", "adamw"]
    if lora:
        options += ["--lora", "8", "--lora-alpha", "16", "--lora-dropout", str(lora[1])]
        if lora[0] != "all-linear":
            options += ["--lora-targets", ",".join(lora[0])]
        if mode == "bf16+autocast":
            options.append("--no-master-weights")  # a bf16 model trained as it is, PEFT's fp32 adapters
    m = predicted_memory(cli, f"{path}?seq={SEQ}" + (f"&attention={backend}" if backend else ""), options)
    return m["activations"], m["cast_weight_copies"]


def main():
    a = memory_check_args(__doc__, tolerance=3.0)
    failures = []
    print(f"batch {BATCH}, sequence {SEQ}; KiB saved for backward, measured (PyTorch {torch.__version__}, "
          f"transformers {transformers.__version__}, CPU) and predicted")
    for family, config, arch, attention, backend, mode in CASES:
        config.architectures = [arch]
        path = os.path.join(a.out, f"saved-{family}.json")
        config.to_json_file(path)
        act, copies = measured_bytes(config, arch, attention, mode)
        p_act, p_copies = predicted_bytes(a.cli, path, backend, mode)
        err = 100 * (p_act / act - 1)
        line = (f"{family:9} {attention:5} {LABEL[mode]:13} activations "
                f"{act / 1024:8.1f} measured {p_act / 1024:8.1f} predicted ({err:+.1f}%)")
        if mode == "autocast":
            line += f"; weight copies {copies / 1024:.1f} measured {p_copies / 1024:.1f} predicted"
            if abs(p_copies - copies) > a.tolerance / 100 * max(copies, 1):
                failures.append(f"{family} weight copies")
        print(line)
        if abs(err) > KNOWN_GAPS.get((family, attention, mode), KNOWN_GAPS.get((family, mode), a.tolerance)):
            failures.append(f"{family} {attention} {LABEL[mode]}")
    try:
        import peft
    except ImportError:
        print("SKIP: the LoRA cases need peft (scripts/setup.sh --tests installs it)")
        if failures:
            sys.exit(f"off by more than {a.tolerance}%: {', '.join(failures)}")
        sys.exit(77)
    for family, config, arch, mode, targets, dropout in LORA_CASES:
        config.architectures = [arch]
        path = os.path.join(a.out, f"saved-lora-{family}.json")
        config.to_json_file(path)
        lora = (targets, dropout)
        act, _ = measured_bytes(config, arch, "sdpa", mode, lora)
        p_act, _ = predicted_bytes(a.cli, path, "flash", mode, lora)
        err = 100 * (p_act / act - 1)
        what = targets if isinstance(targets, str) else ",".join(targets)
        print(f"{family:9} LoRA  {LABEL[mode]:13} activations {act / 1024:8.1f} measured {p_act / 1024:8.1f} "
              f"predicted ({err:+.1f}%)  peft {peft.__version__}, {what}, dropout {dropout}")
        if abs(err) > a.tolerance:
            failures.append(f"{family} LoRA {LABEL[mode]} {what} dropout {dropout}")
    if failures:
        sys.exit(f"off by more than {a.tolerance}%: {', '.join(failures)}")


if __name__ == "__main__":
    main()
