#!/usr/bin/python3
"""The CosmoFlow-style network of examples/cosmoflow.cc in torch.nn, on one
process, trained the same way: the reference the C++ example is measured
against (perf/step_vs_torch.py runs both side by side).

    x (N, 4, S, S, S) -> L x [conv3x3x3 (no bias) - BN - ReLU - max pool 2]
      (widths W, 2W, ..., 2^(L-1) W) -> dense (a convolution over the
      whole S/2^L volume, H outputs, bias) - ReLU -> dense (4, bias)
      -> mean squared error against each sample's 4 parameters

    perf/torch_cosmoflow.py [--samples=4] [--size=32] [--stacks=3]
        [--width=16] [--hidden=64] [--steps=10] [--lr=0.0005]
        [--momentum=0.5] [--threads=T]

The data is the example's synthetic volumes (examples/cosmoflow_net.h:
plane waves weighted by each sample's parameters); the initial weights are
PyTorch's, so the loss curve is the same kind of curve, not the same
numbers. Prints each step's loss and time, then the mean over the steps
after the first as the example does ("mean of steps 2-K: ... ms/step")
and a JSON line {"ms_per_step": ..., "images_per_s": ...}.
"""
import argparse
import json
import math
import time

import torch

CHANNELS = TARGETS = 4


def target(n, k):
    return math.sin(1.7 * n + 2.3 * k + 0.5)


def data(samples, size):
    """The example's input (N, 4, S, S, S) and targets (N, 4, 1, 1, 1)."""
    two_pi = 2 * math.pi
    i = torch.arange(size, dtype=torch.float64)
    d, h, w = torch.meshgrid(i, i, i, indexing="ij")
    x = torch.empty(samples, CHANNELS, size, size, size, dtype=torch.float64)
    for n in range(samples):
        for c in range(CHANNELS):
            v = 0.3 * torch.sin(two_pi * (d + 2 * w) / size + 0.9 * n)
            for k in range(TARGETS):
                fd, fh, fw = 1 + (k + c) % 3, 1 + (2 * k + c) % 2, \
                    (k + 2 * c) % 3
                v = v + 0.5 * target(n, k) * torch.sin(
                    two_pi * (fd * d + fh * h + fw * w) / size + 0.4 * k
                    + 0.3 * c)
            x[n, c] = v
    t = torch.tensor([[target(n, k) for k in range(TARGETS)]
                      for n in range(samples)], dtype=torch.float64)
    return x.float(), t.float().view(samples, TARGETS, 1, 1, 1)


def network(size, stacks, width, hidden):
    layers, cin = [], CHANNELS
    for l in range(stacks):
        cout = width << l
        layers += [torch.nn.Conv3d(cin, cout, 3, padding=1, bias=False),
                   torch.nn.BatchNorm3d(cout), torch.nn.ReLU(),
                   torch.nn.MaxPool3d(2)]
        cin = cout
    extent = size >> stacks
    layers += [torch.nn.Conv3d(cin, hidden, extent), torch.nn.ReLU(),
               torch.nn.Conv3d(hidden, TARGETS, 1)]
    return torch.nn.Sequential(*layers)


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("--samples", type=int, default=4)
    a.add_argument("--size", type=int, default=32)
    a.add_argument("--stacks", type=int, default=3)
    a.add_argument("--width", type=int, default=16)
    a.add_argument("--hidden", type=int, default=64)
    a.add_argument("--steps", type=int, default=10)
    a.add_argument("--lr", type=float, default=0.0005)
    a.add_argument("--momentum", type=float, default=0.5)
    a.add_argument("--threads", type=int, default=1)
    args = a.parse_args()
    if args.size % (1 << args.stacks) or args.steps < 2:
        a.error("--size must be a multiple of 2^stacks and --steps at "
                "least 2")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x, t = data(args.samples, args.size)
    x = x.contiguous(memory_format=torch.channels_last_3d)
    net = network(args.size, args.stacks, args.width, args.hidden).to(
        memory_format=torch.channels_last_3d)
    sgd = torch.optim.SGD(net.parameters(), lr=args.lr,
                          momentum=args.momentum)
    times = []
    for s in range(1, args.steps + 1):
        start = time.perf_counter()
        sgd.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), t)
        loss.backward()
        sgd.step()
        times.append(time.perf_counter() - start)
        print("step %3d  loss %.6f  time %8.1f ms" % (s, loss.item(),
                                                      1e3 * times[-1]))
    ms = 1e3 * sum(times[1:]) / len(times[1:])
    print("mean of steps 2-%d: %.1f ms/step, %.2f images/s" % (
        args.steps, ms, 1e3 * args.samples / ms))
    print(json.dumps({"ms_per_step": ms,
                      "images_per_s": 1e3 * args.samples / ms}))


if __name__ == "__main__":
    main()
