"""Trains the U-Net of examples/segmentation.cc from PyTorch, every tensor
split over a process grid: a torch.nn.Module built from distconv.nn
layers, torch.optim.SGD, a loop over batches.

    x (N, C, S, S) -> [conv3x3-BN-ReLU] x2 (W) --------------- skip ----+
                   -> max pool 2x2 -> [conv3x3-BN-ReLU] x2 (2W)         |
                   -> transposed conv 2x2 stride 2 (W) -> concat <------+
                   -> conv3x3-BN-ReLU (W) -> conv1x1 (K classes)
                   -> per-pixel cross-entropy against labels

    mpirun -np P /usr/bin/python3 examples/torch_segmentation.py \\
        --grid=1x1xPx1 [--size=256] [--channels=18] [--samples=2]
        [--width=16] [--classes=3] [--steps=10] [--lr=0.05]
        [--momentum=0.9] [--dtype=float32|float64]
    /usr/bin/python3 examples/torch_segmentation.py --reference --threads=T

--reference trains the same network from torch.nn on one process (T
threads) for comparison. Rank 0 prints each step's loss and time, then
the images/s of the steps after the first. The data is synthetic (as in
segmentation.cc): plane waves per channel, each pixel labelled by the
channels' mean. Needs PYTHONPATH to reach the distconv package (README).
"""
import argparse
import math

import torch

import torch_example
from torch_example import Layers  # noqa: F401 (the examples' namespace)


def conv_bn_relu(L, cin, cout, dtype):
    return [L.Conv2d(cin, cout, 3, padding=1, dtype=dtype),
            L.BatchNorm2d(cout, dtype=dtype), L.ReLU()]


class UNet(torch.nn.Module):

    def __init__(self, L, channels=18, width=16, classes=3,
                 dtype=torch.float32):
        super().__init__()
        self.L = L
        w = width
        self.enc1 = torch.nn.Sequential(*conv_bn_relu(L, channels, w, dtype),
                                        *conv_bn_relu(L, w, w, dtype))
        self.pool = L.MaxPool2d(2)
        self.enc2 = torch.nn.Sequential(*conv_bn_relu(L, w, 2 * w, dtype),
                                        *conv_bn_relu(L, 2 * w, 2 * w, dtype))
        self.up = L.ConvTranspose2d(2 * w, w, 2, stride=2, dtype=dtype)
        self.dec = torch.nn.Sequential(*conv_bn_relu(L, 2 * w, w, dtype))
        self.head = L.Conv2d(w, classes, 1, dtype=dtype)

    def forward(self, x):
        skip = self.enc1(x)
        y = self.up(self.enc2(self.pool(skip)))
        return self.head(self.dec(self.L.cat([y, skip])))


def synthetic_batch(samples, channels, size, classes, dtype):
    """Plane waves per (sample, channel); a pixel's label is the class of
    the channels' mean (thresholds spread over about one standard
    deviation)."""
    n = torch.arange(samples, dtype=torch.float64).view(-1, 1, 1, 1)
    c = torch.arange(channels, dtype=torch.float64).view(1, -1, 1, 1)
    i = torch.arange(size, dtype=torch.float64).view(1, 1, -1, 1)
    j = torch.arange(size, dtype=torch.float64).view(1, 1, 1, -1)
    kh = 1 + (c + 2 * n) % 3
    kw = 1 + (2 * c + n) % 4
    x = torch.sin(2 * math.pi * (kh * i / size + kw * j / size)
                  + 0.7 * c + 1.3 * n)
    labels = torch_example.labels_of_mean(x, classes)
    return x.to(dtype), labels


def train(net, L, x, labels, steps, lr, momentum, report=print):
    """SGD with momentum on one batch; returns the losses and the seconds
    of each step."""
    return torch_example.train(
        net, L, x, labels, steps, lr, report,
        lambda p: torch.optim.SGD(p, lr=lr, momentum=momentum))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--grid", default=None, help="NxCxHxW, product = ranks")
    p.add_argument("--reference", action="store_true",
                   help="torch.nn on one process instead")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--channels", type=int, default=18)
    p.add_argument("--samples", type=int, default=2)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--dtype", choices=["float32", "float64"],
                   default="float32")
    a = p.parse_args()
    dtype = getattr(torch, a.dtype)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x, labels = synthetic_batch(a.samples, a.channels, a.size, a.classes,
                                dtype)
    if a.reference:
        L, rank = Layers(), 0
        what = "torch.nn, 1 process, %d threads" % a.threads
    else:
        from mpi4py import MPI
        import distconv
        comm = MPI.COMM_WORLD
        shape = tuple(int(v) for v in (a.grid or "1x1x%dx1" % comm.size)
                      .split("x"))
        grid = distconv.ProcessGrid(comm, shape)
        L, rank = Layers(grid), comm.rank
        x = distconv.shard(grid, x)
        labels = distconv.shard(grid, labels.unsqueeze(1).double()) \
            .squeeze(1).long()
        what = "distconv.nn, grid %s, %d ranks" % (a.grid, comm.size)
    net = UNet(L, a.channels, a.width, a.classes, dtype)
    report = print if rank == 0 else (lambda *_: None)
    report("U-Net %dx%d, %d channels, width %d, batch %d, %s, %s" % (
        a.size, a.size, a.channels, a.width, a.samples, a.dtype, what))
    _, times = train(net, L, x, labels, a.steps, a.lr, a.momentum, report)
    if len(times) > 1:
        report("images/s %.3f (steps 1-%d, %.3f s per step)" % (
            a.samples * (len(times) - 1) / sum(times[1:]), len(times) - 1,
            sum(times[1:]) / (len(times) - 1)))


if __name__ == "__main__":
    main()
