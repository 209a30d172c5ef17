"""How the package hands PyTorch tensors to the extension module.

The extension never links libtorch: it gets (data_ptr, shape, strides) and
works on the tensor's memory. Outputs are allocated here in the library's
storage order (channels-last), so the library writes them in place; inputs
in that order with no halos to fill are read in place too, others are
copied (see docs/pytorch.md, "What copies").
"""
import torch

from . import _distconv as _C

# The element types of the layers, with the suffix of their bindings
# (python/src/element_types.h). bfloat16 and float16 layers keep their
# parameters and gradients in float32.
_LAYER = {torch.float32: "_f32", torch.float64: "_f64",
          torch.bfloat16: "_bf16", torch.float16: "_f16"}
# Every type the functions that only move cells carry, with the binding
# that moves it (cells of the same size) and the NumPy dtype its new
# tensors are made as (bfloat16: int16 cells, viewed).
_DATA = {torch.float32: ("_f32", "float32"), torch.float64: ("_f64", "float64"),
         torch.bfloat16: ("_bf16", "int16"), torch.float16: ("_f16", "float16"),
         torch.int64: ("_i64", "int64"), torch.int32: ("_i32", "int32"),
         torch.uint8: ("_u8", "uint8"), torch.int8: ("_u8", "int8"),
         torch.bool: ("_u8", "bool")}
# A number per type, for the ranks to agree on (0: none).
_CODE = {dtype: i + 1 for i, dtype in enumerate(_DATA)}
_DTYPE_OF_CODE = {code: dtype for dtype, code in _CODE.items()}


def param_dtype(dtype):
    """The dtype of a layer's parameters and their gradients for inputs of
    `dtype`: float32 for the 16-bit types (the master copy)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _names(dtypes):
    return ", ".join(str(d) for d in dtypes)


def ref(t):
    """The tensor as the extension takes it."""
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()))


def ptr(t):
    """A tensor's data pointer, 0 for None."""
    return 0 if t is None else t.data_ptr()


def suffix(dtype):
    """The suffix of the layer bindings for `dtype`."""
    return _LAYER[dtype]


def data_suffix(dtype):
    """The suffix of the moving functions' bindings for `dtype`."""
    return _DATA[dtype][0]


def dtype_of_code(code):
    return _DTYPE_OF_CODE[code]


def storage_format(ndims):
    """The library's storage order as a torch.memory_format."""
    return torch.channels_last if ndims == 4 else torch.channels_last_3d


def tag(grid, t):
    """Marks `t` as a shard over `grid`'s shape: a layer on a grid of
    another shape refuses it (agree). Views and tensors PyTorch makes from
    it carry no mark and are taken as they are."""
    t._distconv_grid = tuple(grid.shape)
    return t


def empty(grid, shape, dtype):
    """An uninitialised shard in the library's storage order, on memory
    from the grid's cache (returned to it when the tensor dies), marked as
    a shard over `grid`."""
    t = torch.from_numpy(grid._empty(tuple(shape), _DATA[dtype][1]))
    return tag(grid, t.view(dtype) if t.dtype != dtype else t)


def slices(box):
    """The index of a box (lower, extent) into a tensor."""
    lower, extent = box
    return tuple(slice(l, l + e) for l, e in zip(lower, extent))


def copy_of_block(grid, x, box):
    """x's block `box`, copied in the library's storage order, marked as a
    shard over `grid`."""
    return tag(grid, x[slices(box)].contiguous(
        memory_format=storage_format(x.dim())))


def error(kind, message):
    """A distconv.Error raised from Python (same kinds as the library's)."""
    e = _C.Error("distconv: %s: %s" % (kind, message))
    e.kind = kind
    return e


def problem_of(t, what, dtype=None, data=False):
    """What is wrong with `t` as a layer's input on this rank ('' if
    nothing). `dtype`: the dtype of the module's parameters, which the
    input's must go with; `data`: any dtype the moving functions carry."""
    if not isinstance(t, torch.Tensor):
        return "%s is a %s, not a torch.Tensor" % (what, type(t).__name__)
    if t.device.type != "cpu":
        return ("%s is on device %s; distconv's PyTorch layers take CPU "
                "tensors" % (what, t.device))
    if data:
        if t.dtype not in _DATA:
            return "%s has dtype %s; distconv moves %s" % (
                what, t.dtype, _names(_DATA))
        return ""
    if t.dtype not in _LAYER:
        return ("%s has dtype %s; distconv's layers take %s" % (
            what, t.dtype, _names(_LAYER)))
    if dtype is not None and param_dtype(t.dtype) != dtype:
        return "%s has dtype %s but the module's parameters %s" % (
            what, t.dtype, dtype)
    return ""


def grid_problem(grid, t, what):
    """'' unless `t` is marked as a shard over a grid of another shape."""
    made = getattr(t, "_distconv_grid", None)
    if made is not None and made != tuple(grid.shape):
        return ("%s is a shard over a grid %s, this grid is %s (move it "
                "with distconv.redistribute)" % (
                    what, "x".join(map(str, made)),
                    "x".join(map(str, grid.shape))))
    return ""


def same_dtype_problem(t, like, what):
    """'' if `t` is a tensor of `like`'s dtype (or either is no tensor:
    problem_of tells that), else what differs."""
    if isinstance(t, torch.Tensor) and isinstance(like, torch.Tensor) and \
            t.dtype != like.dtype:
        return "%s has dtype %s, the first input %s" % (what, t.dtype,
                                                        like.dtype)
    return ""


def agree(grid, t, what, dtype=None, problem="", data=False):
    """The Distribution every rank's shard of `t` forms (collective).

    A problem found on any rank (wrong type, device or dtype, shards that
    do not tile a tensor over the grid, dtypes that differ between ranks)
    raises the same distconv.Error on every rank. `dtype` and `data` as in
    problem_of.
    """
    problem = problem or problem_of(t, what, dtype, data) or \
        grid_problem(grid, t, what)
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
    """The whole gradient from every channel group member's block of it
    (collective over the ranks that split channels: every one of them sums,
    whatever its block, an empty one included)."""
    if grid.shape[1] == 1:
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


def sum_over_grid(grid, t):
    """A dense float tensor summed over every rank of the grid, in place
    (collective)."""
    for dim in range(grid.ndims):
        getattr(_C, "sum_along" + suffix(t.dtype))(grid, dim, ref(t))
    return t
