"""Every distconv.nn module against the same torch.nn module on the whole
tensors, on every grid of this rank count, in float64 (to 1e-10) and
float32: output, input gradient, parameter gradients and buffers."""
import unittest

import torch

import distconv
from harness import (COMM, P, assert_close, check_module, grids,
                     main)

DTYPES = (torch.float64, torch.float32)


def module(grid, name, *args, **kwargs):
    if grid is None:
        return getattr(torch.nn, name)(*args, **kwargs)
    return getattr(distconv.nn, name)(grid, *args, **kwargs)


class Convolutions(unittest.TestCase):

    def test_conv2d(self):
        for dtype in DTYPES:
            for g in grids(4):
                for kw in (dict(padding=1), dict(stride=2, padding=2,
                                                 dilation=2, bias=False)):
                    check_module(self, g, lambda gr: module(
                        gr, "Conv2d", 4, 6, 3, dtype=dtype, **kw),
                        (3, 4, 9, 7), dtype)

    def test_conv2d_same_padding_and_groups(self):
        for g in grids(4, channels=False):
            check_module(self, g, lambda gr: module(
                gr, "Conv2d", 4, 6, (3, 2), padding="same", groups=2,
                dtype=torch.float64), (2, 4, 8, 7), torch.float64)

    def test_conv2d_channel_schemes(self):
        for scheme in ("stationary_input", "stationary_weights"):
            for g in grids(4):
                if g[1] == 1:
                    continue
                check_module(self, g, lambda gr: module(
                    gr, "Conv2d", 4, 6, 3, padding=1, dtype=torch.float64,
                    **({"channel_parallelism": scheme} if gr else {})),
                    (2, 4, 6, 5), torch.float64)

    def test_conv_circular_padding(self):
        for dtype in DTYPES:
            for g in grids(4):
                for kw in (dict(padding=1), dict(stride=2, padding=(2, 1),
                                                 dilation=(1, 2))):
                    check_module(self, g, lambda gr: module(
                        gr, "Conv2d", 4, 6, 3, padding_mode="circular",
                        dtype=dtype, **kw), (3, 4, 9, 7), dtype)
            for g in grids(5, channels=False):
                check_module(self, g, lambda gr: module(
                    gr, "Conv3d", 2, 3, (3, 2, 3), padding=(1, 0, 2),
                    padding_mode="circular", dtype=dtype),
                    (2, 2, 7, 5, 4), dtype)

    def test_conv3d(self):
        for dtype in DTYPES:
            for g in grids(5):
                check_module(self, g, lambda gr: module(
                    gr, "Conv3d", 2, 3, 3, padding=1, dtype=dtype),
                    (2, 2, 7, 5, 4), dtype)

    def test_conv_transpose(self):
        for dtype in DTYPES:
            for g in grids(4, channels=False):
                check_module(self, g, lambda gr: module(
                    gr, "ConvTranspose2d", 4, 3, 4, stride=2, padding=1,
                    dtype=dtype), (2, 4, 5, 6), dtype)
            for g in grids(5, channels=False):
                check_module(self, g, lambda gr: module(
                    gr, "ConvTranspose3d", 2, 3, 2, stride=2, dtype=dtype),
                    (1, 2, 4, 3, 4), dtype)


class Windows(unittest.TestCase):

    def test_pooling(self):
        for dtype in DTYPES:
            for g in grids(4):
                check_module(self, g, lambda gr: module(
                    gr, "MaxPool2d", 3, stride=2, padding=1), (3, 4, 9, 8),
                    dtype)
                for include in (True, False):
                    check_module(self, g, lambda gr: module(
                        gr, "AvgPool2d", 3, stride=2, padding=1,
                        count_include_pad=include), (3, 4, 9, 8), dtype)
            for g in grids(5):
                check_module(self, g, lambda gr: module(gr, "MaxPool3d", 2),
                             (2, 2, 6, 4, 4), dtype)
                check_module(self, g, lambda gr: module(gr, "AvgPool3d", 2),
                             (2, 2, 6, 4, 4), dtype)

    def test_batch_norm_training_then_eval(self):
        for dtype in DTYPES:
            for g in grids(4, channels=False):
                mod, ref = check_module(self, g, lambda gr: module(
                    gr, "BatchNorm2d", 4, dtype=dtype), (3, 4, 7, 6), dtype)
                mod.eval()
                ref.eval()
                grid = distconv.ProcessGrid(COMM, g)
                x = torch.randn(3, 4, 7, 6, dtype=dtype)
                assert_close(self, distconv.gather(
                    grid, mod(distconv.shard(grid, x))).detach(),
                    ref(x).detach(), dtype, "eval output on %s" % (g,))
            for g in grids(5, channels=False):
                check_module(self, g, lambda gr: module(
                    gr, "BatchNorm3d", 2, affine=False, dtype=dtype),
                    (2, 2, 5, 4, 3), dtype)


class ShardLayers(unittest.TestCase):

    def test_activations_and_upsample(self):
        for dtype in DTYPES:
            for g in grids(4):
                for name, args in (("ReLU", ()), ("LeakyReLU", (0.2,)),
                                   ("LeakyReLU", (-0.5,))):
                    check_module(self, g, lambda gr: module(gr, name, *args),
                                 (3, 4, 7, 5), dtype)
            for g in grids(4, channels=False):
                check_module(self, g, lambda gr: module(
                    gr, "Upsample", scale_factor=2), (3, 4, 5, 3), dtype)
            for g in grids(5, channels=False):
                check_module(self, g, lambda gr: module(
                    gr, "Upsample", scale_factor=(1, 2, 3)), (1, 2, 3, 3, 2),
                    dtype)

    def test_losses(self):
        for dtype in DTYPES:
            for g in grids(4, channels=False):
                grid = distconv.ProcessGrid(COMM, g)
                torch.manual_seed(3)
                x = torch.randn(3, 5, 7, 6, dtype=dtype)
                labels = torch.randint(0, 5, (3, 7, 6))
                labels[0, 0, :] = 2  # some ignored cells
                probs = torch.rand(3, 5, 7, 6, dtype=dtype)
                values = torch.randn(3, 5, 7, 6, dtype=dtype)
                cases = [
                    ("CrossEntropyLoss", dict(ignore_index=2), labels),
                    ("CrossEntropyLoss", dict(reduction="sum"), probs),
                    ("MSELoss", dict(), values),
                    ("MSELoss", dict(reduction="sum"), values),
                ]
                for name, kw, target in cases:
                    xs = distconv.shard(grid, x).requires_grad_()
                    xr = x.clone().requires_grad_()
                    if target.dtype == torch.int64:
                        ts = distconv.shard(grid, target.unsqueeze(1)
                                            .double()).squeeze(1).long()
                    else:
                        ts = distconv.shard(grid, target)
                    loss = module(grid, name, **kw)(xs, ts)
                    want = module(None, name, **kw)(xr, target)
                    assert_close(self, loss.detach(), want.detach(), dtype,
                                 "%s %s on %s" % (name, kw, g))
                    (3 * loss).backward()
                    (3 * want).backward()
                    assert_close(self, distconv.gather(grid, xs.grad),
                                 xr.grad, dtype, "%s gradient" % name)

    def test_loss_and_gradient_in_one_pass(self):
        """The loss computed with its gradient (the input requires grad)
        equals the loss alone (no_grad) bit for bit, and so does the
        gradient the separate backward pass computes (a second backward of
        the same graph)."""
        for g in grids(4, channels=False):
            grid = distconv.ProcessGrid(COMM, g)
            torch.manual_seed(5)
            x = torch.randn(3, 5, 7, 6, dtype=torch.float32)
            labels = torch.randint(0, 5, (3, 1, 7, 6)).double()
            values = torch.randn(3, 5, 7, 6, dtype=torch.float32)
            cases = [
                ("CrossEntropyLoss", dict(ignore_index=2),
                 distconv.shard(grid, labels).squeeze(1).long()),
                ("MSELoss", dict(), distconv.shard(grid, values)),
            ]
            for name, kw, target in cases:
                loss_fn = module(grid, name, **kw)
                xs = distconv.shard(grid, x)
                with torch.no_grad():
                    alone = loss_fn(xs, target)
                xs.requires_grad_()
                loss = loss_fn(xs, target)
                what = "%s on %s" % (name, g)
                self.assertEqual(loss.item(), alone.item(), what)
                loss.backward(retain_graph=True)
                fused = xs.grad.clone()
                xs.grad = None
                loss.backward()
                self.assertTrue(torch.equal(fused, xs.grad), what)

    def test_cat_add_and_redistribute(self):
        for dtype in DTYPES:
            for g in grids(4, channels=False):
                grid = distconv.ProcessGrid(COMM, g)
                torch.manual_seed(4)
                a = torch.randn(3, 2, 7, 5, dtype=dtype, requires_grad=True)
                b = torch.randn(3, 3, 7, 5, dtype=dtype, requires_grad=True)
                c = torch.randn(3, 5, 7, 5, dtype=dtype, requires_grad=True)
                sa, sb, sc = (distconv.shard(grid, t.detach())
                              .requires_grad_() for t in (a, b, c))
                y = distconv.add(grid, distconv.cat(grid, [sa, sb]), sc)
                want = torch.cat([a, b], 1) + c
                assert_close(self, distconv.gather(grid, y).detach(),
                             want.detach(), dtype, "cat + add on %s" % (g,))
                dy = torch.randn(want.shape, dtype=dtype)
                y.backward(distconv.shard(grid, dy))
                want.backward(dy)
                for s, t, n in ((sa, a, "a"), (sb, b, "b"), (sc, c, "c")):
                    assert_close(self, distconv.gather(grid, s.grad), t.grad,
                                 dtype, "gradient of %s" % n)
            for g in grids(4):
                frm = distconv.ProcessGrid(COMM, g)
                to = distconv.ProcessGrid(COMM, grids(4)[0])
                x = torch.randn(3, 4, 7, 5, dtype=dtype)
                xs = distconv.shard(frm, x).requires_grad_()
                y = distconv.redistribute(xs, frm, to)
                assert_close(self, y.detach(), distconv.shard(to, x), dtype,
                             "redistribute %s -> %s" % (g, grids(4)[0]))
                dy = torch.randn(x.shape, dtype=dtype)
                y.backward(distconv.shard(to, dy))
                assert_close(self, distconv.gather(frm, xs.grad), dy, dtype,
                             "redistribute gradient")

    def test_scatter_and_gather_to_root(self):
        for g in grids(4):
            grid = distconv.ProcessGrid(COMM, g)
            x = torch.arange(3 * 4 * 7 * 5, dtype=torch.float64) \
                .reshape(3, 4, 7, 5)
            mine = distconv.scatter(grid, x if COMM.rank == 0 else None)
            self.assertTrue(torch.equal(mine, distconv.shard(grid, x)))
            back = distconv.gather_to_root(grid, mine, root=P - 1)
            if COMM.rank == P - 1:
                self.assertTrue(torch.equal(back, x))
            else:
                self.assertIsNone(back)


class Gradcheck(unittest.TestCase):
    """torch.autograd.gradcheck of each autograd function, on a grid of
    one rank (each rank its own; perturbing one rank's shard while the
    others perturb theirs would not be a Jacobian)."""

    def test_gradcheck(self):
        from mpi4py import MPI
        grid = distconv.ProcessGrid(MPI.COMM_SELF, (1, 1, 1, 1))
        torch.manual_seed(5)
        x = torch.randn(2, 2, 5, 4, dtype=torch.float64, requires_grad=True)
        mods = [distconv.nn.Conv2d(grid, 2, 3, 3, padding=1,
                                   dtype=torch.float64),
                distconv.nn.ConvTranspose2d(grid, 2, 2, 2, stride=2,
                                            dtype=torch.float64),
                distconv.nn.MaxPool2d(grid, 2),
                distconv.nn.AvgPool2d(grid, 3, 1, 1),
                distconv.nn.BatchNorm2d(grid, 2, dtype=torch.float64),
                distconv.nn.LeakyReLU(grid, 0.1),
                distconv.nn.Upsample(grid, scale_factor=2)]
        for m in mods:
            params = tuple(m.parameters())
            self.assertTrue(torch.autograd.gradcheck(
                lambda x, *p: m(x), (x,) + params), type(m).__name__)


if __name__ == "__main__":
    main()
