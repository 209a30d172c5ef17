"""The U-Net of examples/torch_segmentation.py built from distconv.nn
trains like the same network built from torch.nn on one process: same
initial weights, 5 SGD steps with momentum, the same losses and final
weights in float64 (to 1e-10), on grids splitting samples (unevenly) and
space. And the data-parallel recipe of docs/pytorch.md (replicas of a grid,
gradients averaged over the ranks at the same grid position) trains like
torch.nn on the whole batch."""
import unittest

import torch
from mpi4py import MPI

import distconv
import torch_segmentation as seg
from harness import COMM, P, assert_close, main

GRIDS = {1: [(1, 1, 1, 1)], 2: [(1, 1, 2, 1), (2, 1, 1, 1)],
         3: [(1, 1, 3, 1), (3, 1, 1, 1)], 4: [(1, 1, 2, 2), (2, 1, 2, 1)]}


class Training(unittest.TestCase):

    def test_unet_matches_torch_nn(self):
        for g in GRIDS[P]:
            samples = 3 if g[0] > 1 else 2  # uneven (or empty) sample shards
            x, labels = seg.synthetic_batch(samples, 3, 24, 3, torch.float64)
            grid = distconv.ProcessGrid(COMM, g)
            torch.manual_seed(7)
            net = seg.UNet(seg.Layers(grid), 3, 4, 3, torch.float64)
            ref = seg.UNet(seg.Layers(), 3, 4, 3, torch.float64)
            ref.load_state_dict(net.state_dict())
            quiet = lambda *_: None  # noqa: E731
            xs = distconv.shard(grid, x)
            ls = distconv.shard(grid, labels.unsqueeze(1).double()) \
                .squeeze(1).long()
            got, _ = seg.train(net, seg.Layers(grid), xs, ls, 5, 0.05, 0.9,
                               quiet)
            want, _ = seg.train(ref, seg.Layers(), x, labels, 5, 0.05, 0.9,
                                quiet)
            self.assertLess(want[-1], want[0])
            assert_close(self, torch.tensor(got), torch.tensor(want),
                         torch.float64, "losses on grid %s" % (g,))
            for (name, a), (_, b) in zip(net.state_dict().items(),
                                         ref.state_dict().items()):
                assert_close(self, a.double(), b.double(), torch.float64,
                             "%s after 5 steps on grid %s" % (name, g))

    @unittest.skipIf(P % 2, "needs an even number of ranks")
    def test_replicas_average_like_the_whole_batch(self):
        world, ranks_per_grid = COMM, P // 2
        replica, local = divmod(world.rank, ranks_per_grid)
        grid = distconv.ProcessGrid(world.Split(replica, local),
                                    (1, 1, ranks_per_grid, 1))
        peers = world.Split(local, replica)

        def net(g):
            L = seg.Layers(g)
            return torch.nn.Sequential(
                L.Conv2d(3, 5, 3, padding=1, dtype=torch.float64), L.ReLU(),
                L.Conv2d(5, 4, 3, padding=1, dtype=torch.float64))

        torch.manual_seed(3)
        mine = net(grid)
        ref = net(None)
        ref.load_state_dict(mine.state_dict())
        x, labels = seg.synthetic_batch(4, 3, 12, 4, torch.float64)
        half = slice(2 * replica, 2 * replica + 2)  # this replica's samples
        xs = distconv.shard(grid, x[half])
        ls = distconv.shard(grid, labels[half].unsqueeze(1).double()) \
            .squeeze(1).long()
        opt = torch.optim.SGD(mine.parameters(), lr=0.1, momentum=0.9)
        ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            distconv.nn.CrossEntropyLoss(grid)(mine(xs), ls).backward()
            for p in mine.parameters():
                peers.Allreduce(MPI.IN_PLACE, p.grad.numpy())
                p.grad /= peers.size
            opt.step()
            ref_opt.zero_grad()
            torch.nn.CrossEntropyLoss()(ref(x), labels).backward()
            ref_opt.step()
        for (name, a), (_, b) in zip(mine.state_dict().items(),
                                     ref.state_dict().items()):
            assert_close(self, a, b, torch.float64,
                         "%s after 3 averaged steps" % name)


if __name__ == "__main__":
    main()
