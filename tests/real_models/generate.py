#!/usr/bin/env python3
"""Builds real architectures (torchvision, Hugging Face transformers) with random weights and exports each to
ONNX and TorchScript, with a manifest of PyTorch's own figures for tests/real_models/check.py.

    generate.py OUTPUT_DIR

Nothing is downloaded. The manifest holds, per model: the parameter count (sum of p.numel() over
model.parameters(), tied weights once), FLOP counts of convolutions and matrix products measured independently of
TrainScope (forward hooks on nn.Conv*/nn.Linear/HF Conv1D, and torch.utils.flop_counter over the whole forward),
the bias-add FLOPs that TrainScope's Conv and Gemm include, and the input shapes used. Outputs are cached: nothing
is regenerated when the manifest matches this script. Exits 77 (ctest: skipped) without torch/torchvision/transformers.
"""
import hashlib
import json
import os
import sys
import time
import warnings

SKIP = 77
BATCH = 2   # the counts are at the batch size the tests pass to trainscope-cli (--batch 2)
SEQ = 16    # and the sequence length (--seq 16) for token models

try:
    import torch
    import torchvision
    import transformers
    import torch.nn.functional as F
    from torch.utils.flop_counter import FlopCounterMode
except Exception as e:  # noqa: BLE001: any import problem means "cannot generate here"
    print(f"SKIP: torch, torchvision and transformers are needed to build the real models ({e})")
    sys.exit(SKIP)


def script_hash():
    with open(__file__, "rb") as f:
        return hashlib.sha256(f.read() + torch.__version__.encode() + transformers.__version__.encode()).hexdigest()


class BiasAdds(torch.overrides.TorchFunctionMode):
    """The bias adds TrainScope counts inside Conv and Gemm (docs/costs.md), seen at the functional calls
    (so also where a module calls F.linear with a child's weights, as nn.MultiheadAttention does): every
    convolution with a bias, every rank-2 F.linear with a bias and every torch.addmm (HF Conv1D), which the
    exporters write as Gemm, and nn.MultiheadAttention's output projection (rank 2, inside a call whose
    insides the mode does not see). Rank>2 linear layers become MatMul + Add, whose Add is not counted."""

    def __init__(self):
        super().__init__()
        self.conv = 0
        self.gemm = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
        if func in (F.conv1d, F.conv2d, F.conv3d) and bias is not None:
            self.conv += out.numel()
        elif func is F.linear and bias is not None and args[0].dim() == 2:
            self.gemm += out.numel()
        elif func is torch.addmm:
            self.gemm += out.numel()
        elif func is F.multi_head_attention_forward and (kwargs.get("out_proj_bias", args[12] if len(args) > 12
                                                                    else None)) is not None:
            self.gemm += args[0].numel()  # its output projection, a rank-2 F.linear that the mode does not see
        return out


def independent_counts(model, example):
    """FLOPs at the example inputs: hooks on conv/linear layers, the flop counter, and bias adds."""
    hooks_flops = 0
    called = set()  # layers whose forward runs (nn.MultiheadAttention and Swin's attention use their
    handles = []    # child Linear's weights through F.linear: those children never run, their parents do)
    hf_conv1d = getattr(transformers.pytorch_utils, "Conv1D", None)
    names = {mod: name for name, mod in model.named_modules()}

    def conv_hook(mod, inp, out):
        nonlocal hooks_flops
        called.add(names[mod])
        k = 1
        for s in mod.kernel_size:
            k *= s
        hooks_flops += 2 * out.numel() * (mod.in_channels // mod.groups) * k

    def linear_hook(mod, inp, out):
        nonlocal hooks_flops
        called.add(names[mod])
        x = inp[0]
        hooks_flops += 2 * (x.numel() // x.shape[-1]) * mod.in_features * mod.out_features

    def conv1d_hook(mod, inp, out):  # HF Conv1D: addmm(bias, x.view(-1, nx), weight) -> Gemm
        nonlocal hooks_flops
        called.add(names[mod])
        x = inp[0]
        hooks_flops += 2 * (x.numel() // x.shape[-1]) * mod.weight.shape[0] * mod.weight.shape[1]

    for name, mod in model.named_modules():
        if isinstance(mod, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)):
            handles.append(mod.register_forward_hook(conv_hook))
        elif isinstance(mod, torch.nn.Linear):
            handles.append(mod.register_forward_hook(linear_hook))
        elif hf_conv1d is not None and isinstance(mod, hf_conv1d):
            handles.append(mod.register_forward_hook(conv1d_hook))
    counter = FlopCounterMode(display=False)
    biases = BiasAdds()
    # nn.MultiheadAttention's inference fast path (one fused kernel) is invisible to the flop counter;
    # training never takes it.
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad(), counter, biases:
            model(*example)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    for h in handles:
        h.remove()
    # The flop counter sees every convolution and matrix product; the hooks only the layers. They agree for
    # models without attention products.
    assert counter.get_total_flops() >= hooks_flops, (counter.get_total_flops(), hooks_flops)
    return {
        "conv_linear_flops_hooks": hooks_flops,
        "conv_matmul_flops_counter": counter.get_total_flops(),
        "conv_bias_flops": biases.conv,
        "gemm_bias_flops": biases.gemm,
        "conv_linear_paths": sorted(called),
    }


def export(model, name, example, input_names, dynamic, out_dir, script=False):
    model.eval()
    with torch.no_grad():
        traced = torch.jit.trace(model, example, strict=False)
    traced.save(os.path.join(out_dir, name + ".pt"))
    files = {"torchscript": name + ".pt", "onnx": name + ".onnx"}
    if script:
        torch.jit.script(model).save(os.path.join(out_dir, name + "_scripted.pt"))
        files["torchscript_scripted"] = name + "_scripted.pt"
    # Training mode keeps BatchNorm separate from Conv (eval export folds it) and keeps parameter names.
    model.train()
    if isinstance(model, transformers.PreTrainedModel):
        # The legacy exporter fills every forward() default positionally, which HF's keyword-handling
        # decorators reject; a one-argument forward on the same module keeps names and module paths.
        original = model.forward
        model.forward = lambda input_ids: original(input_ids=input_ids)
    torch.onnx.export(model, example, os.path.join(out_dir, name + ".onnx"), dynamo=False, opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=input_names, dynamic_axes=dynamic)
    model.eval()
    return files


def vision_models():
    tv = torchvision.models
    # (name, constructor, image size): small images where the architecture allows; VGG's adaptive pooling to
    # 7x7 needs 224 (ONNX cannot express it otherwise), Inception needs 75+.
    return [
        ("resnet18", lambda: tv.resnet18(weights=None), 64, True),
        ("resnet50", lambda: tv.resnet50(weights=None), 64, False),
        ("mobilenet_v2", lambda: tv.mobilenet_v2(weights=None), 64, False),
        ("vgg11", lambda: tv.vgg11(weights=None), 224, False),
        ("densenet121", lambda: tv.densenet121(weights=None), 64, False),
        ("efficientnet_b0", lambda: tv.efficientnet_b0(weights=None), 64, False),
        ("squeezenet1_0", lambda: tv.squeezenet1_0(weights=None), 64, False),
        ("inception_v3", lambda: tv.inception_v3(weights=None, aux_logits=False, init_weights=False), 96, False),
    ]


def text_models():
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel
    import transformers.masking_utils as masking
    # Packed-sequence detection (torch.diff over position ids) has no ONNX opset-17 form and is irrelevant to
    # unpadded single sequences; without it the causal mask is built the ordinary way.
    masking.find_packed_sequence_indices = lambda position_ids: None
    small_bert = BertConfig(num_hidden_layers=2, hidden_size=128, num_attention_heads=2, intermediate_size=512,
                            attn_implementation="eager", torchscript=True)
    small_gpt2 = GPT2Config(n_layer=2, n_embd=128, n_head=2, n_positions=256, attn_implementation="eager",
                            torchscript=True, use_cache=False)
    return [
        ("bert_small", lambda: BertModel(small_bert)),
        ("gpt2_small_lm", lambda: GPT2LMHeadModel(small_gpt2)),
    ]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    digest = script_hash()
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        if old.get("generator_hash") == digest and all(os.path.exists(os.path.join(out_dir, p))
                                                       for p in old.get("extras", [])) and all(
                os.path.exists(os.path.join(out_dir, p)) for m in old["models"].values() for p in m["files"].values()):
            print(f"up to date: {manifest_path}")
            return 0
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    models = {}
    start = time.time()
    for name, build, size, script in vision_models():
        t = time.time()
        model = build().eval()
        counts = independent_counts(model, (torch.randn(BATCH, 3, size, size),))
        files = export(model, name, (torch.randn(BATCH, 3, size, size),), ["input"], {"input": {0: "batch"}}, out_dir,
                       script=script)
        models[name] = {"kind": "vision", "files": files, "input": [3, size, size], "batch": BATCH,
                        "parameters": sum(p.numel() for p in model.parameters()),
                        "torchscript_options": f"?input=3x{size}x{size}", "cli_args": ["--batch", str(BATCH)],
                        **counts}
        print(f"{name}: {time.time() - t:.1f} s", flush=True)
    for name, build in text_models():
        t = time.time()
        model = build().eval()
        counts = independent_counts(model, (torch.randint(0, 100, (BATCH, SEQ)),))
        files = export(model, name, (torch.randint(0, 100, (BATCH, 8)),), ["input_ids"],
                       {"input_ids": {0: "batch", 1: "seq"}}, out_dir)
        models[name] = {"kind": "text", "files": files, "input": ["seq"], "batch": BATCH, "seq": SEQ,
                        "parameters": sum(p.numel() for p in model.parameters()),
                        "torchscript_options": f"?seq={SEQ}", "cli_args": ["--batch", str(BATCH), "--seq", str(SEQ)],
                        **counts}
        print(f"{name}: {time.time() - t:.1f} s", flush=True)
    # An operator TrainScope does not map (aten::flip), for the importer's error message.
    class Flipper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            return torch.flip(self.fc(x), [1])

    torch.jit.trace(Flipper().eval(), (torch.randn(2, 8),)).save(os.path.join(out_dir, "unsupported_flip.pt"))
    with open(manifest_path, "w") as f:
        json.dump({"generator_hash": digest, "torch": torch.__version__, "models": models,
                   "extras": ["unsupported_flip.pt"]}, f, indent=1)
    print(f"wrote {len(models)} models to {out_dir} in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
