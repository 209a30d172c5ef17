"""The two scientific networks of examples/ (deeplab.py: a DeepLabv3+-like
network with atrous convolutions, ASPP's image-level branch and bilinear
upsampling; unet3d.py: a 3D U-Net with group or instance normalisation and
trilinear upsampling), written once for torch.nn, built from distconv.nn
by changing the namespace: 3 Adam steps on grids splitting samples and
space, sizes that do not divide, losses and parameters within 1e-9 of
torch.nn on one process in float64. With dropout, the losses on every grid
are one process's with the same seed."""
import unittest

import torch
from mpi4py import MPI

import distconv
import deeplab
import unet3d
from harness import COMM, P, assert_close, main
from torch_example import Layers, shard_batch, train

F64 = torch.float64

GRIDS_2D = {1: [(1, 1, 1, 1)], 2: [(1, 1, 2, 1), (2, 1, 1, 1)],
            3: [(1, 1, 3, 1), (1, 1, 1, 3)], 4: [(1, 1, 2, 2), (2, 1, 2, 1)]}
GRIDS_3D = {1: [(1, 1, 1, 1, 1)], 2: [(1, 1, 2, 1, 1)],
            3: [(1, 1, 1, 3, 1), (3, 1, 1, 1, 1)],
            4: [(1, 1, 2, 1, 2), (2, 1, 1, 2, 1)]}


def compare(test, build, batch, grids, steps=3):
    x, labels = batch()
    for g in grids:
        grid = distconv.ProcessGrid(COMM, g)
        torch.manual_seed(3)
        net = build(Layers(grid))
        torch.manual_seed(3)
        ref = build(Layers())
        got, _ = train(net, Layers(grid), *shard_batch(Layers(grid), x,
                                                       labels), steps, 0.01)
        want, _ = train(ref, Layers(), x, labels, steps, 0.01)
        test.assertLess(want[-1], want[0])
        assert_close(test, torch.tensor(got), torch.tensor(want), F64,
                     "losses on grid %s" % (g,), tol=1e-9)
        for (name, a), (_, b) in zip(net.state_dict().items(),
                                     ref.state_dict().items()):
            assert_close(test, a.double(), b.double(), F64,
                         "%s after %d steps on grid %s" % (name, steps, g),
                         tol=1e-9)


class Networks(unittest.TestCase):

    def test_deeplab(self):
        # 3 samples of 20 x 28: 10 x 14 after the stem, 5 x 7 deep.
        compare(self, lambda L: deeplab.DeepLab(L, 3, 8, 3, (20, 28),
                                                dropout=0.0, dtype=F64),
                lambda: deeplab.synthetic_batch(3, 3, (20, 28), 3, F64),
                GRIDS_2D[P])

    def test_unet3d_group_norm(self):
        compare(self, lambda L: unet3d.UNet3d(L, 2, 4, 3, "group", F64),
                lambda: unet3d.synthetic_batch(2, 2, (6, 10, 6), 3, F64),
                GRIDS_3D[P])

    def test_unet3d_instance_norm(self):
        compare(self, lambda L: unet3d.UNet3d(L, 2, 4, 3, "instance", F64),
                lambda: unet3d.synthetic_batch(1, 2, (8, 6, 6), 3, F64),
                GRIDS_3D[P][:1])

    def test_dropout_losses_as_one_process(self):
        x, labels = deeplab.synthetic_batch(2, 3, (16, 20), 3, F64)

        def losses(comm, g):
            grid = distconv.ProcessGrid(comm, g)
            torch.manual_seed(5)
            net = deeplab.DeepLab(Layers(grid), 3, 8, 3, (16, 20),
                                  dropout=0.3, dtype=F64)
            got, _ = train(net, Layers(grid), *shard_batch(Layers(grid), x,
                                                           labels), 3, 0.01)
            return got

        one = losses(MPI.COMM_SELF, (1, 1, 1, 1))
        for g in GRIDS_2D[P]:
            assert_close(self, torch.tensor(losses(COMM, g)),
                         torch.tensor(one), F64,
                         "losses with dropout on grid %s" % (g,), tol=1e-9)


if __name__ == "__main__":
    main()
