"""What the Python tests share: grids for the rank count, the serial
reference check of a module, and a check that an error is raised alike on
every rank.

Every rank builds the same global tensors from one seed; the distributed
module sees this rank's shards, the torch.nn module the whole tensors on
each rank, and the gathered results must match."""
import faulthandler
import os
import sys
import unittest

import torch
from mpi4py import MPI

import distconv

COMM = MPI.COMM_WORLD
P = COMM.Get_size()

# Grids per rank count: samples, space and channels, 2D (4 entries) and 3D
# (5); the shapes in the tests leave uneven and, at 3 and 4 ranks along
# samples, empty shards.
GRIDS_2D = {
    1: [(1, 1, 1, 1)],
    2: [(2, 1, 1, 1), (1, 1, 2, 1), (1, 1, 1, 2), (1, 2, 1, 1)],
    3: [(3, 1, 1, 1), (1, 1, 3, 1), (1, 1, 1, 3), (1, 3, 1, 1)],
    4: [(1, 1, 2, 2), (2, 1, 2, 1), (4, 1, 1, 1), (1, 2, 2, 1),
        (1, 1, 4, 1)],
}
GRIDS_3D = {
    1: [(1, 1, 1, 1, 1)],
    2: [(1, 1, 2, 1, 1), (1, 1, 1, 1, 2)],
    3: [(1, 1, 3, 1, 1), (3, 1, 1, 1, 1)],
    4: [(1, 1, 2, 2, 1), (2, 1, 1, 1, 2)],
}


def grids(ndims, channels=True):
    table = GRIDS_2D if ndims == 4 else GRIDS_3D
    return [g for g in table[P] if channels or g[1] == 1]


TOL = {torch.float64: dict(rtol=1e-10, atol=1e-10),
       torch.float32: dict(rtol=2e-4, atol=2e-4)}


def assert_close(test, got, want, dtype, what, tol=None):
    """allclose with the dtype's tolerance, or rtol = atol = `tol`."""
    tol = TOL[dtype] if tol is None else dict(rtol=tol, atol=tol)
    test.assertTrue(torch.allclose(got, want, **tol),
                    "%s: max difference %.3g" % (
                        what, (got - want).abs().max().item()))


def check_module(test, grid_shape, make, shape, dtype, seed=1,
                 target=None):
    """make(grid_or_None) builds the distconv module (with a grid) or the
    torch.nn one (None); both see the same input and output gradient and
    must agree in output, input gradient and parameter gradients."""
    grid = distconv.ProcessGrid(COMM, grid_shape)
    torch.manual_seed(seed)
    mod = make(grid)
    ref = make(None)
    ref.load_state_dict(mod.state_dict())
    x = torch.randn(shape, dtype=dtype)
    xs = distconv.shard(grid, x).requires_grad_()
    xr = x.clone().requires_grad_()
    y = mod(xs)
    yr = ref(xr)
    assert_close(test, distconv.gather(grid, y).detach(), yr.detach(), dtype,
                 "output on grid %s" % (grid_shape,))
    dy = torch.randn(yr.shape, dtype=dtype)
    y.backward(distconv.shard_like(grid, dy, y))
    yr.backward(dy)
    assert_close(test, distconv.gather(grid, xs.grad), xr.grad, dtype,
                 "input gradient on grid %s" % (grid_shape,))
    for (name, p), (_, q) in zip(mod.named_parameters(),
                                 ref.named_parameters()):
        assert_close(test, p.grad, q.grad, dtype,
                     "%s gradient on grid %s" % (name, grid_shape))
    for (name, b), (_, c) in zip(mod.named_buffers(), ref.named_buffers()):
        assert_close(test, b.double(), c.double(),
                     b.dtype if b.is_floating_point() else torch.float64,
                     "%s on grid %s" % (name, grid_shape))
    return mod, ref


def assert_raises_everywhere(test, kind, contains, fn):
    """fn raises distconv.Error of `kind` on every rank, the same message
    on all of them."""
    message = ""
    try:
        fn()
    except distconv.Error as e:
        test.assertEqual(e.kind, kind, str(e))
        message = str(e)
    messages = COMM.allgather(message)
    test.assertTrue(all(m == messages[0] for m in messages), messages)
    test.assertIn(contains, message)


def main():
    """unittest's main on every rank; the exit status is non-zero when any
    test failed on any rank. A rank still running after
    $DISTCONV_TEST_TIMEOUT_S seconds (a deadlock) prints its stack and
    exits."""
    timeout = float(os.environ.get("DISTCONV_TEST_TIMEOUT_S", "0"))
    if timeout > 0:
        faulthandler.dump_traceback_later(timeout, exit=True, file=sys.stderr)
    result = unittest.main(exit=False, verbosity=1 if COMM.rank == 0 else 0,
                           argv=["distconv"]).result
    ok = COMM.allreduce(0 if result.wasSuccessful() else 1) == 0
    raise SystemExit(0 if ok else 1)
