"""distconv.Profiler: the passes of every distconv.nn module of a model,
timed and summed over the grid's ranks into the C++ profile's table and
JSON; a convolution's FLOPs add up over the ranks to the global problem's;
profiling changes no result; close() detaches."""
import contextlib
import gc
import io
import json
import os
import sys
import tempfile
import unittest
import weakref

import torch

import deeplab
import distconv
from harness import COMM, P, main


class Net(torch.nn.Module):

    def __init__(self, grid):
        super().__init__()
        self.conv = distconv.nn.Conv2d(grid, 3, 4, 3, padding=1, bias=False)
        self.bn = distconv.nn.BatchNorm2d(grid, 4)
        self.relu = distconv.nn.ReLU(grid)
        self.pool = distconv.nn.MaxPool2d(grid, 2)

    def forward(self, x):
        return self.pool(self.relu(self.bn(self.conv(x))))


class Profile(unittest.TestCase):

    def setUp(self):
        self.grid = distconv.ProcessGrid(COMM, (1, 1, P, 1))
        torch.manual_seed(0)
        self.shape = (2, 3, 4 * P + 1, 6)
        self.x = distconv.shard(self.grid, torch.randn(self.shape))

    def train(self, net, steps, profiler=None):
        out = []
        for _ in range(steps):
            ctx = profiler.step() if profiler else _Nothing()
            with ctx:
                net.zero_grad()
                y = net(self.x)
                loss = distconv.gather(self.grid, y).square().sum()
                loss.backward()
            out.append(loss.item())
        return out, [p.grad.clone() for p in net.parameters()]

    def test_rows_flops_and_results(self):
        torch.manual_seed(1)
        plain = Net(self.grid)
        torch.manual_seed(1)
        profiled = Net(self.grid)
        want = self.train(plain, 2)
        prof = distconv.Profiler(self.grid, profiled)
        got = self.train(profiled, 2, prof)
        self.assertEqual(want[0], got[0])  # the same losses ...
        for a, b in zip(want[1], got[1]):  # ... and gradients, bit for bit
            self.assertTrue(torch.equal(a, b))
        self.assertEqual(prof.steps, 2)
        table, text = prof.summary()
        p = json.loads(text)
        self.assertEqual((p["ranks"], p["steps"]), (P, 2))
        rows = {(r["layer"], r["pass"]): r for r in p["rows"]}
        for name in ("conv", "bn", "relu", "pool"):
            for pass_ in ("forward", "backward"):
                self.assertIn((name, pass_), rows, table)
                self.assertEqual(rows[(name, pass_)]["calls_per_step"], 1)
                self.assertIn(name, table)
        n, c, h, w = self.shape
        fwd = rows[("conv", "forward")]
        flops = fwd["gflops"] * 1e9 * fwd["ms_per_step"] * 1e-3
        self.assertAlmostEqual(flops / (2.0 * n * 4 * h * w * c * 9), 1.0,
                               places=4)
        prof.close()
        self.assertNotIsInstance(profiled.conv._layer,
                                 distconv._profile._Timed)

    def test_bilinear_upsampling_is_timed(self):
        up = distconv.nn.Upsample(self.grid, scale_factor=2,
                                  mode="bilinear")
        prof = distconv.Profiler(self.grid, up)
        x = self.x.detach().requires_grad_()
        for _ in range(2):
            with prof.step():
                up(x).sum().backward()
        rows = json.loads(prof.summary()[1])["rows"]
        self.assertEqual(sorted(r["pass"] for r in rows),
                         ["backward", "forward"], rows)
        prof.close()

    def test_a_summary_over_this_rank_alone(self):
        from mpi4py import MPI
        net = Net(self.grid)
        prof = distconv.Profiler(self.grid, net)
        self.train(net, 2, prof)
        alone = distconv.ProcessGrid(MPI.COMM_SELF, (1, 1, 1, 1))
        mine = json.loads(prof.summary(alone)[1])
        merged = json.loads(prof.summary()[1])
        self.assertEqual((mine["ranks"], mine["steps"]), (1, 2))
        self.assertEqual(merged["ranks"], P)
        # This rank's step is at most the slowest rank's, and so is each
        # of its rows.
        self.assertLessEqual(mine["step_ms"], merged["step_ms"] + 1e-9)
        slowest = {(r["layer"], r["pass"]): r["ms_per_step"]
                   for r in merged["rows"]}
        for r in mine["rows"]:
            self.assertLessEqual(r["ms_per_step"],
                                 slowest[(r["layer"], r["pass"])] + 1e-9)
        prof.close()

    def test_layers_planned_later_are_timed_and_close_detaches(self):
        net = Net(self.grid)
        prof = distconv.Profiler(self.grid, net)  # before any forward
        self.train(net, 1, prof)
        self.assertIsInstance(net.conv._layer, distconv._profile._Timed)
        net(self.x)  # outside a step: not counted
        rows = json.loads(prof.summary()[1])["rows"]
        self.assertTrue(all(r["calls_per_step"] == 1 for r in rows), rows)
        prof.close()
        self.assertNotIsInstance(net.conv._layer, distconv._profile._Timed)
        self.train(net, 1)  # runs bare
        self.assertEqual(prof.steps, 1)

    def test_the_examples_profile_option(self):
        path = os.path.join(tempfile.gettempdir(),
                            "profile_test_%d.json" % os.getpid())
        path = COMM.bcast(path)
        argv = sys.argv
        sys.argv = ["deeplab.py", "--size", "16", "16", "--steps", "3",
                    "--channels", "3", "--width", "4", "--dropout", "0",
                    "--profile-json", path]
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                deeplab.main()
        finally:
            sys.argv = argv
        COMM.Barrier()
        if COMM.rank == 0:
            self.assertIn("profile, per step", out.getvalue())
            with open(path) as f:
                p = json.load(f)
            os.remove(path)
            self.assertEqual((p["ranks"], p["steps"]), (P, 2))
            passes = {(r["layer"], r["pass"]) for r in p["rows"]}
            self.assertIn(("stem.0", "forward"), passes)
            self.assertIn(("stem.0", "backward"), passes)

    def test_no_reference_cycle_keeps_a_model_alive(self):
        # A cycle would leave the model (and its grid, whose freeing is
        # collective) to the garbage collector, which runs at a different
        # moment on each rank.
        gc.disable()
        try:
            net = Net(self.grid)
            prof = distconv.Profiler(self.grid, net)
            self.train(net, 1, prof)
            alive = weakref.ref(net.conv)
            del net, prof
            self.assertIsNone(alive())
        finally:
            gc.enable()

    def test_a_model_without_distconv_modules(self):
        with self.assertRaises(ValueError):
            distconv.Profiler(self.grid, torch.nn.ReLU())


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
