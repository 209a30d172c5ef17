"""What the PyTorch examples share: the namespace a network is built from
(Layers: torch.nn's, or distconv.nn's over a grid), the command line, the
grid, sharding the batch, labels from a synthetic batch, the training loop
and the images/s report. An example gives its network's constructor and
its synthetic batch.

    run(description, build(L, dtype), batch(dtype), args)
"""
import argparse
import contextlib
import functools
import time

import torch


class Layers:
    """The layers a network is built from: distconv.nn's over `grid`, or
    torch.nn's when grid is None. The same network code serves both."""

    def __init__(self, grid=None):
        self.grid = grid
        if grid is not None:
            import distconv
            self._distconv = distconv

    def __getattr__(self, name):
        if self.grid is None:
            return getattr(torch.nn, name)
        return functools.partial(getattr(self._distconv.nn, name), self.grid)

    def cat(self, tensors):
        if self.grid is None:
            return torch.cat(tensors, 1)
        return self._distconv.cat(self.grid, tensors)

    def interpolate(self, x, **kwargs):
        """F.interpolate (distconv.interpolate over the grid)."""
        if self.grid is None:
            return torch.nn.functional.interpolate(x, **kwargs)
        return self._distconv.interpolate(self.grid, x, **kwargs)


def labels_of_mean(x, classes):
    """Each cell's class: its channels' mean bucketed by thresholds spread
    over about one standard deviation."""
    mean = x.mean(1)
    t = mean.std().item()
    edges = torch.linspace(-t, t, classes - 1, dtype=torch.float64) \
        if classes > 1 else torch.zeros(0, dtype=torch.float64)
    return torch.bucketize(mean, edges)


def parser(description, defaults):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--grid", default=None,
                   help="NxCxHxW or NxCxDxHxW, product = ranks (default: "
                   "the ranks along the first spatial dimension)")
    p.add_argument("--reference", action="store_true",
                   help="torch.nn on one process instead")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (with --reference)")
    p.add_argument("--steps", type=int, default=defaults.get("steps", 5))
    p.add_argument("--lr", type=float, default=defaults.get("lr", 1e-3))
    p.add_argument("--samples", type=int, default=defaults.get("samples", 2))
    p.add_argument("--dtype", choices=["float32", "float64"],
                   default="float32")
    p.add_argument("--profile", action="store_true",
                   help="time every distconv.nn module's passes in the "
                   "steps after the first (distconv.Profiler); rank 0 "
                   "prints the table")
    p.add_argument("--profile-json", default=None, metavar="FILE",
                   help="--profile, and rank 0 writes its JSON to FILE "
                   "(perf/plot_profile.py)")
    return p


def train(net, L, x, labels, steps, lr, report=None, optimizer=None,
          profiler=None):
    """`optimizer(parameters)` (default torch.optim.Adam at `lr`) on one
    batch; the losses and the seconds of each step. `profiler`
    (distconv.Profiler) times the steps after the first."""
    loss_fn = L.CrossEntropyLoss()
    opt = (optimizer or (lambda p: torch.optim.Adam(p, lr=lr)))(
        net.parameters())
    losses, times = [], []
    for step in range(steps):
        timed = profiler.step() if profiler and (step > 0 or steps == 1) \
            else contextlib.nullcontext()
        start = time.perf_counter()
        with timed:
            opt.zero_grad()
            loss = loss_fn(net(x), labels)
            loss.backward()
            opt.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
        if report:
            report("step %d loss %.6f time %.3f s" % (step, losses[-1],
                                                      times[-1]))
    return losses, times


def shard_batch(L, x, labels):
    """The batch as this rank's shards (labels keep their dtype)."""
    if L.grid is None:
        return x, labels
    import distconv
    return (distconv.shard(L.grid, x),
            distconv.shard(L.grid, labels.unsqueeze(1)).squeeze(1))


def run(description, build, batch, args):
    """Trains `build(L, dtype)` on `batch(dtype)` as the command line says,
    printing each step and the images/s of the steps after the first."""
    dtype = getattr(torch, args.dtype)
    profile = args.profile or args.profile_json
    if profile and args.reference:
        raise SystemExit("--profile times distconv.nn modules; with "
                         "--reference use torch.profiler")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x, labels = batch(dtype)
    if args.reference:
        L, rank = Layers(), 0
        what = "torch.nn, 1 process, %d threads" % args.threads
    else:
        from mpi4py import MPI
        import distconv
        comm = MPI.COMM_WORLD
        shape = args.grid or "x".join(
            ["1", "1", str(comm.size)] + ["1"] * (x.dim() - 3))
        grid = distconv.ProcessGrid(comm, tuple(int(v) for v in
                                                shape.split("x")))
        L, rank = Layers(grid), comm.rank
        what = "distconv.nn, grid %s, %d ranks" % (shape, comm.size)
    torch.manual_seed(1)
    net = build(L, dtype)
    xs, ls = shard_batch(L, x, labels)
    report = print if rank == 0 else None
    if report:
        report("%s: input %s, %s, %s" % (description, tuple(x.shape),
                                        args.dtype, what))
    profiler = distconv.Profiler(grid, net) if profile else None
    _, times = train(net, L, xs, ls, args.steps, args.lr, report,
                     profiler=profiler)
    if report and len(times) > 1:
        report("images/s %.3f (steps 1-%d, %.3f s per step)" % (
            x.shape[0] * (len(times) - 1) / sum(times[1:]), len(times) - 1,
            sum(times[1:]) / (len(times) - 1)))
    if profiler:
        table, text = profiler.summary()  # collective
        profiler.close()
        if report:
            report("profile, per step (the steps after the first)\n" + table)
            if args.profile_json:
                with open(args.profile_json, "w") as f:
                    f.write(text)
                report("profile written to %s" % args.profile_json)
