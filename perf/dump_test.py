"""Checks distconv_bench's --dump-dir files (perf/dump_test.sh runs it):
the .npy files and DIR/tensors.h5 hold the same tensors, bitwise, and y is
the convolution of x with w plus b (NumPy, float64).
    dump_test.py NPY_DIR H5_DIR N C H W F K PAD
"""
import sys

import h5py
import numpy as np

names = ["x", "w", "b", "dy", "y", "dx", "dw", "db"]
npy_dir, h5_dir = sys.argv[1], sys.argv[2]
n, c, h, w, f, k, pad = map(int, sys.argv[3:])
arrays = {name: np.load(f"{npy_dir}/{name}.npy") for name in names}
with h5py.File(f"{h5_dir}/tensors.h5", "r") as file:
    assert sorted(file.keys()) == sorted(names), list(file.keys())
    for name in names:
        assert np.array_equal(file[name][...], arrays[name]), name
x, wt, b = (arrays[k_].astype(np.float64) for k_ in ("x", "w", "b"))
assert x.shape == (n, c, h, w) and wt.shape == (f, c, k, k), (x.shape, wt.shape)
xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
oh, ow = h + 2 * pad - k + 1, w + 2 * pad - k + 1
y = np.zeros((n, f, oh, ow)) + b[None, :, None, None]
for i in range(k):
    for j in range(k):
        y += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + oh, j:j + ow], wt[:, :, i, j])
err = np.max(np.abs(arrays["y"] - y)) / max(1.0, np.max(np.abs(y)))
assert err < 1e-5, err
print(f"dump_test.py: {len(names)} tensors equal in .npy and HDF5; y matches "
      f"NumPy's convolution (max rel err {err:.2g})")
