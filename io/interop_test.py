"""Checks distconv's files with NumPy and h5py on one process, and writes
the files distconv reads back (io/interop_test.sh runs it).
    interop_test.py check DIR   x.npy, x.h5, v.npy, v.h5, b.h5 as written
    interop_test.py write DIR   py.npy, py.h5 (float32 3x2x7x6 as "y"),
                                pyb.h5 (the same in bfloat16)
bfloat16 in HDF5: a floating-point type of 2 bytes with fp32's sign,
exponent and bias and 7 mantissa bits, which h5py reads as float32.
"""
import sys

import h5py
import numpy as np


def bf16_type():
    t = h5py.h5t.IEEE_F32LE.copy()
    t.set_fields(15, 7, 8, 0, 7)  # sign, exponent at 7 (8 bits), mantissa
    t.set_offset(0)
    t.set_precision(16)
    t.set_size(2)
    t.set_ebias(127)
    return t


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
    with h5py.File(f"{d}/b.h5", "r") as f:
        b = f["b"]
        stored = b.id.get_type()
        assert stored.get_size() == 2 and stored.get_fields() == (15, 7, 8, 0, 7) \
            and stored.get_ebias() == 127, stored.get_fields()
        assert b.dtype == np.float32 and b.shape == (2, 3, 5, 4), (b.dtype, b.shape)
        assert np.array_equal(b[...], expected((2, 3, 5, 4), np.float32)), "b"
    print("interop_test.py: NumPy and h5py read distconv's files")


def write(d):
    y = expected((3, 2, 7, 6), np.float32)
    np.save(f"{d}/py.npy", y)
    with h5py.File(f"{d}/py.h5", "w") as f:
        f.create_dataset("y", data=y, chunks=(1, 2, 7, 6))
    with h5py.File(f"{d}/pyb.h5", "w") as f:
        space = h5py.h5s.create_simple(y.shape)
        dset = h5py.h5d.create(f.id, b"y", bf16_type(), space)
        # HDF5 converts float32 to bfloat16 (1 to 252: exact)
        dset.write(h5py.h5s.ALL, h5py.h5s.ALL, y)


if __name__ == "__main__":
    {"check": check, "write": write}[sys.argv[1]](sys.argv[2])
