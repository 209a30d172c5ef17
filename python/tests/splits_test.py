"""Inputs split in ways one layer's output leaves for the next: empty
channel, sample and space blocks, skip connections whose two sides are
split differently (distconv.cat, distconv.add, distconv.redistribute_like),
grouped convolutions on channel splits that cut a group, and transposed
convolutions with torch.nn's whole range of output padding. Each against
torch.nn on the whole tensors, in float64 (to 1e-10)."""
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


def channel_grids():
    return [g for g in grids(4) if g[1] > 1]


class EmptyBlocks(unittest.TestCase):

    def test_conv_with_fewer_channels_than_channel_ranks(self):
        # One input channel over 2-4 channel ranks: empty channel blocks,
        # and empty filter blocks where filters are fewer than the ranks.
        gs = [(1, P, 1, 1)] if P > 1 else []
        for g in gs + channel_grids():
            for scheme in ("stationary_output", "stationary_input",
                           "stationary_weights"):
                for cin, cout in ((1, 2), (2, 1)):
                    check_module(self, g, lambda gr: module(
                        gr, "Conv2d", cin, cout, 3, padding=1, dtype=F64,
                        **({"channel_parallelism": scheme} if gr else {})),
                        (2, cin, 5, 4), F64)

    def test_empty_samples_and_space(self):
        # One sample and two rows over up to four ranks along N or H.
        for g in ((P, 1, 1, 1), (1, 1, P, 1)):
            check_module(self, g, lambda gr: module(
                gr, "Conv2d", 2, 3, 3, padding=1, dtype=F64), (1, 2, 2, 5),
                F64)
            check_module(self, g, lambda gr: module(
                gr, "ConvTranspose2d", 2, 3, 2, stride=2, dtype=F64),
                (1, 2, 2, 3), F64)
            check_module(self, g, lambda gr: module(gr, "MaxPool2d", 2),
                         (1, 2, 2, 4), F64)
            check_module(self, g, lambda gr: module(
                gr, "BatchNorm2d", 2, dtype=F64), (1, 2, 2, 3), F64)


class GroupedConvolutions(unittest.TestCase):

    def test_channel_split_cutting_groups(self):
        # 6 channels in 2 or 3 groups over the channel ranks: parts of
        # 2 (3 ranks) or 3 (2, 4 ranks) channels cut groups; the module
        # moves the channels to whole groups first.
        for g in channel_grids() + ([(1, P, 1, 1)] if P > 1 else []):
            for groups in (2, 3):
                check_module(self, g, lambda gr: module(
                    gr, "Conv2d", 6, 6, 3, padding=1, groups=groups,
                    dtype=F64), (2, 6, 5, 4), F64)
        if P > 1:
            check_module(self, (1, P, 1, 1, 1), lambda gr: module(
                gr, "Conv3d", 6, 4, 2, groups=2, dtype=F64),
                (1, 6, 3, 4, 3), F64)


class OutputPadding(unittest.TestCase):

    def test_output_padding_below_dilation_not_stride(self):
        # torch.nn takes output padding < max(stride, dilation).
        cases = [
            dict(kernel_size=3, stride=1, dilation=2, output_padding=1),
            dict(kernel_size=3, stride=1, dilation=3, output_padding=2,
                 padding=1),
            dict(kernel_size=2, stride=2, dilation=4, output_padding=3,
                 padding=2),
            dict(kernel_size=(3, 2), stride=(1, 2), dilation=(3, 3),
                 output_padding=(2, 2), padding=(0, 1), bias=False),
        ]
        for g in grids(4, channels=False):
            for kw in cases:
                check_module(self, g, lambda gr: module(
                    gr, "ConvTranspose2d", 2, 3, dtype=F64, **kw),
                    (2, 2, 5, 4), F64)
        for g in grids(5, channels=False):
            check_module(self, g, lambda gr: module(
                gr, "ConvTranspose3d", 2, 2, 2, stride=1, dilation=2,
                output_padding=1, dtype=F64), (1, 2, 3, 4, 2), F64)


class SplitOtherwise(unittest.TestCase):

    def skip_connection(self, g, size):
        """An encoder output and the transposed convolution's upsampled
        one, split differently where the rows do not divide evenly."""
        grid = distconv.ProcessGrid(COMM, g)
        torch.manual_seed(11)
        pool = module(grid, "MaxPool2d", 2)
        up = module(grid, "ConvTranspose2d", 3, 2, 2, stride=2, dtype=F64)
        ref_up = module(None, "ConvTranspose2d", 3, 2, 2, stride=2,
                        dtype=F64)
        ref_up.load_state_dict(up.state_dict())
        skip = torch.randn(2, 3, *size, dtype=F64, requires_grad=True)
        s = distconv.shard(grid, skip.detach()).requires_grad_()
        return grid, s, up(pool(s)), skip, ref_up(torch.nn.MaxPool2d(2)(skip))

    def test_cat_and_add_of_inputs_split_otherwise(self):
        for g in grids(4, channels=False):
            grid, s, u, skip, ref_u = self.skip_connection(g, (20, 12))
            y = distconv.add(grid, distconv.cat(grid, [s, u]),
                             distconv.cat(grid, [u, s]))
            want = torch.cat([skip, ref_u], 1) + torch.cat([ref_u, skip], 1)
            assert_close(self, distconv.gather(grid, y).detach(),
                         want.detach(), F64, "cat + add on %s" % (g,))
            dy = torch.randn(want.shape, dtype=F64)
            y.backward(distconv.shard_like(grid, dy, y))
            want.backward(dy)
            assert_close(self, distconv.gather(grid, s.grad), skip.grad, F64,
                         "gradient through the skip connection on %s" % (g,))

    def test_redistribute_like(self):
        for g in grids(4, channels=False):
            grid, s, u, skip, ref_u = self.skip_connection(g, (20, 12))
            moved = distconv.redistribute_like(grid, u, s[:, :2])
            self.assertEqual(moved.shape[2:], s.shape[2:])
            assert_close(self, distconv.gather(grid, moved).detach(),
                         ref_u.detach(), F64, "moved on %s" % (g,))
            labels = torch.randint(0, 5, (2, 1, 20, 12))
            mine = distconv.redistribute_like(
                grid, distconv.shard_like(grid, labels, u[:, :1]), s[:, :1])
            self.assertTrue(torch.equal(mine, distconv.shard(grid, labels)))
            (moved * 2).sum().backward()
            (ref_u * 2).sum().backward()
            assert_close(self, distconv.gather(grid, s.grad), skip.grad, F64,
                         "gradient through redistribute_like on %s" % (g,))

    def test_shapes_that_differ_are_an_error(self):
        grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        a = distconv.shard(grid, torch.randn(1, 2, 8, 4, dtype=F64))
        b = distconv.shard(grid, torch.randn(1, 2, 9, 4, dtype=F64))
        assert_raises_everywhere(self, "shape mismatch", "(1, 2, 9, 4)",
                                 lambda: distconv.cat(grid, [a, b]))
        assert_raises_everywhere(self, "shape mismatch", "(1, 2, 9, 4)",
                                 lambda: distconv.add(grid, a, b))
        assert_raises_everywhere(
            self, "shape mismatch", "(1, 2, 9, 4)",
            lambda: distconv.redistribute_like(grid, b, a))


if __name__ == "__main__":
    main()
