#!/usr/bin/env python3
"""Checks TrainScope's peak memory against PyTorch's own allocations in whole training iterations.

    check_peak_memory.py --cli CLI --out DIR [--tolerance PERCENT] [--trace-dir DIR]

real_models.saved_activations checks one category (what autograd saves); this checks the whole peak:
weights, gradients created and freed as backward and zero_grad run, the optimizer's states and step
temporaries, gradient accumulation and activation checkpointing, at the moment they all meet. For a
transformers model of each family (random weights, written as config.json), three training iterations
run on the CPU under torch.profiler with profile_memory, which records every allocation and free of
PyTorch's CPU allocator with its pointer and size. The sum of the live bytes at its highest, plus the
weights allocated before, is the measured peak allocated; `trainscope-cli predict CONFIG --json` must
give the same in memory_bytes.peak_allocated (less the cuBLAS workspaces, which the CPU has not) within
--tolerance (default 5%).

The same allocation trace is then replayed through `CachingAllocatorModel`, a model of c10's CUDA
caching allocator (PyTorch's defaults: 512-byte rounding; a small pool of 2 MiB segments for
requests up to 1 MiB, 20 MiB segments for requests up to 10 MiB, larger ones rounded to 2 MiB; best
fit; a free block split when the rest is at least 512 B (small) or over 1 MiB (large); neighbours
merged on free; segments kept). Its peak of segments held is what the GPU would reserve for the same
allocations, and peak_allocated + fragmentation is printed beside it; the memory model's
fragmentation is an estimate that must not be below the replay (it may be above: it is the planning
side's margin).

What is CUDA-specific is kept out of both sides: dropout is off (the CPU keeps a float mask of its
input's size where CUDA keeps one byte per element) and the attention is transformers' sdpa, whose CPU
flash kernel saves what CUDA's does (the output and the log-sum-exp), except Gemma 2's, eager as
transformers runs it by default (sdpa cannot soft-cap). The optimizer is torch.optim's
AdamW with its defaults (foreach on CUDA; on the CPU foreach is off by default, so it is asked for,
which keeps the parameter-sized temporary TrainScope predicts) or SGD with momentum. Exits 77 (ctest:
skipped) without torch and transformers.
"""
import bisect
import os
import sys

from real_models_common import memory_check_args, predicted_memory, torch_and_transformers

BATCH = 2
ITERATIONS = 3  # the first creates the optimizer's states; the later ones have them from the start
CUBLAS_A100 = (4096 * 2 + 16 * 8) * 1024 + (1 << 20)  # PyTorch's cuBLAS + cuBLASLt workspaces before CC 9.0

torch, transformers = torch_and_transformers()
from torch._C._profiler import _EventType  # noqa: E402: after the check that torch imports
from torch.profiler import ProfilerActivity, profile  # noqa: E402

T = transformers
# Large enough that the blocks' tensors (not the allocator's 512-byte rounding of small ones) make the
# peak, small enough for a 2-core CPU: 4 layers of width 256, a 4096-word vocabulary, no dropout.
SIZE = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=704, vocab_size=4096,
            max_position_embeddings=512)
NO_DROPOUT = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)

# A Llama of 1024 width with a 32,000-word vocabulary at 512 tokens: tensors over 10 MiB, which the
# caching allocator rounds to 2 MiB, as in the models that fill a GPU. The small models' 1-10 MiB
# tensors share 20 MiB segments, whose holes the fragmentation estimate does not follow (printed, not
# held to the tolerance).
LARGE = dict(hidden_size=1024, num_hidden_layers=2, num_attention_heads=16, num_key_value_heads=4,
             intermediate_size=2816, vocab_size=32000, max_position_embeddings=1024)

# (family, config, architecture, set-up, sequence): the set-up is a name of SETUPS; sequence 512 marks
# the large case, whose reserved bytes are checked too.
CASES = [
    ("llama", T.LlamaConfig(**SIZE, num_key_value_heads=2), "LlamaForCausalLM", "adamw", 256),
    ("llama", T.LlamaConfig(**SIZE, num_key_value_heads=2), "LlamaForCausalLM", "accumulation", 256),
    ("llama", T.LlamaConfig(**SIZE, num_key_value_heads=2), "LlamaForCausalLM", "checkpointing", 256),
    ("llama", T.LlamaConfig(**SIZE, num_key_value_heads=2), "LlamaForCausalLM", "sgd", 256),
    ("llama", T.LlamaConfig(**SIZE, num_key_value_heads=2), "LlamaForCausalLM", "bf16", 256),
    ("qwen2", T.Qwen2Config(**SIZE, num_key_value_heads=2), "Qwen2ForCausalLM", "adamw", 256),
    ("gemma", T.GemmaConfig(**SIZE, num_key_value_heads=1, head_dim=64), "GemmaForCausalLM", "adamw", 256),
    ("phi3", T.Phi3Config(**SIZE, num_key_value_heads=2, pad_token_id=0), "Phi3ForCausalLM", "adamw", 256),
    ("gpt_neox", T.GPTNeoXConfig(**SIZE), "GPTNeoXForCausalLM", "adamw", 256),
    ("gpt2", T.GPT2Config(n_embd=256, n_layer=4, n_head=4, vocab_size=4096, n_positions=512, resid_pdrop=0.0,
                          embd_pdrop=0.0, attn_pdrop=0.0), "GPT2LMHeadModel", "adamw", 256),
    ("bert", T.BertConfig(**SIZE, **NO_DROPOUT), "BertForMaskedLM", "adamw", 256),
    # Gemma 2 in its default eager attention (soft caps; windows of 128 in layers 0 and 2), in fp32 and as a bf16
    # model, and Gemma 3 in sdpa with its local layers' windows as masks at 256 tokens.
    ("gemma2", T.Gemma2Config(**SIZE, num_key_value_heads=2, head_dim=64, sliding_window=128), "Gemma2ForCausalLM",
     "adamw", 256),
    ("gemma2", T.Gemma2Config(**SIZE, num_key_value_heads=2, head_dim=64, sliding_window=128), "Gemma2ForCausalLM",
     "bf16", 256),
    ("gemma3_text", T.Gemma3TextConfig(**SIZE, num_key_value_heads=2, head_dim=64, sliding_window=128),
     "Gemma3ForCausalLM", "adamw", 256),
    # GPT-OSS in its eager attention (sinks; windows of 128 in layers 0 and 2) with 4 experts, 2 a token, as a bf16
    # model.
    ("gpt_oss", T.GptOssConfig(**SIZE, num_key_value_heads=2, head_dim=64, sliding_window=128, num_local_experts=4,
                               num_experts_per_tok=2), "GptOssForCausalLM", "bf16", 256),
    # BERT's masked LM as a bf16 model with a 32,000-word vocabulary: its CrossEntropyLoss takes the bf16 logits as
    # they are, and the loss's tensors (the saved log-probabilities, the gradients) make the peak, in bf16.
    ("bert", T.BertConfig(**dict(SIZE, vocab_size=32000), **NO_DROPOUT), "BertForMaskedLM", "bf16", 256),
    ("llama", T.LlamaConfig(**LARGE), "LlamaForCausalLM", "adamw", 512),
]

# transformers' attention and TrainScope's backend (None: its default, which follows transformers'); sdpa and
# flash unless named here.
ATTENTION = {"gemma2": ("eager", "math"), "gemma3_text": ("sdpa", None), "gpt_oss": ("eager", None)}

# set-up: (predict's options, accumulation steps, checkpointing, optimizer, the model in bf16)
SETUPS = {
    "adamw": ([], 1, False, "adamw", False),
    "accumulation": (["--accumulation", "2"], 2, False, "adamw", False),
    "checkpointing": (["--checkpointing"], 1, True, "adamw", False),
    "sgd": (["--optimizer", "sgd-momentum"], 1, False, "sgd", False),
    "bf16": (["--precision", "bf16-params", "--no-master-weights"], 1, False, "adamw", True),
}


class CachingAllocatorModel:
    """c10's CUDA caching allocator, reduced to what decides how many bytes it holds (one stream)."""
    MIN_BLOCK, SMALL, SMALL_SEGMENT, LARGE_SEGMENT, MIN_LARGE, ROUND_LARGE = (
        512, 1 << 20, 2 << 20, 20 << 20, 10 << 20, 2 << 20)

    class Block:
        __slots__ = ("addr", "size", "free", "prev", "next", "small")

    def __init__(self):
        self.pools = {True: [], False: []}  # free blocks sorted by (size, address): best fit is a bisection
        self.blocks = {}
        self.reserved = self.peak_reserved = 0
        self.next_segment = 0

    def _insert(self, b):
        bisect.insort(self.pools[b.small], (b.size, b.addr))
        self.blocks[b.addr] = b

    def _remove(self, b):
        pool = self.pools[b.small]
        pool.pop(bisect.bisect_left(pool, (b.size, b.addr)))

    def malloc(self, n):
        size = max(self.MIN_BLOCK, -(-n // self.MIN_BLOCK) * self.MIN_BLOCK)
        small = size <= self.SMALL
        pool = self.pools[small]
        i = bisect.bisect_left(pool, (size, -1))
        if i < len(pool):
            b = self.blocks[pool[i][1]]
            self._remove(b)
        else:
            segment = (self.SMALL_SEGMENT if small else self.LARGE_SEGMENT if size < self.MIN_LARGE
                       else -(-size // self.ROUND_LARGE) * self.ROUND_LARGE)
            b = self.Block()
            b.addr, b.size, b.free, b.prev, b.next, b.small = self.next_segment, segment, True, None, None, small
            self.next_segment += segment + self.ROUND_LARGE  # segments never touch, so never merge
            self.reserved += segment
            self.peak_reserved = max(self.peak_reserved, self.reserved)
        rest = b.size - size
        if rest >= self.MIN_BLOCK if small else rest > self.SMALL:
            r = self.Block()
            r.addr, r.size, r.free, r.small, r.prev, r.next = b.addr + size, rest, True, small, b, b.next
            if b.next:
                b.next.prev = r
            b.next, b.size = r, size
            self._insert(r)
        b.free = False
        return b

    def free(self, b):
        b.free = True
        prev, nxt = b.prev, b.next
        if prev is not None and prev.free:
            self._remove(prev)
            del self.blocks[prev.addr]
            b.addr, b.size, b.prev = prev.addr, prev.size + b.size, prev.prev
            if prev.prev:
                prev.prev.next = b
        if nxt is not None and nxt.free:
            self._remove(nxt)
            del self.blocks[nxt.addr]
            b.size, b.next = b.size + nxt.size, nxt.next
            if nxt.next:
                nxt.next.prev = b
        self._insert(b)


def allocation_trace(prof):
    """(pointer, bytes) of every allocation (bytes > 0) and free (bytes < 0), in time order."""
    events = []

    def walk(node):
        if node.tag == _EventType.Allocation:
            events.append((node.start_time_ns, node.extra_fields.ptr, node.extra_fields.alloc_size))
        for child in node.children:
            walk(child)
    for root in prof.profiler.kineto_results.experimental_event_tree():
        walk(root)
    events.sort()
    return [(p, n) for _, p, n in events]


def measure(family, config, arch, setup, seq):
    """Peak allocated and the caching allocator model's peak reserved (bytes) of ITERATIONS iterations."""
    _, accumulation, checkpointing, optimizer, bf16 = SETUPS[setup]
    torch.manual_seed(0)
    model = getattr(T, arch)._from_config(config, attn_implementation=ATTENTION.get(family, ("sdpa",))[0])
    if bf16:
        model = model.to(torch.bfloat16)
    if checkpointing:
        model.gradient_checkpointing_enable()
    model.train()
    params = list(model.parameters())
    if optimizer == "adamw":
        opt = torch.optim.AdamW(params, lr=1e-4, foreach=True)
    else:
        opt = torch.optim.SGD(params, lr=1e-4, momentum=0.9)
    ids = torch.randint(0, config.vocab_size, (BATCH, seq))
    storages = {}
    for t in list(model.parameters()) + list(model.buffers()) + [ids]:
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True):
        pass  # the profiler's own first-use allocations stay out of the trace below
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for _ in range(ITERATIONS):
            for _ in range(accumulation):
                loss = model(input_ids=ids, labels=ids).loss / accumulation
                loss.backward()
                del loss
            opt.step()
            opt.zero_grad()  # set_to_none=True
    trace = allocation_trace(prof)
    allocator = CachingAllocatorModel()
    for n in storages.values():  # what exists before the first iteration, allocated in that order
        allocator.malloc(n)
    live, allocated, peak = {}, sum(storages.values()), 0
    peak = allocated
    for ptr, n in trace:
        if n > 0:
            live[ptr] = (n, allocator.malloc(n))
            allocated += n
            peak = max(peak, allocated)
        elif n < 0 and ptr in live:
            size, block = live.pop(ptr)
            allocated -= size
            allocator.free(block)
    return peak, allocator.peak_reserved


def predicted(cli, path, setup, seq, backend):
    options = SETUPS[setup][0]
    if "--optimizer" not in options:
        options = options + ["--optimizer", "adamw"]
    if "--precision" not in options:
        options = options + ["--precision", "fp32-strict"]
    spec = f"{path}?seq={seq}" + (f"&attention={backend}" if backend else "")
    m = predicted_memory(cli, spec, ["--batch", str(BATCH)] + options)
    return m["peak_allocated"] - CUBLAS_A100, m["peak_reserved"] - CUBLAS_A100


def main():
    a = memory_check_args(__doc__)
    failures = []
    print(f"batch {BATCH}, {ITERATIONS} iterations; MiB at the peak, measured on PyTorch "
          f"{torch.__version__}'s CPU allocations (transformers {transformers.__version__}) and predicted; reserved: "
          f"the trace replayed through the caching allocator model, and peak_allocated + fragmentation")
    for family, config, arch, setup, seq in CASES:
        config.architectures = [arch]
        path = os.path.join(a.out, f"peak-{family}-{seq}.json")
        config.to_json_file(path)
        peak, reserved = measure(family, config, arch, setup, seq)
        p_peak, p_reserved = predicted(a.cli, path, setup, seq, ATTENTION.get(family, (None, "flash"))[1])
        err = 100 * (p_peak / peak - 1)
        print(f"{family:9} {setup:13} {seq:4} tokens: allocated {peak / 2**20:7.1f} measured {p_peak / 2**20:7.1f} predicted "
              f"({err:+5.1f}%); reserved {reserved / 2**20:7.1f} replayed {p_reserved / 2**20:7.1f} predicted "
              f"({100 * (p_reserved / reserved - 1):+5.1f}%)")
        if abs(err) > a.tolerance:
            failures.append(f"{family} {setup} allocated")
        if seq == 512 and p_reserved < reserved * (1 - a.tolerance / 100):
            failures.append(f"{family} {setup} reserved")
    if failures:
        sys.exit(f"off by more than {a.tolerance}%: {', '.join(failures)}")


if __name__ == "__main__":
    main()
