#!/usr/bin/python3
"""Writes a synthetic CosmoFlow data set in the layout of the public files.

One HDF5 file per sample, DIR/univ_NNNNNN.hdf5, holding
  "full":    SIZE x SIZE x SIZE x 4 int16 particle counts (channels last)
  "unitPar": 4 float32 target parameters in [-1, 1]
Each channel's counts are Poisson with a mean set by its parameter, so the
parameters can be learned from the volume. Deterministic (numpy's PCG64,
seeded by the sample's index).

With --distconv-file=F.h5, the same samples also go into one file in the
layout distconv's own --write-data writes: "x" (float32 M x 4 x S x S x
S, x[n][c][d][h][w] = full[d][h][w][c]) and "targets" (float32 M x 4 x 1
x 1 x 1).

  examples/cosmoflow_data.py DIR --samples=8 --size=32
  mpirun -np 4 bazel-bin/examples/cosmoflow --data=DIR --size=32 ...
"""
import argparse
import os

import h5py
import numpy as np


def sample(index, size):
    rng = np.random.default_rng(index)
    params = rng.uniform(-1.0, 1.0, 4).astype(np.float32)
    # A smooth density field per channel, scaled by the channel's parameter.
    axis = np.linspace(0.0, 2.0 * np.pi, size, endpoint=False)
    d, h, w = np.meshgrid(axis, axis, axis, indexing="ij")
    phase = rng.uniform(0.0, 2.0 * np.pi, 3)
    field = 1.0 + 0.5 * np.sin(d + phase[0]) * np.cos(h + phase[1]) * np.sin(
        w + phase[2])
    means = np.stack([field * 3.0 * (1.5 + p) for p in params], axis=-1)
    full = rng.poisson(means).astype(np.int16)
    return full, params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--distconv-file", default="")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    xs, ts = [], []
    for i in range(args.samples):
        full, params = sample(i, args.size)
        with h5py.File(os.path.join(args.dir, "univ_%06d.hdf5" % i), "w") as f:
            f["full"] = full
            f["unitPar"] = params
        if args.distconv_file:
            xs.append(full.transpose(3, 0, 1, 2).astype(np.float32))
            ts.append(params.reshape(4, 1, 1, 1))
    if args.distconv_file:
        with h5py.File(args.distconv_file, "w") as f:
            f["x"] = np.stack(xs)
            f["targets"] = np.stack(ts)
    print("cosmoflow_data: wrote %d samples of %d^3 x 4 to %s" %
          (args.samples, args.size, args.dir))


if __name__ == "__main__":
    main()
