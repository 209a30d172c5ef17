"""A random differential test of the front end: convolutions, transposed
convolutions and poolings (2D and 3D) with random kernel, stride, padding,
dilation, groups, bias, padding mode, output padding and shapes, on random
grids of this rank count (samples, channels, space; uneven and empty
shards), each against torch.nn in float64: output, input gradient and
parameter gradients to 1e-10.

Every rank draws the same cases from one seed. Cases torch.nn itself
refuses are drawn again; a case the front end refuses fails the test (the
layers here take everything torch.nn takes, but a transposed
convolution's channel split, which is never drawn). A failing case is
printed as the call that builds it.

    DISTCONV_RANDOM_SEED=S DISTCONV_RANDOM_CASES=N mpirun -np P \\
        /usr/bin/python3 python/tests/random_layers_test.py

(defaults: seed 2026, 100 cases; a few hundred take seconds.)
"""
import os
import random
import unittest

import torch

import distconv
from harness import COMM, P, check_module, main

F64 = torch.float64
SEED = int(os.environ.get("DISTCONV_RANDOM_SEED", "2026"))
CASES = int(os.environ.get("DISTCONV_RANDOM_CASES", "100"))


def factorizations(n, slots):
    """Every way of writing n as a product of `slots` factors, in order."""
    if slots == 1:
        return [(n,)]
    out = []
    for f in range(1, n + 1):
        if n % f == 0:
            out += [(f,) + rest for rest in factorizations(n // f, slots - 1)]
    return out


def draw_case(rng):
    """(torch.nn class name, args, kwargs, input shape, grid shape)."""
    dims = rng.choice((2, 3))
    kind = rng.choice(("Conv", "Conv", "ConvTranspose", "MaxPool",
                       "AvgPool"))
    k = tuple(rng.randint(1, 3 if dims == 3 else 4) for _ in range(dims))
    stride = tuple(rng.randint(1, 3) for _ in range(dims))
    dilation = tuple(rng.randint(1, 2) for _ in range(dims))
    spatial = tuple(rng.randint(1, 7 if dims == 3 else 11)
                    for _ in range(dims))
    n = rng.randint(1, 3)
    grid = rng.choice(factorizations(P, dims + 2))
    name = "%s%dd" % (kind, dims)
    if kind in ("Conv", "ConvTranspose"):
        groups = rng.choice((1, 1, 2, 3))
        cin = groups * rng.randint(1, 3)
        cout = groups * rng.randint(1, 3)
        kw = dict(stride=stride, dilation=dilation, groups=groups,
                  bias=rng.random() < 0.7, dtype=F64)
        if kind == "Conv":
            if rng.random() < 0.2 and stride == (1,) * dims:
                kw["padding"] = "same"
            else:
                kw["padding"] = tuple(rng.randint(0, 2) for _ in range(dims))
            if rng.random() < 0.3 and kw["padding"] != "same":
                kw["padding_mode"] = "circular"
        else:
            kw["padding"] = tuple(rng.randint(0, 2) for _ in range(dims))
            kw["output_padding"] = tuple(
                rng.randint(0, max(s, d) - 1)
                for s, d in zip(stride, dilation))
            grid = (grid[0], 1) + grid[2:] if grid[1] == 1 else \
                rng.choice([g for g in factorizations(P, dims + 2)
                            if g[1] == 1])
        return name, (cin, cout, k), kw, (n, cin) + spatial, grid
    c = rng.randint(1, 4)
    kw = dict(stride=stride,
              padding=tuple(rng.randint(0, kk // 2) for kk in k))
    if kind == "AvgPool":
        kw["count_include_pad"] = rng.random() < 0.5
    return name, (k,), kw, (n, c) + spatial, grid


def describe(name, args, kw, shape, grid):
    return "distconv.nn.%s(grid%s, %s) on input %s, grid %s" % (
        name, "".join(", %r" % (a,) for a in args),
        ", ".join("%s=%r" % i for i in kw.items()), shape, grid)


def torch_takes(name, args, kw, shape):
    try:
        with torch.no_grad():
            getattr(torch.nn, name)(*args, **kw)(torch.zeros(shape, dtype=F64))
        return True
    except (RuntimeError, ValueError):
        return False


class RandomLayers(unittest.TestCase):

    def test_random_layers_match_torch_nn(self):
        rng = random.Random(SEED * 1000 + P)
        ran, kinds = 0, {}
        while ran < CASES:
            name, args, kw, shape, grid = draw_case(rng)
            if not torch_takes(name, args, kw, shape):
                continue
            ran += 1
            kinds[name] = kinds.get(name, 0) + 1
            case = describe(name, args, kw, shape, grid)
            scheme = {}
            if name.startswith("Conv") and "Transpose" not in name:
                scheme = dict(channel_parallelism=rng.choice((
                    "stationary_output", "stationary_input",
                    "stationary_weights")))
            try:
                check_module(self, grid, lambda gr: (
                    getattr(torch.nn, name)(*args, **kw) if gr is None else
                    getattr(distconv.nn, name)(gr, *args, **kw, **scheme)),
                    shape, F64, seed=ran)
            except (AssertionError, distconv.Error) as e:
                raise AssertionError("case %d (seed %d, %d ranks): %s %s: "
                                     "%s" % (ran, SEED, P, case, scheme, e))
        if COMM.rank == 0:
            print("\n%d cases (seed %d): %s" % (ran, SEED, ", ".join(
                "%s %d" % kv for kv in sorted(kinds.items()))))


if __name__ == "__main__":
    main()
