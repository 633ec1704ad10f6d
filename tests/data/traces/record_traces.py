#!/usr/bin/env python3
"""Records the small PyTorch profiler (Kineto) traces kept in tests/data/traces, on the CPU.

    ~/.cache/trainscope/venv/bin/python tests/data/traces/record_traces.py [OUT_DIR]

A small CNN and a small transformer encoder, trained for a few steps under torch.profiler with a
schedule (wait 1, warmup 1, active 3: three ProfilerStep#N iterations), with and without
record_shapes and with_stack. Each trace is written gzip-compressed. Seeds are fixed, but the
timings are those of the machine that ran it.
"""
import gzip
import os
import shutil
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class SmallTransformer(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def batches(kind):
    g = torch.Generator().manual_seed(0)
    if kind == "cnn":
        return lambda: (torch.randn(4, 3, 16, 16, generator=g), torch.randint(0, 10, (4,), generator=g))
    return lambda: (torch.randint(0, 100, (2, 8), generator=g), torch.randint(0, 100, (2 * 8,), generator=g))


def record(kind, shapes, stack, name):
    torch.manual_seed(0)
    model = SmallCnn() if kind == "cnn" else SmallTransformer()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    next_batch = batches(kind)
    path = os.path.join(OUT, name + ".json")
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=3),
                 record_shapes=shapes, with_stack=stack, with_modules=stack,
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(5):
            x, y = next_batch()
            with record_function("forward"):
                out = model(x)
                loss = loss_fn(out.reshape(-1, out.shape[-1]), y)
            with record_function("backward"):
                opt.zero_grad()
                loss.backward()
            with record_function("optimizer"):
                opt.step()
            prof.step()
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
    print(path + ".gz", os.path.getsize(path + ".gz"))


if __name__ == "__main__":
    torch.set_num_threads(1)
    record("cnn", shapes=True, stack=False, name="cpu_cnn_shapes")
    record("cnn", shapes=False, stack=True, name="cpu_cnn_stack")
    record("transformer", shapes=True, stack=True, name="cpu_transformer_shapes_stack")
    record("transformer", shapes=False, stack=False, name="cpu_transformer_plain")
