"""Bad input raises the same distconv.Error on every rank, and nothing
hangs: wrong dtype, a tensor not on the CPU, a grid that does not fit the
communicator, shards that do not tile a tensor over the grid, ranks that
disagree on the dtype, shapes a layer cannot take, unsupported options.
After each error the module still works."""
import unittest

import torch

import distconv
from harness import COMM, P, assert_raises_everywhere, main


class Errors(unittest.TestCase):

    def setUp(self):
        self.grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        self.conv = distconv.nn.Conv2d(self.grid, 3, 4, 3, padding=1)

    def good(self):
        x = torch.randn(2, 3, 6 * P, 5)
        return distconv.shard(self.grid, x)

    def works_after(self):
        y = self.conv(self.good())
        self.assertEqual(y.shape[1], 4)

    def test_wrong_dtype(self):
        x = self.good().double()
        assert_raises_everywhere(self, "invalid argument", "torch.float64 "
                                 "but the module's parameters torch.float32",
                                 lambda: self.conv(x))
        ints = self.good().int()
        assert_raises_everywhere(self, "invalid argument",
                                 "ReLU input has dtype torch.int32; "
                                 "distconv's layers take torch.float32, "
                                 "torch.float64, torch.bfloat16, "
                                 "torch.float16",
                                 lambda: distconv.nn.ReLU(self.grid)(ints))
        self.works_after()

    def test_not_on_cpu(self):
        x = torch.empty(2, 3, 6, 5, device="meta")
        assert_raises_everywhere(self, "invalid argument", "device meta",
                                 lambda: self.conv(x))
        self.works_after()

    def test_only_one_rank_wrong(self):
        # Rank 0 alone passes a bad tensor; every rank raises its error.
        x = self.good()
        if COMM.rank == 0:
            x = x.double()
        assert_raises_everywhere(self, "invalid argument", "(on rank 0)",
                                 lambda: self.conv(x))
        self.works_after()

    def test_dtypes_that_differ_between_ranks(self):
        if P < 2:
            self.skipTest("needs two ranks")
        x = self.good()
        if COMM.rank == 1:
            x = x.double()
        assert_raises_everywhere(self, "invalid argument",
                                 "different dtypes",
                                 lambda: distconv.nn.ReLU(self.grid)(x))

    def test_shards_that_do_not_tile(self):
        if P < 2:
            self.skipTest("needs two ranks")
        x = torch.randn(2 + (COMM.rank == 1), 3, 4, 5)
        assert_raises_everywhere(self, "shape mismatch", "do not tile",
                                 lambda: self.conv(x))
        self.works_after()

    def test_shards_of_another_grid(self):
        # Shards split over W fed to a module whose grid splits H: the
        # shapes alone would tile a tensor of another shape.
        if P < 2:
            self.skipTest("needs two ranks")
        other = distconv.ProcessGrid(COMM, (1, 1, 1, P))
        x = distconv.shard(other, torch.randn(2, 3, 6, 5 * P))
        assert_raises_everywhere(
            self, "invalid argument",
            "Conv2d input is a shard over a grid 1x1x1x%d, this grid is "
            "1x1x%dx1" % (P, P), lambda: self.conv(x))
        y = distconv.nn.ReLU(other)(x)
        assert_raises_everywhere(
            self, "invalid argument", "shard over a grid 1x1x1x%d" % P,
            lambda: distconv.gather(self.grid, y))
        half = COMM.Split(COMM.rank % 2, COMM.rank)
        small = distconv.ProcessGrid(half, (1, 1, half.size, 1))
        s = distconv.shard(small, torch.randn(2, 3, 6, 5))
        if half.size != P:
            assert_raises_everywhere(
                self, "invalid argument", "shard over a grid",
                lambda: self.conv(s))
        self.works_after()

    def test_grid_that_does_not_fit_the_communicator(self):
        assert_raises_everywhere(
            self, "grid mismatch", "",
            lambda: distconv.ProcessGrid(COMM, (1, 1, P + 1, 1)))
        self.assertRaises(distconv.Error, distconv.ProcessGrid, "not a comm",
                          (1, 1, 1, 1))

    def test_shapes_a_layer_cannot_take(self):
        x3d = torch.randn(1, 3, 4, 4, 4)
        grid3d = distconv.ProcessGrid(COMM, (1, 1, P, 1, 1))
        assert_raises_everywhere(
            self, "invalid argument", "Conv2d takes 4",
            lambda: self.conv(distconv.shard(grid3d, x3d)))
        wrong_channels = distconv.shard(self.grid, torch.randn(2, 5, 6, 5))
        assert_raises_everywhere(self, "shape mismatch", "has 5 channels",
                                 lambda: self.conv(wrong_channels))
        self.works_after()

    def test_unsupported_options(self):
        for make in (
                lambda: distconv.nn.Conv2d(self.grid, 3, 4, 3,
                                           padding_mode="reflect"),
                lambda: distconv.nn.ConvTranspose2d(self.grid, 3, 4, 3,
                                                    padding_mode="circular"),
                lambda: distconv.nn.MaxPool2d(self.grid, 2, ceil_mode=True),
                lambda: distconv.nn.BatchNorm2d(self.grid, 3, momentum=None),
                lambda: distconv.nn.CrossEntropyLoss(self.grid,
                                                     label_smoothing=0.1)):
            assert_raises_everywhere(self, "unsupported", "", make)

    def test_batch_norm_on_a_channel_split(self):
        if P < 2:
            self.skipTest("needs two ranks")
        grid = distconv.ProcessGrid(COMM, (1, P, 1, 1))
        bn = distconv.nn.BatchNorm2d(grid, 4)
        x = distconv.shard(grid, torch.randn(2, 4, 3, 3))
        assert_raises_everywhere(self, "unsupported", "", lambda: bn(x))


if __name__ == "__main__":
    main()
