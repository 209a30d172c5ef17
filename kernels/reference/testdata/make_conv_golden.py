#!/usr/bin/python3
"""Writes conv_golden.txt: convolutions computed by PyTorch, an implementation
independent of ours, for kernels/reference/conv_golden_test.cc.

    apt-get install python3-torch     # PyTorch 1.13 for /usr/bin/python3
    /usr/bin/python3 kernels/reference/testdata/make_conv_golden.py

Inputs are deterministic functions of the element index (the test computes
the same ones): src[i] = sin(0.37 i), weights[i] = cos(0.91 i),
bias[f] = 0.1 f, diff_dst[i] = sin(1.3 i + 0.5), in float64. Asymmetric
padding is applied with F.pad, since conv2d/conv3d pad symmetrically.

File format, one case after another:
    case NAME
    src N C spatial...          weights F C/g k...    (shapes)
    groups G stride ... dilation ... pad_lower ... pad_upper ...
    dst v v v ...   dx ...   dw ...   db ...         (one line each)
"""
import math
import os

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

CASES = [
    # name, src shape, weights shape, groups, stride, dilation, pad lo, pad hi
    ("2d_groups_stride_dilation", [2, 4, 9, 8], [6, 2, 3, 2], 2,
     [2, 2], [1, 2], [0, 1], [2, 0]),
    ("2d_same_3x3", [1, 3, 7, 6], [5, 3, 3, 3], 1,
     [1, 1], [1, 1], [1, 1], [1, 1]),
    ("2d_stem_7x7_stride2", [1, 2, 15, 13], [4, 2, 7, 7], 1,
     [2, 2], [1, 1], [3, 3], [3, 3]),
    ("2d_even_kernel", [2, 2, 6, 7], [2, 1, 2, 4], 2,
     [1, 3], [2, 1], [0, 2], [1, 1]),
    ("3d_lopsided", [2, 4, 6, 7, 5], [6, 2, 2, 3, 1], 2,
     [2, 2, 1], [1, 1, 2], [0, 1, 2], [2, 0, 1]),
]


def seq(n, f):
    return torch.tensor([f(i) for i in range(n)])


def fmt(name, t):
    return name + " " + " ".join(repr(float(v)) for v in t.flatten()) + "\n"


def main():
    out = []
    for name, xs, ws, groups, stride, dil, lo, hi in CASES:
        k = len(xs) - 2
        src = seq(math.prod(xs), lambda i: math.sin(0.37 * i)).reshape(xs)
        w = seq(math.prod(ws), lambda i: math.cos(0.91 * i)).reshape(ws)
        b = seq(ws[0], lambda i: 0.1 * i)
        for t in (src, w, b):
            t.requires_grad_()
        pad = []
        for d in reversed(range(k)):
            pad += [lo[d], hi[d]]
        conv = F.conv2d if k == 2 else F.conv3d
        dst = conv(F.pad(src, pad), w, b, stride=stride, dilation=dil,
                   groups=groups)
        dy = seq(dst.numel(), lambda i: math.sin(1.3 * i + 0.5))
        dst.backward(dy.reshape(dst.shape))
        out.append(f"case {name}\n")
        out.append("src " + " ".join(map(str, xs)) + "\n")
        out.append("weights " + " ".join(map(str, ws)) + "\n")
        out.append(f"groups {groups}\n")
        for key, v in (("stride", stride), ("dilation", dil),
                       ("pad_lower", lo), ("pad_upper", hi)):
            out.append(key + " " + " ".join(map(str, v)) + "\n")
        out.append(fmt("dst", dst.detach()))
        out.append(fmt("dx", src.grad))
        out.append(fmt("dw", w.grad))
        out.append(fmt("db", b.grad))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "conv_golden.txt")
    with open(path, "w") as f:
        f.writelines(out)


if __name__ == "__main__":
    main()
