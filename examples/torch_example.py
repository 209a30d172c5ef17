"""What the PyTorch examples share: the command line, the grid, sharding
the batch, the training loop (torch.optim.Adam) and the images/s report.
An example gives its network's constructor (from a Layers namespace:
torch.nn's or distconv.nn's over a grid) and its synthetic batch.

    run(description, build(L, args, dtype), batch(args, dtype), extra_args)
"""
import argparse
import time

import torch

from torch_segmentation import Layers


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
    return p


def train(net, L, x, labels, steps, lr, report=None):
    """Adam on one batch; the losses and the seconds of each step."""
    loss_fn = L.CrossEntropyLoss()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    losses, times = [], []
    for step in range(steps):
        start = time.perf_counter()
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
    _, times = train(net, L, xs, ls, args.steps, args.lr, report)
    if report and len(times) > 1:
        report("images/s %.3f (steps 1-%d, %.3f s per step)" % (
            x.shape[0] * (len(times) - 1) / sum(times[1:]), len(times) - 1,
            sum(times[1:]) / (len(times) - 1)))
