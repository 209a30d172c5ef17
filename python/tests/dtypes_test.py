"""Every dtype PyTorch uses for data and labels through the moving
functions (shard, shard_like, gather, scatter, gather_to_root,
redistribute, redistribute_like), and torch.bfloat16 / torch.float16
inputs through every module: the library's bf16 and fp16 layers with
float32 parameters, against torch.nn in float32 on the same (rounded)
values, within the 16-bit rounding of each result."""
import unittest

import torch

import distconv
from harness import (COMM, P, assert_close, assert_raises_everywhere, grids,
                     main)

DATA = (torch.int64, torch.int32, torch.uint8, torch.int8, torch.bool,
        torch.bfloat16, torch.float16, torch.float32, torch.float64)
NARROW = (torch.bfloat16, torch.float16)
# Unit roundoff of each 16-bit type: one rounding of a result.
ROUNDING = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}


def values(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), shape,
                         generator=g, dtype=dtype)


class MovingData(unittest.TestCase):

    def test_every_dtype_moves_bit_for_bit(self):
        for dtype in DATA:
            for g in grids(4):
                grid = distconv.ProcessGrid(COMM, g)
                x = values((3, 4, 7, 5), dtype, 1)
                mine = distconv.shard(grid, x)
                self.assertEqual(mine.dtype, dtype)
                self.assertTrue(torch.equal(distconv.gather(grid, mine), x),
                                "%s on %s" % (dtype, g))
                scattered = distconv.scatter(grid, x if COMM.rank == 0
                                             else None)
                self.assertEqual(scattered.dtype, dtype)
                self.assertTrue(torch.equal(scattered, mine))
                back = distconv.gather_to_root(grid, mine, root=P - 1)
                if COMM.rank == P - 1:
                    self.assertTrue(torch.equal(back, x))
                flat = distconv.ProcessGrid(COMM, grids(4)[0])
                moved = distconv.redistribute(mine, grid, flat)
                self.assertTrue(torch.equal(moved, distconv.shard(flat, x)))
                like = distconv.shard_like(grid, x, mine)
                self.assertTrue(torch.equal(like, mine))

    def test_labels_for_a_layer_output(self):
        # Labels sharded like an upsampled output (not the balanced split).
        for g in grids(4, channels=False):
            grid = distconv.ProcessGrid(COMM, g)
            up = distconv.nn.Upsample(grid, scale_factor=2)
            y = up(distconv.shard(grid, torch.randn(3, 2, 5, 3)))
            for dtype in (torch.int64, torch.bool):
                t = values((3, 1, 10, 6), dtype, 2)
                mine = distconv.shard_like(grid, t, y[:, :1])
                self.assertEqual(mine.shape[2:], y.shape[2:])
                self.assertTrue(torch.equal(distconv.gather(grid, mine), t))

    def test_what_is_refused(self):
        grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        assert_raises_everywhere(
            self, "invalid argument", "distconv moves",
            lambda: distconv.shard(grid, torch.zeros(2, 2, 4, 4,
                                                     dtype=torch.complex64)))
        x = torch.zeros(2, 2, 4 + (COMM.rank == P - 1), 4)
        assert_raises_everywhere(
            self, "invalid argument", "rank 0 one of shape (2, 2, 4, 4)",
            lambda: distconv.shard(grid, x)) if P > 1 else None
        for dtype in NARROW:
            assert_raises_everywhere(
                self, "unsupported", "keep float32 parameters",
                lambda: distconv.nn.Conv2d(grid, 2, 2, 3, dtype=dtype))
            assert_raises_everywhere(
                self, "unsupported", "keep float32 parameters",
                lambda: distconv.nn.BatchNorm2d(grid, 2, dtype=dtype))
        conv = distconv.nn.Conv2d(grid, 2, 2, 3, dtype=torch.float64)
        xs = distconv.shard(grid, torch.zeros(2, 2, 4, 4,
                                              dtype=torch.bfloat16))
        assert_raises_everywhere(
            self, "invalid argument",
            "torch.bfloat16 but the module's parameters torch.float64",
            lambda: conv(xs))
        ints = distconv.shard(grid, torch.zeros(2, 2, 4, 4,
                                                dtype=torch.int64))
        assert_raises_everywhere(self, "invalid argument",
                                 "distconv's layers take",
                                 lambda: distconv.nn.ReLU(grid)(ints))


def narrow_close(test, got, want, dtype, what):
    """`got` (16-bit) within a few roundings of the float32 `want`, relative
    to its largest magnitude: the library rounds each result once, and each
    part and sum where several ranks' or pieces' partial results are summed
    (docs/precision.md)."""
    bound = 4 * ROUNDING[dtype] * want.abs().max().item()
    diff = (got.float() - want).abs().max().item()
    test.assertLessEqual(diff, bound, "%s: max difference %.3g" % (what,
                                                                   diff))


def check_narrow(test, g, make, shape, dtype, seed=1, target=None):
    """make(grid_or_None) builds the distconv module (float32 parameters)
    or the torch.nn one; the distconv module sees `dtype` shards, torch.nn
    the same values in float32. Outputs and input gradients as
    narrow_close says; parameter gradients (float32, from the same 16-bit
    values) within float32 summation."""
    grid = distconv.ProcessGrid(COMM, g)
    torch.manual_seed(seed)
    mod = make(grid)
    ref = make(None)
    ref.load_state_dict(mod.state_dict())
    x = torch.randn(shape).to(dtype)
    xs = distconv.shard(grid, x).requires_grad_()
    xr = x.float().requires_grad_()
    y = mod(xs)
    yr = ref(xr)
    test.assertEqual(y.dtype, dtype)
    narrow_close(test, distconv.gather(grid, y).detach(), yr.detach(), dtype,
                 "%s output on %s" % (dtype, g))
    dy = torch.randn(yr.shape).to(dtype)
    y.backward(distconv.shard_like(grid, dy, y))
    yr.backward(dy.float())
    test.assertEqual(xs.grad.dtype, dtype)
    narrow_close(test, distconv.gather(grid, xs.grad), xr.grad, dtype,
                 "%s input gradient on %s" % (dtype, g))
    for (name, p), (_, q) in zip(mod.named_parameters(),
                                 ref.named_parameters()):
        test.assertEqual(p.grad.dtype, torch.float32)
        test.assertTrue(torch.allclose(p.grad, q.grad, rtol=1e-4,
                                       atol=1e-4 * q.grad.abs().max()),
                        "%s %s gradient on %s: max difference %.3g" % (
                            dtype, name, g, (p.grad - q.grad).abs().max()))


def module(grid, name, *args, **kwargs):
    if grid is None:
        return getattr(torch.nn, name)(*args, **kwargs)
    return getattr(distconv.nn, name)(grid, *args, **kwargs)


class NarrowLayers(unittest.TestCase):

    def test_windows(self):
        for dtype in NARROW:
            for g in grids(4):
                check_narrow(self, g, lambda gr: module(
                    gr, "Conv2d", 4, 6, 3, padding=1), (3, 4, 9, 7), dtype)
                check_narrow(self, g, lambda gr: module(
                    gr, "MaxPool2d", 3, stride=2, padding=1), (3, 4, 9, 8),
                    dtype)
                check_narrow(self, g, lambda gr: module(
                    gr, "AvgPool2d", 2), (3, 4, 9, 8), dtype)
            for g in grids(4, channels=False):
                check_narrow(self, g, lambda gr: module(
                    gr, "ConvTranspose2d", 4, 3, 4, stride=2, padding=1),
                    (2, 4, 5, 6), dtype)
                check_narrow(self, g, lambda gr: module(
                    gr, "BatchNorm2d", 4), (3, 4, 7, 6), dtype)
            for g in grids(5, channels=False):
                check_narrow(self, g, lambda gr: module(
                    gr, "Conv3d", 2, 3, 3, padding=1), (2, 2, 7, 5, 4),
                    dtype)

    def test_pointwise(self):
        for dtype in NARROW:
            for g in grids(4):
                for name, args in (("ReLU", ()), ("LeakyReLU", (0.2,))):
                    check_narrow(self, g, lambda gr: module(gr, name, *args),
                                 (3, 4, 7, 5), dtype)
            for g in grids(4, channels=False):
                check_narrow(self, g, lambda gr: module(
                    gr, "Upsample", scale_factor=2), (3, 4, 5, 3), dtype)

    def test_losses_cat_and_add(self):
        for dtype in NARROW:
            for g in grids(4, channels=False):
                grid = distconv.ProcessGrid(COMM, g)
                torch.manual_seed(3)
                x = torch.randn(3, 5, 7, 6).to(dtype)
                labels = torch.randint(0, 5, (3, 7, 6))
                values_ = torch.randn(3, 5, 7, 6).to(dtype)
                for name, target, tr in (
                        ("CrossEntropyLoss", distconv.shard(
                            grid, labels.unsqueeze(1)).squeeze(1), labels),
                        ("MSELoss", distconv.shard(grid, values_),
                         values_.float())):
                    xs = distconv.shard(grid, x).requires_grad_()
                    xr = x.float().requires_grad_()
                    loss = module(grid, name)(xs, target)
                    want = module(None, name)(xr, tr)
                    self.assertEqual(loss.dtype, torch.float32)
                    assert_close(self, loss.detach(), want.detach(),
                                 torch.float32, "%s %s" % (dtype, name))
                    loss.backward()
                    want.backward()
                    narrow_close(self, distconv.gather(grid, xs.grad),
                                 xr.grad, dtype, "%s gradient" % name)
                a = distconv.shard(grid, x)
                y = distconv.add(grid, distconv.cat(grid, [a, a]),
                                 distconv.cat(grid, [a, a]))
                self.assertEqual(y.dtype, dtype)
                self.assertTrue(torch.equal(distconv.gather(grid, y),
                                            torch.cat([x, x], 1) * 2))


if __name__ == "__main__":
    main()
