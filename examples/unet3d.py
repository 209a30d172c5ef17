"""A 3D U-Net as scientists train on volumes (batches of one or two), with
group (or instance) normalisation instead of batch normalisation and
trilinear upsampling, written once for torch.nn and trained from
distconv.nn by changing the namespace: two levels of conv3x3x3-norm-ReLU
pairs, max pooling, trilinear upsampling and a convolution back up, the
skip connection concatenated, a 1x1x1 head, per-voxel cross-entropy.

    mpirun -np 4 /usr/bin/python3 examples/unet3d.py --grid=1x1x2x2x1
    /usr/bin/python3 examples/unet3d.py --reference --threads=4

(examples/unet3d.md; examples/torch_examples.sh builds and runs both.)
"""
import math

import torch

from torch_example import labels_of_mean, parser, run


def block(L, cin, cout, norm, dtype):
    """Two conv3x3x3-norm-ReLU; norm 'group' (4 channels a group) or
    'instance'."""
    def normalise(c):
        if norm == "instance":
            return L.InstanceNorm3d(c, affine=True, dtype=dtype)
        return L.GroupNorm(max(1, c // 4), c, dtype=dtype)
    return torch.nn.Sequential(
        L.Conv3d(cin, cout, 3, padding=1, bias=False, dtype=dtype),
        normalise(cout), L.ReLU(),
        L.Conv3d(cout, cout, 3, padding=1, bias=False, dtype=dtype),
        normalise(cout), L.ReLU())


class UNet3d(torch.nn.Module):

    def __init__(self, L, channels, width, classes, norm="group",
                 dtype=torch.float32):
        super().__init__()
        self.L = L
        w = width
        self.enc = block(L, channels, w, norm, dtype)
        self.pool = L.MaxPool3d(2)
        self.bottom = block(L, w, 2 * w, norm, dtype)
        self.up = torch.nn.Sequential(
            L.Upsample(scale_factor=2, mode="trilinear", align_corners=False),
            L.Conv3d(2 * w, w, 3, padding=1, dtype=dtype))
        self.dec = block(L, 2 * w, w, norm, dtype)
        self.head = L.Conv3d(w, classes, 1, dtype=dtype)

    def forward(self, x):
        skip = self.enc(x)
        y = self.up(self.bottom(self.pool(skip)))
        return self.head(self.dec(self.L.cat([skip, y])))


def synthetic_batch(samples, channels, size, classes, dtype):
    """Cosmology-like volumes: sums of plane waves per channel; a voxel's
    class from the channels' mean."""
    n = torch.arange(samples, dtype=torch.float64).view(-1, 1, 1, 1, 1)
    c = torch.arange(channels, dtype=torch.float64).view(1, -1, 1, 1, 1)
    axes = [torch.arange(e, dtype=torch.float64) / e for e in size]
    d, h, w = (axes[0].view(1, 1, -1, 1, 1), axes[1].view(1, 1, 1, -1, 1),
               axes[2].view(1, 1, 1, 1, -1))
    x = torch.sin(2 * math.pi * ((1 + (c + n) % 2) * d + (1 + c % 3) * h +
                                 (1 + n % 2) * w) + c)
    labels = labels_of_mean(x, classes)
    return x.to(dtype), labels


def main():
    p = parser(__doc__.split("\n")[0], {"lr": 1e-3, "samples": 1})
    p.add_argument("--size", type=int, nargs=3, default=[48, 48, 48],
                   metavar=("D", "H", "W"), help="even")
    p.add_argument("--channels", type=int, default=4)
    p.add_argument("--width", type=int, default=8)
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--norm", choices=["group", "instance"], default="group")
    a = p.parse_args()
    run("3D U-Net (%s norm)" % a.norm, lambda L, dtype: UNet3d(
        L, a.channels, a.width, a.classes, a.norm, dtype),
        lambda dtype: synthetic_batch(a.samples, a.channels, a.size,
                                      a.classes, dtype), a)


if __name__ == "__main__":
    main()
