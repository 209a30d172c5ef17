"""The memory of the shards the package hands out (layer outputs and
input gradients): it comes from the grid's cache, goes back to it only when
the last tensor or view on it dies, is reused for the next shard of its
size, survives its grid, and the cache can be limited and emptied. Layers
that write a tensor with halos keep that buffer from call to call; what
one call leaves in it never reaches the next call's results."""
import gc
import unittest

import torch

import distconv
from harness import COMM, P, assert_close, main


class Memory(unittest.TestCase):

    def setUp(self):
        self.grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        torch.manual_seed(0)
        self.conv = distconv.nn.Conv2d(self.grid, 3, 4, 3, padding=1)
        self.x = distconv.shard(self.grid, torch.randn(2, 3, 5 * P, 6))

    def test_output_is_channels_last_and_writable(self):
        y = self.conv(self.x)
        self.assertTrue(y.is_contiguous(memory_format=torch.channels_last))
        y.detach().add_(1)  # writable: plain memory, not read-only numpy

    def test_dead_output_is_reused(self):
        y = self.conv(self.x)
        first = y.data_ptr()
        want = y.detach().clone()
        del y
        self.assertGreater(self.grid.cached_bytes, 0)
        again = self.conv(self.x)
        self.assertEqual(again.data_ptr(), first)
        self.assertTrue(torch.equal(again.detach(), want))

    def test_view_keeps_its_memory(self):
        y = self.conv(self.x)
        ptr = y.data_ptr()
        view = y[:, 1:3]
        kept = view.detach().clone()
        del y
        other = self.conv(self.x * 2)
        self.assertNotEqual(other.data_ptr(), ptr)
        self.assertTrue(torch.equal(view.detach(), kept))

    def test_gradients_come_from_the_cache(self):
        x = self.x.clone().requires_grad_()
        self.conv(x).sum().backward()
        grad = x.grad.detach().clone()
        ptr = x.grad.data_ptr()
        x.grad = None
        self.conv(x).sum().backward()
        self.assertEqual(x.grad.data_ptr(), ptr)
        self.assertTrue(torch.equal(x.grad, grad))

    def test_tensor_outlives_its_grid(self):
        grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        relu = distconv.nn.ReLU(grid)
        x = distconv.shard(grid, torch.randn(2, 3, 4 * P, 5))
        y = relu(x)
        del relu, grid
        gc.collect()
        self.assertTrue(torch.equal(y, x.clamp(min=0)))
        del y  # freed, with no cache to return to

    def test_limit_and_empty(self):
        self.assertIsNone(self.grid.cache_limit)
        y = self.conv(self.x)
        del y
        self.assertGreater(self.grid.cached_bytes, 0)
        self.grid.cache_limit = 0
        self.assertEqual(self.grid.cached_bytes, 0)
        y = self.conv(self.x)
        del y
        self.assertEqual(self.grid.cached_bytes, 0)
        self.grid.cache_limit = None
        y = self.conv(self.x)
        del y
        self.assertGreater(self.grid.cached_bytes, 0)
        self.grid.empty_cache()
        self.assertEqual(self.grid.cached_bytes, 0)

    def test_buffers_with_halos_serve_every_call(self):
        # Pooling's input gradient, the transposed convolution's output and
        # interpolation's input gradient have halos on these shards (H
        # split 5/5/...: odd shard starts); each call gets different data.
        d = torch.float64
        cases = [
            ("MaxPool2d", lambda nn, *g: nn.MaxPool2d(*g, 3, 2, padding=1)),
            ("ConvTranspose2d", lambda nn, *g: nn.ConvTranspose2d(
                *g, 3, 2, 3, 2, padding=1, output_padding=1).double()),
            ("Upsample", lambda nn, *g: nn.Upsample(
                *g, scale_factor=2, mode="bilinear", align_corners=False)),
        ]
        for name, make in cases:
            torch.manual_seed(2)
            mod = make(distconv.nn, self.grid)
            ref = make(torch.nn)
            ref.load_state_dict(mod.state_dict())
            for call in range(3):
                x = torch.randn(2, 3, 5 * P, 6, dtype=d)
                xs = distconv.shard(self.grid, x).requires_grad_()
                xr = x.clone().requires_grad_()
                y, yr = mod(xs), ref(xr)
                dy = torch.randn(yr.shape, dtype=d)
                y.backward(distconv.shard_like(self.grid, dy, y))
                yr.backward(dy)
                what = "%s, call %d" % (name, call)
                assert_close(self, distconv.gather(self.grid, y).detach(),
                             yr.detach(), d, what + ": output")
                assert_close(self, distconv.gather(self.grid, xs.grad),
                             xr.grad, d, what + ": input gradient")


if __name__ == "__main__":
    main()
