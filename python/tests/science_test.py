"""The layers of scientific networks against torch.nn on the whole tensors,
on every grid of this rank count, in float64 (to 1e-10): GroupNorm,
InstanceNorm2d/3d (running statistics, eval), AdaptiveAvgPool2d/3d and
AdaptiveMaxPool2d/3d (global pooling, sizes that do not divide, None
entries), Upsample / interpolate in 'bilinear' and 'trilinear' mode (to a
size or by a scale factor, align_corners either way); and Dropout,
Dropout2d/3d: on every grid the mask one process draws with the same
seed."""
import unittest

import torch

import distconv
from harness import (COMM, P, assert_close, assert_raises_everywhere,
                     check_module, grids, main)

F64 = torch.float64


def module(grid, name, *args, **kwargs):
    if grid is None:
        return getattr(torch.nn, name)(*args, **kwargs)
    return getattr(distconv.nn, name)(grid, *args, **kwargs)


def cuts_groups(grid, channels, groups):
    parts = grid[1]
    size = channels // groups
    firsts = [sum(channels // parts + (1 if i < channels % parts else 0)
                  for i in range(p)) for p in range(parts)]
    return any(f % size for f in firsts)


class Normalisation(unittest.TestCase):

    def test_group_norm(self):
        for g in grids(4):
            for groups, affine in ((2, True), (4, False), (1, True)):
                make = lambda gr: module(gr, "GroupNorm", groups, 4,  # noqa
                                         affine=affine, dtype=F64)
                if cuts_groups(g, 4, groups):
                    grid = distconv.ProcessGrid(COMM, g)
                    x = distconv.shard(grid, torch.randn(3, 4, 7, 5,
                                                         dtype=F64))
                    assert_raises_everywhere(self, "unsupported",
                                             "inside a group",
                                             lambda: make(grid)(x))
                    continue
                check_module(self, g, make, (3, 4, 7, 5), F64)
        for g in grids(5):
            if not cuts_groups(g, 6, 3):
                check_module(self, g, lambda gr: module(
                    gr, "GroupNorm", 3, 6, dtype=F64), (2, 6, 4, 3, 5), F64)

    def test_instance_norm_with_running_statistics(self):
        for g in grids(4):
            for affine, track in ((False, False), (True, True)):
                mod, ref = check_module(self, g, lambda gr: module(
                    gr, "InstanceNorm2d", 4, affine=affine,
                    track_running_stats=track, momentum=0.3, dtype=F64),
                    (3, 4, 6, 5), F64)
                mod.eval()
                ref.eval()
                grid = distconv.ProcessGrid(COMM, g)
                x = torch.randn(3, 4, 6, 5, dtype=F64)
                assert_close(self, distconv.gather(
                    grid, mod(distconv.shard(grid, x))).detach(),
                    ref(x).detach(), F64, "eval output on %s" % (g,))
        for g in grids(5):
            check_module(self, g, lambda gr: module(
                gr, "InstanceNorm3d", 2, affine=True, dtype=F64),
                (2, 2, 4, 3, 5), F64)


class AdaptivePooling(unittest.TestCase):

    def test_adaptive_pooling(self):
        for g in grids(4):
            for name in ("AdaptiveAvgPool2d", "AdaptiveMaxPool2d"):
                for size in (1, (3, 4), (None, 2), (9, 8)):
                    check_module(self, g, lambda gr: module(gr, name, size),
                                 (3, 4, 10, 7), F64)
        for g in grids(5):
            for name in ("AdaptiveAvgPool3d", "AdaptiveMaxPool3d"):
                for size in (1, (2, 3, 2)):
                    check_module(self, g, lambda gr: module(gr, name, size),
                                 (2, 3, 5, 4, 6), F64)


class Interpolation(unittest.TestCase):

    def test_upsample_linear_modes(self):
        cases = [dict(scale_factor=2, mode="bilinear"),
                 dict(scale_factor=2, mode="bilinear", align_corners=True),
                 dict(size=(13, 5), mode="bilinear"),
                 dict(scale_factor=(1.5, 3), mode="bilinear"),
                 dict(scale_factor=(1.5, 3), mode="bilinear",
                      recompute_scale_factor=True),
                 dict(size=(4, 3), mode="bilinear", align_corners=True)]
        for g in grids(4):
            for kw in cases:
                check_module(self, g, lambda gr: module(gr, "Upsample", **kw),
                             (2, 3, 7, 6), F64)
            # The image-level branch: 1x1 up to the feature size.
            check_module(self, g, lambda gr: module(
                gr, "Upsample", size=(9, 8), mode="bilinear"), (2, 3, 1, 1),
                F64)
        for g in grids(5):
            for kw in (dict(scale_factor=2, mode="trilinear"),
                       dict(size=(5, 7, 3), mode="trilinear",
                            align_corners=True)):
                check_module(self, g, lambda gr: module(gr, "Upsample", **kw),
                             (1, 2, 3, 4, 5), F64)

    def test_interpolate_function(self):
        for g in grids(4):
            grid = distconv.ProcessGrid(COMM, g)
            x = torch.randn(2, 3, 6, 5, dtype=F64, requires_grad=True)
            xs = distconv.shard(grid, x.detach()).requires_grad_()
            y = distconv.interpolate(grid, xs, size=(11, 7), mode="bilinear")
            want = torch.nn.functional.interpolate(x, size=(11, 7),
                                                   mode="bilinear")
            assert_close(self, distconv.gather(grid, y).detach(),
                         want.detach(), F64, "interpolate on %s" % (g,))
            dy = torch.randn(want.shape, dtype=F64)
            y.backward(distconv.shard_like(grid, dy, y))
            want.backward(dy)
            assert_close(self, distconv.gather(grid, xs.grad), x.grad, F64,
                         "interpolate's gradient on %s" % (g,))

    def test_refusals(self):
        grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        assert_raises_everywhere(
            self, "unsupported", "bicubic",
            lambda: distconv.nn.Upsample(grid, size=4, mode="bicubic"))
        x = distconv.shard(grid, torch.randn(1, 2, 4, 4, dtype=F64))
        assert_raises_everywhere(
            self, "invalid argument", "trilinear interpolation",
            lambda: distconv.interpolate(grid, x, scale_factor=2,
                                         mode="trilinear"))


class Dropout(unittest.TestCase):

    def run_dropout(self, grid_shape, name, shape, seed, calls=2):
        from mpi4py import MPI
        grid = distconv.ProcessGrid(
            COMM if grid_shape else MPI.COMM_SELF,
            grid_shape or (1,) * len(shape))
        drop = getattr(distconv.nn, name)(grid, 0.4, seed=seed)
        torch.manual_seed(1)
        x = torch.rand(shape, dtype=F64) + 1
        outs = []
        for _ in range(calls):
            xs = distconv.shard(grid, x).requires_grad_()
            y = drop(xs)
            y.backward(distconv.shard_like(grid, torch.ones(shape,
                                                            dtype=F64), y))
            outs.append((distconv.gather(grid, y).detach(),
                         distconv.gather(grid, xs.grad)))
        return x, outs

    def test_same_masks_as_one_process(self):
        for name, shape, table in (
                ("Dropout", (3, 4, 7, 5), grids(4)),
                ("Dropout2d", (3, 4, 7, 5), grids(4)),
                ("Dropout3d", (2, 3, 4, 3, 5), grids(5))):
            x, one = self.run_dropout(None, name, shape, 77)
            self.assertFalse(torch.equal(one[0][0], one[1][0]),
                             "two calls drew the same mask")
            for g in table:
                _, many = self.run_dropout(g, name, shape, 77)
                for (y, dx), (y1, dx1) in zip(many, one):
                    self.assertTrue(torch.equal(y, y1), "%s on %s" % (name, g))
                    self.assertTrue(torch.equal(dx, dx1))
            y = one[0][0]
            kept = y != 0
            self.assertTrue(torch.allclose(y[kept], (x / 0.6)[kept]))
            if name != "Dropout":  # whole channels
                per = y.reshape(shape[0] * shape[1], -1) != 0
                self.assertTrue(bool((per.all(1) | ~per.any(1)).all()))

    def test_eval_and_seed_agreement(self):
        grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        x = distconv.shard(grid, torch.randn(2, 3, 4 * P, 4))
        torch.manual_seed(COMM.rank)  # ranks draw differently...
        state = torch.get_rng_state()
        drop = distconv.nn.Dropout(grid, 0.5)
        self.assertTrue(torch.equal(state, torch.get_rng_state()))
        drop(x)
        seeds = COMM.allgather(drop.seed)
        self.assertEqual(len(set(seeds)), 1)  # ...and agree on rank 0's
        drop.eval()
        self.assertIs(drop(x), x)


if __name__ == "__main__":
    main()
