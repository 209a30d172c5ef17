"""Checks distconv's files with NumPy and h5py on one process, and writes
the files distconv reads back (io/interop_test.sh runs it).
    interop_test.py check DIR   x.npy, x.h5, v.npy, v.h5 as written
    interop_test.py write DIR   py.npy, py.h5 (float32 3x2x7x6 as "y")
"""
import sys

import h5py
import numpy as np


def expected(shape, dtype):
    return np.arange(1, np.prod(shape) + 1, dtype=np.float64).reshape(shape).astype(dtype)


def check(d):
    for name, shape, dtype in [("x", (2, 3, 5, 4), np.float32),
                               ("v", (2, 2, 3, 4, 5), np.float64)]:
        a = np.load(f"{d}/{name}.npy")
        assert a.dtype == dtype and a.shape == shape, (name, a.dtype, a.shape)
        assert np.array_equal(a, expected(shape, dtype)), name
        with h5py.File(f"{d}/{name}.h5", "r") as f:
            h = f[name]
            assert h.dtype == dtype and h.shape == shape, (name, h.dtype, h.shape)
            assert np.array_equal(h[...], expected(shape, dtype)), name
            order = h.attrs["distconv_order"]
            order = order.decode() if isinstance(order, bytes) else order
            assert order == ("NCHW" if len(shape) == 4 else "NCDHW"), order
    print("interop_test.py: NumPy and h5py read distconv's files")


def write(d):
    y = expected((3, 2, 7, 6), np.float32)
    np.save(f"{d}/py.npy", y)
    with h5py.File(f"{d}/py.h5", "w") as f:
        f.create_dataset("y", data=y, chunks=(1, 2, 7, 6))


if __name__ == "__main__":
    {"check": check, "write": write}[sys.argv[1]](sys.argv[2])
