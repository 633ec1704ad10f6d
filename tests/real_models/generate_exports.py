#!/usr/bin/env python3
"""Exports Hugging Face and torchvision architectures with both torch.onnx exporters, with a manifest of
PyTorch's own figures for tests/real_models/check.py (the same fields as generate.py's manifest).

    generate_exports.py OUTPUT_DIR hf|torchvision

Formats, per model, where the exporter can export it:
- onnx_dynamo: torch.onnx.export(model, args, path), the defaults (the torch.export-based exporter with its
  optimizer, every size fixed at the example's);
- onnx_dynamo_dynamic: the same with the batch (and sequence) dimensions dynamic;
- onnx_legacy: dynamo=False in training mode without constant folding, batch (and sequence) dynamic, as
  generate.py exports (for the decoder families with generate.py's work-around for aten::diff).
Models are built from small configs as a user builds them (freshly initialised weights: the exporter's
optimizer then merges equal initializers, which the importer must undo) and, for "_trained" variants, with
every parameter and floating buffer drawn at random, as in a trained model.

And the bytes PyTorch's autograd saves for backward in the training forward that a format holds
("saved_bytes", by format), which check.py compares with the file's activation_bytes.

Where a file cannot hold a parameter whole, the manifest says so with the count the file does hold and the
note the importer must give ("expected"): a static export gathers the rows of a position table that the
fixed sequence length reads (GPT-2's wpe, BERT's position_embeddings) and drops the rest.

Nothing is downloaded. Outputs are cached: nothing is regenerated when the manifest matches this script.
Exits 77 (ctest: skipped) without torch, torchvision, transformers and onnxscript.
"""
import hashlib
import json
import os
import sys
import time
import warnings

SKIP = 77

try:
    import torch
    import torchvision
    import transformers
    import onnxscript  # noqa: F401: the torch.export-based exporter needs it
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from generate import BATCH, SEQ, independent_counts
except Exception as e:  # noqa: BLE001: any import problem means "cannot generate here"
    print(f"SKIP: torch, torchvision, transformers and onnxscript are needed to export the models ({e})")
    sys.exit(SKIP)

T = transformers
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=176, vocab_size=1000,
             use_cache=False)


def randomize(model):
    """Every parameter and floating buffer drawn at random (distinct tensors, as in a trained model)."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.02)
        for name, b in model.named_buffers():
            if b.is_floating_point() and "inv_freq" not in name:
                b.copy_(torch.rand(b.shape, generator=g) + 0.5)
    return model


def hf_models():
    """(name, constructor, dynamic axes of input_ids or pixel_values, lost-rows rule for static exports)."""
    decoder = dict(SMALL, num_key_value_heads=2, pad_token_id=0)
    gpt2 = dict(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=64, use_cache=False)
    vit = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=176, image_size=32,
               patch_size=8, num_labels=5)
    out = [
        ("llama", lambda: T.LlamaForCausalLM(T.LlamaConfig(**decoder))),
        ("mistral", lambda: T.MistralForCausalLM(T.MistralConfig(**decoder))),
        ("qwen2", lambda: T.Qwen2ForCausalLM(T.Qwen2Config(**decoder))),
        ("gemma", lambda: T.GemmaForCausalLM(T.GemmaConfig(**decoder))),
        ("phi3", lambda: T.Phi3ForCausalLM(T.Phi3Config(**decoder))),
        ("gpt2", lambda: T.GPT2LMHeadModel(T.GPT2Config(**gpt2))),
        ("gpt_neox", lambda: T.GPTNeoXForCausalLM(T.GPTNeoXConfig(**SMALL))),
        ("bert", lambda: T.BertForMaskedLM(T.BertConfig(**SMALL, max_position_embeddings=64))),
        ("roberta", lambda: T.RobertaForMaskedLM(T.RobertaConfig(**SMALL, max_position_embeddings=66))),
        ("vit", lambda: T.ViTForImageClassification(T.ViTConfig(**vit))),
    ]
    # Trained-like weights: no equal initializers for the optimizer to merge.
    out += [(name + "_trained", (lambda b=build: randomize(b()))) for name, build in out if name in
            ("llama", "gpt2", "gpt_neox", "bert")]
    return out


def tv_models():
    tv = torchvision.models
    # (name, constructor, image size): small images where the architecture allows (Swin pads its windows
    # at 64: the shape arithmetic of the issue); ViT and MaxViT need 224.
    return [
        ("swin_t", lambda: tv.swin_t(weights=None), 64),
        # Drawn at random: a fresh Swin V2 has all-zero q, k, v biases, whose folds (the key's third zeroed)
        # the optimizer merges across blocks with nothing in the file to say so.
        ("swin_v2_t", lambda: randomize(tv.swin_v2_t(weights=None)), 64),
        ("vit_b_16", lambda: tv.vit_b_16(weights=None), 224),
        ("convnext_tiny", lambda: tv.convnext_tiny(weights=None), 64),
        ("efficientnet_v2_s", lambda: tv.efficientnet_v2_s(weights=None), 64),
        ("mobilenet_v3_small", lambda: tv.mobilenet_v3_small(weights=None), 64),
        ("shufflenet_v2_x0_5", lambda: tv.shufflenet_v2_x0_5(weights=None), 64),  # convolutions on chunks
        ("regnet_y_400mf", lambda: tv.regnet_y_400mf(weights=None), 64),
        ("maxvit_t", lambda: tv.maxvit_t(weights=None), 224),
    ]


def expected_losses(name, model):
    """{format: {"parameters", "note"}} where a file cannot hold every parameter, by construction:
    - a static export gathers the rows of a position table that the fixed sequence length reads and keeps
      only those (GPT-2's wpe, BERT's position_embeddings), which the importer says in a note;
    - a freshly built GPT-NeoX has equal LayerNorms (weights 1, biases 0) on the same input (its parallel
      residual): the optimizer merges their weights, then the two norms into one, and the file holds one
      norm per layer; nothing in it says that there were two (no note)."""
    cfg, total = model.config, sum(p.numel() for p in model.parameters())
    if name.startswith("gpt2"):
        lost = "transformer.wpe.weight", (cfg.n_positions - SEQ) * cfg.n_embd
    elif name.startswith("bert"):
        lost = "bert.embeddings.position_embeddings.weight", (cfg.max_position_embeddings - SEQ) * cfg.hidden_size
    elif name == "gpt_neox":
        merged = total - 2 * cfg.hidden_size * cfg.num_hidden_layers
        return {"onnx_dynamo": {"parameters": merged}, "onnx_dynamo_dynamic": {"parameters": merged}}
    else:
        return {}
    return {"onnx_dynamo": {"parameters": total - lost[1], "note": f"parameter '{lost[0]}' is only partly in the file"}}


def expected_tv_losses(name, model):
    """Swin V2's continuous position bias is an MLP run on a coordinate buffer, which the torch.export-based
    exporter folds into a constant with every size fixed or not: the first layer's weight is not in the file
    (its bias, added by a node of its own, is), which the importer says in a note."""
    if name != "swin_v2_t":
        return {}
    lost = sum(p.numel() for n, p in model.named_parameters() if n.endswith("cpb_mlp.0.weight"))
    total = sum(p.numel() for p in model.parameters())
    note = "is not in the file: the exporter folded the layer it weighs"
    folded = 0  # that layer's forward FLOPs, which the file does not hold either
    for name, mod in model.named_modules():
        if name.endswith("cpb_mlp.0"):
            table = model.get_submodule(name.rsplit(".cpb_mlp", 1)[0]).relative_coords_table
            folded += 2 * (table.numel() // mod.in_features) * mod.in_features * mod.out_features
    return {fmt: {"parameters": total - lost, "note": note, "folded_flops": folded}
            for fmt in ("onnx_dynamo", "onnx_dynamo_dynamic")}


def saved_bytes(model, example, eager=False):
    """Bytes autograd saves for backward in one training forward (every storage saved that is not a
    parameter, the input included), dropout as CUDA runs it (a one-byte mask; the CPU's F.dropout keeps
    a float one): what the file's activation_bytes must be where the file holds what that forward runs.
    eager: transformers' eager attention, which the legacy export writes."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(t):
        if t.untyped_storage().data_ptr() not in params:
            saved[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    def cuda_dropout(input, p=0.5, training=True, inplace=False):
        return torch.native_dropout(input, p, True)[0] if training and p > 0 else input

    attention = model.config._attn_implementation if eager else None
    dropout = torch.nn.functional.dropout
    torch.nn.functional.dropout = cuda_dropout
    try:
        if eager:
            model.set_attn_implementation("eager")
        torch.manual_seed(0)
        model.train()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(*example)
    finally:
        torch.nn.functional.dropout = dropout
        model.eval()
        if eager:
            model.set_attn_implementation(attention)
    return sum(saved.values())


def export(model, path, example, input_name, dynamic, legacy):
    if legacy:
        model.train()
        original = model.forward
        hf = isinstance(model, transformers.PreTrainedModel)
        if hf:
            model.forward = lambda x: original(**{input_name: x})  # see generate.py
            # The legacy exporter has no scaled_dot_product_attention with grouped-query heads: eager
            # attention (the same matrix products) exports.
            attention = model.config._attn_implementation
            model.set_attn_implementation("eager")
        try:
            torch.onnx.export(model, example, path, dynamo=False, opset_version=17,
                              training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                              input_names=[input_name], dynamic_axes={input_name: dynamic})
        finally:
            model.forward = original
            if hf:
                model.set_attn_implementation(attention)
            model.eval()
    elif dynamic is None:
        torch.onnx.export(model, example, path)
    else:
        torch.onnx.export(model, example, path, input_names=[input_name], dynamic_axes={input_name: dynamic})


def export_all(name, model, example, input_name, dynamic, out_dir, record):
    files, failures = {}, {}
    formats = [("onnx_dynamo", None, False), ("onnx_dynamo_dynamic", dynamic, False), ("onnx_legacy", dynamic, True)]
    if name.endswith("_trained"):
        formats = formats[:1]  # what differs from the fresh model: the optimizer has nothing equal to merge
    for fmt, dyn, legacy in formats:
        path = f"{name}.{fmt}.onnx"
        try:
            export(model, os.path.join(out_dir, path), example, input_name, dyn, legacy)
            files[fmt] = path
        except Exception as e:  # noqa: BLE001: recorded, the check of this format is skipped
            failures[fmt] = str(e).strip().splitlines()[0][:300]
    record["files"] = files
    record["export_failures"] = failures


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("hf", "torchvision"):
        print(__doc__)
        return 2
    out_dir, which = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    sources = b""
    for script in (__file__, os.path.join(os.path.dirname(os.path.abspath(__file__)), "generate.py")):
        with open(script, "rb") as f:
            sources += f.read()  # this script and the counting it imports
    digest = hashlib.sha256(sources + which.encode() + torch.__version__.encode() + transformers.__version__.encode() +
                            torchvision.__version__.encode()).hexdigest()
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        if old.get("generator_hash") == digest and all(os.path.exists(os.path.join(out_dir, p))
                                                       for m in old["models"].values() for p in m["files"].values()):
            print(f"up to date: {manifest_path}")
            return 0
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    import transformers.masking_utils as masking
    masking.find_packed_sequence_indices = lambda position_ids: None  # the legacy exporter lacks aten::diff
    torch.manual_seed(0)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    models = {}
    start = time.time()
    if which == "hf":
        for name, build in hf_models():
            t = time.time()
            model = build().eval()
            image = isinstance(model, T.ViTForImageClassification)
            size = model.config.image_size if image else None
            example = (torch.randn(BATCH, 3, size, size),) if image else (torch.randint(3, 1000, (BATCH, SEQ)),)
            input_name = "pixel_values" if image else "input_ids"
            dynamic = {0: "batch"} if image else {0: "batch", 1: "seq"}
            record = {"kind": "vision" if image else "text", "batch": BATCH,
                      "parameters": sum(p.numel() for p in model.parameters()),
                      "cli_args": ["--batch", str(BATCH)] + ([] if image else ["--seq", str(SEQ)]),
                      **independent_counts(model, example)}
            record["expected"] = expected_losses(name, model)
            # The legacy export is the training forward with eager attention. The torch.export-based
            # exporter's files are the eval forward (no dropout) with sdpa, which the CPU runs on other
            # terms than the file says a GPU would (grouped-query heads without repeat_kv's copies, no
            # mask where the file has one): not compared.
            record["saved_bytes"] = {"onnx_legacy": saved_bytes(model, example, eager=True)}
            export_all(name, model, example, input_name, dynamic, out_dir, record)
            models[name] = record
            print(f"{name}: {time.time() - t:.1f} s {record['export_failures'] or ''}", flush=True)
    else:
        for name, build, size in tv_models():
            t = time.time()
            model = build().eval()
            example = (torch.randn(BATCH, 3, size, size),)
            record = {"kind": "vision", "batch": BATCH, "parameters": sum(p.numel() for p in model.parameters()),
                      "cli_args": ["--batch", str(BATCH)], **independent_counts(model, example)}
            # At twice the batch: what the FLOPs grow by (Swin V2's position-bias MLP runs once a step).
            doubled = independent_counts(model, (torch.randn(2 * BATCH, 3, size, size),))
            record["flops_doubled"] = (doubled["conv_matmul_flops_counter"] + doubled["conv_bias_flops"] +
                                       doubled["gemm_bias_flops"])
            # Every format holds the training forward of these (the eval exports lack only dropout's masks
            # and stochastic depth's per-sample draws: bytes, not tensors). Not Swin V2's: its attention
            # multiplies the probabilities by v, a strided view of the q, k, v projection that matmul
            # copies and saves (PyTorch's strides, not in the file): the import is about 6% under
            # autograd's bytes.
            if name != "swin_v2_t":
                measured = saved_bytes(model, example)
                record["saved_bytes"] = {fmt: measured for fmt in ("onnx_dynamo", "onnx_dynamo_dynamic", "onnx_legacy")}
            record["expected"] = expected_tv_losses(name, model)
            export_all(name, model, example, "input", {0: "batch"}, out_dir, record)
            models[name] = record
            print(f"{name}: {time.time() - t:.1f} s {record['export_failures'] or ''}", flush=True)
    with open(manifest_path, "w") as f:
        json.dump({"generator_hash": digest, "torch": torch.__version__, "models": models}, f, indent=1)
    print(f"wrote {len(models)} models to {out_dir} in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
