"""A U-Net written once for torch.nn (convolution, batch norm, ReLU, max
pooling, transposed convolution, a skip connection by concatenation,
cross-entropy), 2D and 3D, built from distconv.nn by changing only the
namespace, trained 3 steps with torch.optim.Adam on 1, 2, 3, 4 and 6
ranks, on grids splitting samples, space or both, with sizes that do not
divide: the loss curve and the parameters match torch.nn on one process
in float64 (to 1e-9), and the state_dict loads into the torch.nn model."""
import unittest

import torch

import distconv
from harness import COMM, P, assert_close, main
from torch_example import Layers

F64 = torch.float64

GRIDS_2D = {1: [(1, 1, 1, 1)],
            2: [(2, 1, 1, 1), (1, 1, 2, 1), (1, 1, 1, 2)],
            3: [(3, 1, 1, 1), (1, 1, 3, 1), (1, 1, 1, 3)],
            4: [(2, 1, 2, 1), (1, 1, 2, 2), (4, 1, 1, 1)],
            6: [(2, 1, 3, 1), (1, 1, 3, 2), (6, 1, 1, 1)]}
GRIDS_3D = {1: [(1, 1, 1, 1, 1)],
            2: [(1, 1, 2, 1, 1), (2, 1, 1, 1, 1)],
            3: [(1, 1, 1, 3, 1), (3, 1, 1, 1, 1)],
            4: [(1, 1, 2, 1, 2), (2, 1, 2, 1, 1)],
            6: [(1, 1, 3, 2, 1), (2, 1, 1, 1, 3)]}


class UNet(torch.nn.Module):
    """Two levels: encoder, pooled bottom, transposed convolution back up,
    the skip connection concatenated, a 1x1 head of `classes`."""

    def __init__(self, nn, dims, channels, width, classes):
        super().__init__()
        self.nn = nn
        d = "%dd" % dims
        conv = getattr(nn, "Conv" + d)
        norm = getattr(nn, "BatchNorm" + d)

        def block(cin, cout):
            return torch.nn.Sequential(
                conv(cin, cout, 3, padding=1, dtype=F64), norm(cout, dtype=F64),
                nn.ReLU())
        self.enc = block(channels, width)
        self.pool = getattr(nn, "MaxPool" + d)(2)
        self.bottom = torch.nn.Sequential(block(width, 2 * width),
                                          block(2 * width, 2 * width))
        self.up = getattr(nn, "ConvTranspose" + d)(2 * width, width, 2,
                                                   stride=2, dtype=F64)
        self.dec = block(2 * width, width)
        self.head = conv(width, classes, 1, dtype=F64)

    def forward(self, x):
        skip = self.enc(x)
        y = self.up(self.bottom(self.pool(skip)))
        return self.head(self.dec(self.nn.cat([skip, y])))


def train(net, nn, x, labels, steps=3):
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(net(x), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


class UNetTraining(unittest.TestCase):

    def check(self, dims, grids, shape, classes=3):
        torch.manual_seed(5)
        x = torch.randn(shape, dtype=F64)
        labels = torch.randint(0, classes, (shape[0],) + shape[2:])
        for g in grids[P]:
            grid = distconv.ProcessGrid(COMM, g)
            torch.manual_seed(9)
            nn = Layers(grid)
            net = UNet(nn, dims, shape[1], 3, classes)
            ref = UNet(Layers(), dims, shape[1], 3, classes)
            ref.load_state_dict(net.state_dict())
            got = train(net, nn, distconv.shard(grid, x), distconv.shard(
                grid, labels.unsqueeze(1)).squeeze(1))
            want = train(ref, Layers(), x, labels)
            self.assertLess(want[-1], want[0])
            assert_close(self, torch.tensor(got), torch.tensor(want), F64,
                         "losses on grid %s" % (g,), tol=1e-9)
            for (name, a), (_, b) in zip(net.state_dict().items(),
                                         ref.state_dict().items()):
                assert_close(self, a.double(), b.double(), F64,
                             "%s after 3 steps on grid %s" % (name, g),
                             tol=1e-9)
            # The trained distconv model's state_dict is torch.nn's.
            loaded = UNet(Layers(), dims, shape[1], 3, classes)
            loaded.load_state_dict(net.state_dict())
            loaded.eval()
            ref.eval()
            assert_close(self, loaded(x).detach(), ref(x).detach(), F64,
                         "loaded model on grid %s" % (g,), tol=1e-9)

    def test_unet_2d(self):
        # 20 x 12 cells, 3 samples: rows 7/7/6 over 3 ranks pool to 4/3/3
        # and come back up 8/6/6, so the skip connection's sides are split
        # differently.
        self.check(2, GRIDS_2D, (3, 2, 20, 12))

    def test_unet_3d(self):
        self.check(3, GRIDS_3D, (3, 2, 10, 6, 6))


if __name__ == "__main__":
    main()
