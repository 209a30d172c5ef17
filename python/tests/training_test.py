"""The U-Net of examples/torch_segmentation.py built from distconv.nn
trains like the same network built from torch.nn on one process: same
initial weights, 5 SGD steps with momentum, the same losses and final
weights in float64 (to 1e-10), on grids splitting samples (unevenly) and
space."""
import unittest

import torch

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


if __name__ == "__main__":
    main()
