"""A DeepLabv3+-like segmentation network (DeepCAM's architecture at small
scale) written once for torch.nn and trained from distconv.nn by changing
the namespace: a strided backbone, an ASPP block (a 1x1 branch, atrous 3x3
branches, and the image-level branch: global average pooling, a 1x1
convolution, bilinear upsampling back to the feature size), a decoder
joining low-level features, bilinear upsampling to the input size, and
per-pixel cross-entropy.

    mpirun -np 4 /usr/bin/python3 examples/deeplab.py --grid=1x1x2x2
    /usr/bin/python3 examples/deeplab.py --reference --threads=4

(examples/deeplab.md; examples/torch_examples.sh builds and runs both.)
"""
import math

import torch

from torch_example import labels_of_mean, parser, run


def conv_bn_relu(L, cin, cout, k, dtype, stride=1, dilation=1):
    return torch.nn.Sequential(
        L.Conv2d(cin, cout, k, stride=stride, padding=dilation * (k // 2),
                 dilation=dilation, bias=False, dtype=dtype),
        L.BatchNorm2d(cout, dtype=dtype), L.ReLU())


class ASPP(torch.nn.Module):
    """Atrous spatial pyramid pooling: parallel branches at several
    dilations and an image-level branch, concatenated and projected."""

    def __init__(self, L, cin, cout, dilations, feature_size, dropout,
                 dtype):
        super().__init__()
        self.L, self.feature_size = L, tuple(feature_size)
        self.branches = torch.nn.ModuleList(
            [conv_bn_relu(L, cin, cout, 1, dtype)] +
            [conv_bn_relu(L, cin, cout, 3, dtype, dilation=d)
             for d in dilations])
        self.image = torch.nn.Sequential(L.AdaptiveAvgPool2d(1),
                                         conv_bn_relu(L, cin, cout, 1, dtype))
        self.project = torch.nn.Sequential(
            conv_bn_relu(L, cout * (len(dilations) + 2), cout, 1, dtype),
            L.Dropout(dropout))

    def forward(self, x):
        outs = [b(x) for b in self.branches]
        outs.append(self.L.interpolate(self.image(x), size=self.feature_size,
                                       mode="bilinear", align_corners=False))
        return self.project(self.L.cat(outs))


class DeepLab(torch.nn.Module):
    """Input (N, channels, H, W) with H, W multiples of 4; output (N,
    classes, H, W)."""

    def __init__(self, L, channels, width, classes, size, dropout=0.1,
                 dtype=torch.float32):
        super().__init__()
        self.L, self.size = L, tuple(size)
        w = width
        self.stem = conv_bn_relu(L, channels, w, 3, dtype, stride=2)
        self.deep = torch.nn.Sequential(
            conv_bn_relu(L, w, 2 * w, 3, dtype, stride=2),
            conv_bn_relu(L, 2 * w, 2 * w, 3, dtype))
        self.aspp = ASPP(L, 2 * w, w, (2, 3),
                         tuple(s // 4 for s in self.size), dropout, dtype)
        self.low = conv_bn_relu(L, w, w // 2, 1, dtype)
        self.decode = torch.nn.Sequential(
            conv_bn_relu(L, w + w // 2, w, 3, dtype),
            L.Dropout(dropout), L.Conv2d(w, classes, 1, dtype=dtype))

    def forward(self, x):
        low = self.stem(x)                                  # H/2
        y = self.aspp(self.deep(low))                       # H/4
        y = self.L.interpolate(y, size=tuple(s // 2 for s in self.size),
                               mode="bilinear", align_corners=False)
        y = self.decode(self.L.cat([y, self.low(low)]))     # H/2
        return self.L.interpolate(y, size=self.size, mode="bilinear",
                                  align_corners=False)


def synthetic_batch(samples, channels, size, classes, dtype):
    """Climate-like fields: smooth plane waves per channel; a pixel's class
    from the channels' mean, as examples/torch_segmentation.py."""
    n = torch.arange(samples, dtype=torch.float64).view(-1, 1, 1, 1)
    c = torch.arange(channels, dtype=torch.float64).view(1, -1, 1, 1)
    i = torch.arange(size[0], dtype=torch.float64).view(1, 1, -1, 1)
    j = torch.arange(size[1], dtype=torch.float64).view(1, 1, 1, -1)
    x = torch.sin(2 * math.pi * ((1 + (c + n) % 3) * i / size[0] +
                                 (1 + (2 * c + n) % 4) * j / size[1]) + c + n)
    labels = labels_of_mean(x, classes)
    return x.to(dtype), labels


def main():
    p = parser(__doc__.split("\n")[0], {"lr": 1e-3})
    p.add_argument("--size", type=int, nargs=2, default=[96, 144],
                   metavar=("H", "W"), help="multiples of 4")
    p.add_argument("--channels", type=int, default=16)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--dropout", type=float, default=0.1)
    a = p.parse_args()
    run("DeepLabv3+-like", lambda L, dtype: DeepLab(
        L, a.channels, a.width, a.classes, a.size, a.dropout, dtype),
        lambda dtype: synthetic_batch(a.samples, a.channels, a.size,
                                      a.classes, dtype), a)


if __name__ == "__main__":
    main()
