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
from . import _moves  # noqa: E402
from . import _tensors as _T  # noqa: E402

Error = _C.Error
ProcessGrid = _C.ProcessGrid

from ._profile import Profiler  # noqa: E402

from . import nn  # noqa: E402,F401
from .nn import interpolate  # noqa: E402,F401

__all__ = ["Error", "ProcessGrid", "Profiler", "shard", "shard_like", "gather", "scatter",
           "gather_to_root", "cat", "add", "redistribute",
           "redistribute_like", "interpolate", "nn"]


def _global_problem(grid, x, what):
    """What is wrong with `x` as a global tensor over `grid` ('' if
    nothing)."""
    problem = _T.problem_of(x, what, data=True)
    if not problem and x.dim() != grid.ndims:
        problem = "%s of %d dimensions over a %d-dimensional grid" % (
            what, x.dim(), grid.ndims)
    return problem


def _check_global(grid, x, what):
    """Raises the same distconv.Error on every rank unless every rank
    passed a fitting global tensor of one shape and dtype (collective)."""
    _C.check(grid, _global_problem(grid, x, what))
    shape, code = _C.broadcast_shape_and_type(grid, tuple(x.shape),
                                              _T._CODE[x.dtype], 0)
    problem = ""
    if (tuple(x.shape), x.dtype) != (tuple(shape), _T.dtype_of_code(code)):
        problem = ("%s: rank %d passed a global tensor of shape %s and "
                   "dtype %s, rank 0 one of shape %s and dtype %s" % (
                       what, grid.rank, tuple(x.shape), x.dtype,
                       tuple(shape), _T.dtype_of_code(code)))
    _C.check(grid, problem)


def shard(grid, x):
    """This rank's block of the global tensor `x`, which every rank passes
    (balanced blocks: the first parts one larger when a dimension does not
    divide). Any dtype of data or labels (floating, int64, int32, uint8,
    int8, bool). A copy, channels-last; differentiable."""
    _check_global(grid, x, "shard input")
    dist = _C.Distribution(tuple(x.shape), grid.shape)
    return _T.copy_of_block(grid, x, dist.shard(grid.rank))


def shard_like(grid, x, like):
    """This rank's block of the global tensor `x` (on every rank) in the
    distribution that the shards `like` form, which need not be balanced
    (an upsampled or strided layer's output): to shard a target or an
    output gradient like a layer's output. A copy, channels-last."""
    dist = _T.agree(grid, like, "shard_like reference", data=True)
    _check_global(grid, x, "shard_like input")
    if tuple(x.shape) != tuple(dist.global_shape):
        raise _T.error("shape mismatch", "shard_like of a tensor of shape "
                       "%s for shards of a tensor of shape %s" % (
                           tuple(x.shape), dist.global_shape))
    return _T.copy_of_block(grid, x, dist.shard(grid.rank))


def gather(grid, x):
    """The global tensor on every rank, from every rank's shard `x`
    (contiguous). Backward keeps this rank's block of the gradient."""
    dist = _T.agree(grid, x, "gather input", data=True)
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
    shape, code = _C.broadcast_shape_and_type(
        grid, tuple(x.shape) if is_root else (),
        _T._CODE[x.dtype] if is_root else 0, root)
    shape, dtype = tuple(shape), _T.dtype_of_code(code)
    dist = _C.Distribution(shape, grid.shape)
    _, extent = dist.shard(grid.rank)
    out = _T.empty(grid, extent, dtype)
    src = x.detach().contiguous() if is_root else None
    getattr(_C, "scatter_from" + _T.data_suffix(dtype))(
        grid, dist, _T.ref(src) if is_root else (0, shape, shape),
        _T.ref(out), root)
    return out


def gather_to_root(grid, x, root=0):
    """The global tensor (contiguous) on `root`, None elsewhere, from every
    rank's shard `x`. Not differentiable."""
    dist = _T.agree(grid, x, "gather_to_root input", data=True)
    out = None
    target = (0, dist.global_shape, dist.global_shape)
    if grid.rank == root:
        out = torch.empty(dist.global_shape, dtype=x.dtype)
        target = _T.ref(out)
    getattr(_C, "gather_to" + _T.data_suffix(x.dtype))(grid, dist,
                                                       _T.ref(x), target,
                                                       root)
    return out


def _describe_mismatch(what, dists, dims):
    names = ("N", "C") + tuple("spatial %d" % i for i in range(3))
    return "%s of tensors of global shapes %s (they must agree in %s)" % (
        what, " and ".join(str(tuple(d.global_shape)) for d in dists),
        ", ".join(names[d] for d in dims))


def cat(grid, tensors, dim=1):
    """Concatenation along channels (dim=1); differentiable. Inputs split
    otherwise than the first along samples and space move to its split
    first (only the cells that change owner travel), so the output is
    split like the first input."""
    if dim != 1:
        raise _T.error("unsupported", "distconv.cat along dim %d (channels, "
                       "dim=1, only)" % dim)
    tensors = list(tensors)
    if not tensors:
        raise _T.error("invalid argument", "distconv.cat of no tensors")
    dists = [_T.agree(grid, t, "cat input %d" % i, problem=(
        _T.same_dtype_problem(t, tensors[0], "cat input %d" % i)))
        for i, t in enumerate(tensors)]
    others = [d for d in range(len(dists[0].global_shape)) if d != 1]
    for d in dists[1:]:
        if any(d.global_shape[k] != dists[0].global_shape[k]
               for k in others):
            raise _T.error("shape mismatch", _describe_mismatch(
                "distconv.cat", dists, others))
    for i in range(1, len(tensors)):
        target = _moves.with_sizes(dists[i], dists[0], others)
        tensors[i] = _moves.move(grid, tensors[i], dists[i], target)
        dists[i] = target
    key = ("cat", tensors[0].dtype, tuple(_moves.key_of(d) for d in dists))
    layer = _moves.layers_of(grid).get(key, lambda: getattr(
        _C, "Concat" + _T.suffix(tensors[0].dtype))(grid, dists))
    return _F.ConcatFunction.apply(layer, grid, *tensors)


def _aligned(grid, x, dist, like, what):
    """x moved to the distribution `like` (same global shape)."""
    if tuple(dist.global_shape) != tuple(like.global_shape):
        raise _T.error("shape mismatch", _describe_mismatch(
            what, [like, dist], range(len(dist.global_shape))))
    return _moves.move(grid, x, dist, like)


def add(grid, a, b):
    """a + b, elementwise, over the same global shape; differentiable. If b
    is split otherwise than a, it moves to a's split first."""
    da = _T.agree(grid, a, "add input a")
    db = _T.agree(grid, b, "add input b", problem=_T.same_dtype_problem(
        b, a, "add input b"))
    b = _aligned(grid, b, db, da, "distconv.add")
    return _F.AddFunction.apply(a, b, grid, da)


def redistribute_like(grid, x, like):
    """x's global tensor as this rank's shard in the distribution that the
    shards `like` form over `grid` (the same global shape; any dtype);
    differentiable. Only the cells that change owner travel."""
    dist = _T.agree(grid, x, "redistribute_like input", data=True)
    target = _T.agree(grid, like, "redistribute_like reference", data=True)
    return _aligned(grid, x, dist, target, "distconv.redistribute_like")


def redistribute(x, from_grid, to_grid):
    """The tensor whose shard on `from_grid` is `x`, as this rank's
    balanced shard over `to_grid` (the same ranks); differentiable."""
    dist = _T.agree(from_grid, x, "redistribute input", data=True)
    target = _C.Distribution(tuple(dist.global_shape), to_grid.shape)
    return _moves.move(from_grid, x, dist, target, to_grid)
