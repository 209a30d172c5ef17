"""distconv for PyTorch: distributed convolutional layers as torch.nn
modules, over tensors split across the ranks of an MPI process grid.

    from mpi4py import MPI
    import torch, distconv

    grid = distconv.ProcessGrid(MPI.COMM_WORLD, (1, 1, 2, 2))  # N C H W
    x = distconv.shard(grid, x_global)       # this rank's block
    conv = distconv.nn.Conv2d(grid, 16, 32, kernel_size=3, padding=1)
    y = conv(x)                              # this rank's block of the output
    y_global = distconv.gather(grid, y)      # the whole, on every rank

See docs/pytorch.md.
"""
import pkgutil

# The extension module may sit in another copy of this folder (Bazel's
# output tree): look for it in every `distconv` folder on sys.path.
__path__ = pkgutil.extend_path(__path__, __name__)

import torch  # noqa: E402

from . import _distconv as _C  # noqa: E402
from . import _functions as _F  # noqa: E402
from . import _tensors as _T  # noqa: E402

Error = _C.Error
ProcessGrid = _C.ProcessGrid

from . import nn  # noqa: E402,F401

__all__ = ["Error", "ProcessGrid", "shard", "shard_like", "gather", "scatter",
           "gather_to_root", "cat", "add", "redistribute", "nn"]


def _global_problem(grid, x, what):
    """What is wrong with `x` as a global tensor over `grid` ('' if
    nothing)."""
    problem = _T.problem_of(x, what)
    if not problem and x.dim() != grid.ndims:
        problem = "%s of %d dimensions over a %d-dimensional grid" % (
            what, x.dim(), grid.ndims)
    return problem


def shard(grid, x):
    """This rank's block of the global tensor `x`, which every rank passes
    (balanced blocks: the first parts one larger when a dimension does not
    divide). A copy, channels-last; differentiable."""
    _C.check(grid, _global_problem(grid, x, "shard input"))  # on every rank
    dist = _C.Distribution(tuple(x.shape), grid.shape)
    return _T.copy_of_block(x, dist.shard(grid.rank))


def shard_like(grid, x, like):
    """This rank's block of the global tensor `x` (on every rank) in the
    distribution that the shards `like` form, which need not be balanced
    (an upsampled or strided layer's output): to shard a target or an
    output gradient like a layer's output. A copy, channels-last."""
    dist = _T.agree(grid, like, "shard_like reference")
    problem = _T.problem_of(x, "shard_like input")
    if not problem and tuple(x.shape) != tuple(dist.global_shape):
        problem = "shard_like of a tensor of shape %s for shards of a " \
            "tensor of shape %s" % (tuple(x.shape), dist.global_shape)
    _C.check(grid, problem)
    return _T.copy_of_block(x, dist.shard(grid.rank))


def gather(grid, x):
    """The global tensor on every rank, from every rank's shard `x`
    (contiguous). Backward keeps this rank's block of the gradient."""
    dist = _T.agree(grid, x, "gather input")
    return _F.GatherFunction.apply(x, grid, dist)


def scatter(grid, x, root=0):
    """This rank's balanced block of the global tensor `x` held by `root`
    only (other ranks pass None): for tensors too big to hold on every
    rank. A copy, channels-last; not differentiable."""
    problem = ""
    if grid.rank == root:
        problem = _global_problem(grid, x, "scatter input")
    _C.check(grid, problem)
    is_root = grid.rank == root
    shape = _C.broadcast_shape(grid, tuple(x.shape) if is_root else (), root)
    code = torch.tensor([_T._CODE[x.dtype] if is_root else 0],
                        dtype=torch.float64)
    _T.broadcast_(grid, code, root)
    dtype = {1: torch.float32, 2: torch.float64}[int(code.item())]
    dist = _C.Distribution(shape, grid.shape)
    _, extent = dist.shard(grid.rank)
    out = _T.empty(grid, extent, dtype)
    src = x.detach().contiguous() if is_root else None
    getattr(_C, "scatter_from" + _T.suffix(dtype))(
        grid, dist, _T.ref(src) if is_root else (0, shape, shape),
        _T.ref(out), root)
    return out


def gather_to_root(grid, x, root=0):
    """The global tensor (contiguous) on `root`, None elsewhere, from every
    rank's shard `x`. Not differentiable."""
    dist = _T.agree(grid, x, "gather_to_root input")
    out = None
    target = (0, dist.global_shape, dist.global_shape)
    if grid.rank == root:
        out = torch.empty(dist.global_shape, dtype=x.dtype)
        target = _T.ref(out)
    getattr(_C, "gather_to" + _T.suffix(x.dtype))(grid, dist, _T.ref(x),
                                                  target, root)
    return out


class _Cache:
    """Layers of the functions below, kept per (function, grid, dtype,
    distributions) so repeated calls plan once."""

    def __init__(self):
        self._layers = {}

    def get(self, key, dists, make):
        entry = self._layers.get(key)
        if entry is None or not all(a == b for a, b in zip(entry[0], dists)):
            entry = (dists, make())
            self._layers[key] = entry
        return entry[1]


_cache = _Cache()


def cat(grid, tensors, dim=1):
    """Concatenation along channels (dim=1) of shards that split samples
    and space alike; differentiable."""
    if dim != 1:
        raise _T.error("unsupported", "distconv.cat along dim %d (channels, "
                       "dim=1, only)" % dim)
    tensors = list(tensors)
    dists = [_T.agree(grid, t, "cat input %d" % i, tensors[0].dtype)
             for i, t in enumerate(tensors)]
    key = ("cat", id(grid), tensors[0].dtype, len(tensors))
    layer = _cache.get(key, dists, lambda: getattr(
        _C, "Concat" + _T.suffix(tensors[0].dtype))(grid, dists))
    return _F.ConcatFunction.apply(layer, grid, *tensors)


def add(grid, a, b):
    """a + b on shards of one distribution; differentiable."""
    da = _T.agree(grid, a, "add input a")
    db = _T.agree(grid, b, "add input b", a.dtype)
    if not da == db:
        raise _T.error("shape mismatch", "add of %s and %s" % (
            da.describe(), db.describe()))
    return _F.AddFunction.apply(a, b, grid, da)


def redistribute(x, from_grid, to_grid):
    """The tensor whose shard on `from_grid` is `x`, as this rank's
    balanced shard over `to_grid` (the same ranks); differentiable."""
    dist = _T.agree(from_grid, x, "redistribute input")
    key = ("redistribute", id(from_grid), id(to_grid), x.dtype)
    layer = _cache.get(key, [dist], lambda: getattr(
        _C, "Redistribution" + _T.suffix(x.dtype))(from_grid, dist, to_grid))
    return _F.MapFunction.apply(x, layer, from_grid, to_grid)
