"""How the package hands PyTorch tensors to the extension module.

The extension never links libtorch: it gets (data_ptr, shape, strides) and
works on the tensor's memory. Outputs are allocated here in the library's
storage order (channels-last), so the library writes them in place; inputs
in that order with no halos to fill are read in place too, others are
copied (see docs/pytorch.md, "What copies").
"""
import torch

from . import _distconv as _C

_SUFFIX = {torch.float32: "_f32", torch.float64: "_f64"}
_CODE = {torch.float32: 1, torch.float64: 2}


def ref(t):
    """The tensor as the extension takes it."""
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()))


def ptr(t):
    """A tensor's data pointer, 0 for None."""
    return 0 if t is None else t.data_ptr()


def suffix(dtype):
    return _SUFFIX[dtype]


def storage_format(ndims):
    """The library's storage order as a torch.memory_format."""
    return torch.channels_last if ndims == 4 else torch.channels_last_3d


def empty(grid, shape, dtype):
    """An uninitialised shard in the library's storage order, on memory
    from the grid's cache (returned to it when the tensor dies)."""
    return torch.from_numpy(grid._empty(tuple(shape), _CODE[dtype]))


def slices(box):
    """The index of a box (lower, extent) into a tensor."""
    lower, extent = box
    return tuple(slice(l, l + e) for l, e in zip(lower, extent))


def copy_of_block(x, box):
    """x's block `box`, copied in the library's storage order."""
    return x[slices(box)].contiguous(memory_format=storage_format(x.dim()))


def error(kind, message):
    """A distconv.Error raised from Python (same kinds as the library's)."""
    e = _C.Error("distconv: %s: %s" % (kind, message))
    e.kind = kind
    return e


def problem_of(t, what, dtype=None):
    """What is wrong with `t` as a layer's input on this rank ('' if
    nothing)."""
    if not isinstance(t, torch.Tensor):
        return "%s is a %s, not a torch.Tensor" % (what, type(t).__name__)
    if t.device.type != "cpu":
        return ("%s is on device %s; distconv's PyTorch layers take CPU "
                "tensors" % (what, t.device))
    if t.dtype not in _SUFFIX:
        return ("%s has dtype %s; distconv's layers take torch.float32 or "
                "torch.float64" % (what, t.dtype))
    if dtype is not None and t.dtype != dtype:
        return "%s has dtype %s but the module's parameters %s" % (
            what, t.dtype, dtype)
    return ""


def agree(grid, t, what, dtype=None, problem=""):
    """The Distribution every rank's shard of `t` forms (collective).

    A problem found on any rank (wrong type, device or dtype, shards that
    do not tile a tensor over the grid, dtypes that differ between ranks)
    raises the same distconv.Error on every rank.
    """
    problem = problem or problem_of(t, what, dtype)
    if problem:
        return _C.agree(grid, (), 0, problem)
    return _C.agree(grid, tuple(t.shape), _CODE[t.dtype], "")


def block(param, box):
    """This rank's block (lower, extent) of a whole parameter, dense."""
    if param is None:
        return None
    data = param.detach()
    if tuple(box[1]) == tuple(param.shape):
        return data.contiguous()
    return data[slices(box)].contiguous()


def whole(grid, shape, block_grad, box):
    """The whole gradient from every channel group member's block of it."""
    if tuple(box[1]) == tuple(shape):
        return block_grad
    full = torch.zeros(shape, dtype=block_grad.dtype)
    full[slices(box)] = block_grad
    getattr(_C, "sum_along" + suffix(full.dtype))(grid, 1, ref(full))
    return full


def broadcast_(grid, t, root=0):
    """Makes a dense tensor root's on every rank, in place."""
    with torch.no_grad():
        getattr(_C, "broadcast" + suffix(t.dtype))(grid, ref(t), root)
    return t
