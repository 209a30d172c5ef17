"""torch.autograd.Functions over the extension's layer objects.

Each forward runs the layer's forward on the rank's shard and saves what
its backward reads; each backward runs the layer's backward passes.
Parameters arrive whole; the layer works on this rank's block of them and
the whole gradient is assembled (summed over the channel group) when the
grid splits channels.
"""
import torch

from . import _tensors as T


class ConvFunction(torch.autograd.Function):
    """Convolution and transposed convolution: layer.forward/backward."""

    @staticmethod
    def forward(ctx, x, weight, bias, layer, grid, wbox, bbox):
        w = T.block(weight, wbox)
        b = T.block(bias, bbox)
        y = T.empty(grid, layer.dst_shape(), x.dtype)
        ctx.kept = layer.forward(T.ref(x), T.ptr(w), T.ptr(b), T.ref(y))
        ctx.layer, ctx.grid, ctx.wbox, ctx.bbox = layer, grid, wbox, bbox
        ctx.has_bias = bias is not None
        ctx.bias_shape = None if bias is None else bias.shape
        ctx.weight_shape, ctx.param_dtype = weight.shape, weight.dtype
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        dx = T.empty(ctx.grid, x.shape, x.dtype) if need_x else None
        dw = db = None
        if need_w or need_b:
            dw = torch.empty(tuple(ctx.wbox[1]), dtype=ctx.param_dtype)
            if ctx.has_bias:
                db = torch.empty(tuple(ctx.bbox[1]), dtype=ctx.param_dtype)
        # dw's pointer is 0 where this rank's block is empty: None alone
        # says "no gradients" (backward-weights is collective).
        ctx.layer.backward(ctx.kept, T.ref(dy), T.ptr(w),
                           None if dx is None else T.ref(dx),
                           None if dw is None else T.ptr(dw), T.ptr(db))
        if dw is not None:
            dw = T.whole(ctx.grid, ctx.weight_shape, dw, ctx.wbox)
            if db is not None:
                db = T.whole(ctx.grid, ctx.bias_shape, db, ctx.bbox)
        return (dx, dw if need_w else None, db if need_b else None, None,
                None, None, None)


class PoolFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, layer, grid):
        y = T.empty(grid, layer.dst_shape(), x.dtype)
        ctx.kept = layer.forward(T.ref(x), T.ref(y))
        ctx.layer, ctx.grid = layer, grid
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dx = T.empty(ctx.grid, x.shape, x.dtype)
        ctx.layer.backward(ctx.kept, T.ref(dy), T.ref(dx))
        return dx, None, None


class BatchNormFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, scale, shift, layer, grid, mean, var, training):
        y = T.empty(grid, x.shape, x.dtype)
        s, h = scale.detach().contiguous(), shift.detach().contiguous()
        ctx.kept = layer.forward(T.ref(x), T.ptr(s), T.ptr(h), T.ref(y),
                                 T.ptr(mean), T.ptr(var), training)
        ctx.layer, ctx.grid = layer, grid
        ctx.save_for_backward(x, s)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensors
        dx = T.empty(ctx.grid, x.shape, x.dtype)
        ds, dh = torch.empty_like(s), torch.empty_like(s)
        ctx.layer.backward(ctx.kept, T.ref(dy), T.ptr(s), T.ref(dx),
                           T.ptr(ds), T.ptr(dh))
        return dx, ds, dh, None, None, None, None, None


class ActivationFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, layer, grid):
        y = T.empty(grid, x.shape, x.dtype)
        layer.forward(T.ref(x), T.ref(y))
        ctx.layer, ctx.grid = layer, grid
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        dx = T.empty(ctx.grid, x.shape, x.dtype)
        ctx.layer.backward(T.ref(x), T.ref(y), T.ref(dy), T.ref(dx))
        return dx, None, None


class MapFunction(torch.autograd.Function):
    """Layers whose backward needs only the output gradient (upsampling,
    redistribution): layer.forward(x, y), layer.backward(dy, dx); x lives
    on src_grid, y on dst_grid."""

    @staticmethod
    def forward(ctx, x, layer, src_grid, dst_grid):
        y = T.empty(dst_grid, layer.dst_shape(), x.dtype)
        layer.forward(T.ref(x), T.ref(y))
        ctx.layer, ctx.shape, ctx.grid = layer, x.shape, src_grid
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = T.empty(ctx.grid, ctx.shape, dy.dtype)
        ctx.layer.backward(T.ref(dy), T.ref(dx))
        return dx, None, None, None


class ConcatFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, layer, grid, *xs):
        y = T.empty(grid, layer.dst_shape(), xs[0].dtype)
        layer.forward([T.ref(x) for x in xs], T.ref(y))
        ctx.layer, ctx.grid = layer, grid
        ctx.shapes = [x.shape for x in xs]
        return y

    @staticmethod
    def backward(ctx, dy):
        dxs = [T.empty(ctx.grid, s, dy.dtype) for s in ctx.shapes]
        ctx.layer.backward(T.ref(dy), [T.ref(d) for d in dxs])
        return (None, None, *dxs)


class AddFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, a, b, grid, dist):
        y = T.empty(grid, a.shape, a.dtype)
        getattr(T._C, "add" + T.suffix(a.dtype))(grid, dist, T.ref(a),
                                                 T.ref(b), T.ref(y))
        return y

    @staticmethod
    def backward(ctx, dy):
        return dy, dy, None, None


class LossFunction(torch.autograd.Function):
    """A loss. Where the input's gradient will be wanted, forward computes
    it with the loss in one pass over the cells (the same bits as the
    separate passes) and backward scales it by the upstream gradient; a
    second backward of the same graph (retain_graph) computes it again."""

    @staticmethod
    def forward(ctx, x, target, layer, grid):
        ctx.layer, ctx.grid = layer, grid
        ctx.save_for_backward(x, target)
        ctx.dx = None
        if ctx.needs_input_grad[0]:
            ctx.dx = T.empty(grid, x.shape, x.dtype)
            loss = layer.forward_backward(T.ref(x), T.ref(target),
                                          T.ref(ctx.dx))
        else:
            loss = layer.forward(T.ref(x), T.ref(target))
        return torch.tensor(loss, dtype=T.param_dtype(x.dtype))

    @staticmethod
    def backward(ctx, g):
        dx, ctx.dx = ctx.dx, None
        if dx is None:
            x, target = ctx.saved_tensors
            dx = T.empty(ctx.grid, x.shape, x.dtype)
            ctx.layer.backward(T.ref(x), T.ref(target), T.ref(dx))
        return dx.mul_(g), None, None, None


class GatherFunction(torch.autograd.Function):
    """The global tensor on every rank; backward keeps this rank's block of
    the gradient (each rank's copy counts once)."""

    @staticmethod
    def forward(ctx, x, grid, dist):
        out = torch.empty(dist.global_shape, dtype=x.dtype)
        getattr(T._C, "gather_all" + T.data_suffix(x.dtype))(
            grid, dist, T.ref(x), T.ref(out))
        ctx.box = dist.shard(grid.rank)
        return out

    @staticmethod
    def backward(ctx, g):
        return g[T.slices(ctx.box)], None, None


class AppendFunction(torch.autograd.Function):
    """Cells appended at the upper end of spatial dimensions, holding the
    bias (zeros without one): a transposed convolution's output cells
    that no input reaches (output padding beyond a stride). The ranks
    last along dimension d append appended[d] cells there. Backward sums
    the appended cells' gradients into the bias gradient over every rank."""

    @staticmethod
    def forward(ctx, y, bias, grid, appended):
        ctx.grid, ctx.shape = grid, y.shape
        ctx.bias_dtype = None if bias is None else bias.dtype
        out = y
        for d, extra in enumerate(appended):
            dim = d + 2
            if extra == 0 or grid.coord[dim] != grid.shape[dim] - 1:
                continue
            shape = list(out.shape)
            shape[dim] = extra
            fill = torch.zeros(shape, dtype=y.dtype)
            if bias is not None:
                fill += bias.detach().to(y.dtype).view(
                    (1, -1) + (1,) * (y.dim() - 2))
            out = torch.cat([out, fill], dim)
        return out.contiguous(memory_format=T.storage_format(y.dim()))

    @staticmethod
    def backward(ctx, dout):
        dy = dout[tuple(slice(0, e) for e in ctx.shape)]
        db = None
        if ctx.bias_dtype is not None:  # the appended cells' sum
            dims = [0] + list(range(2, dout.dim()))
            db = dout.sum(dim=dims, dtype=torch.float64) - \
                dy.sum(dim=dims, dtype=torch.float64)
            db = T.sum_over_grid(ctx.grid, db.contiguous()).to(ctx.bias_dtype)
        return (dy.contiguous(memory_format=T.storage_format(dy.dim())),
                db, None, None)


class GroupNormFunction(torch.autograd.Function):
    """Group and instance normalisation; scale and shift may be None (no
    affine)."""

    @staticmethod
    def forward(ctx, x, scale, shift, layer, grid, mean, var, training):
        y = T.empty(grid, x.shape, x.dtype)
        s = None if scale is None else scale.detach().contiguous()
        h = None if shift is None else shift.detach().contiguous()
        layer.forward(T.ref(x), T.ptr(s), T.ptr(h), T.ref(y), T.ptr(mean),
                      T.ptr(var), training)
        ctx.layer, ctx.grid, ctx.id = layer, grid, layer.forwards()
        ctx.has_scale, ctx.has_shift = s is not None, h is not None
        ctx.save_for_backward(x, s)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensors
        dx = T.empty(ctx.grid, x.shape, x.dtype)
        ds = torch.empty_like(s) if ctx.has_scale else None
        dh = None
        if ctx.has_shift:
            dh = torch.empty(ds.shape if ds is not None else (x.shape[1],),
                             dtype=T.param_dtype(x.dtype))
        ctx.layer.backward(ctx.id, T.ref(x), T.ref(dy), T.ptr(s), T.ref(dx),
                           T.ptr(ds), T.ptr(dh))
        return dx, ds, dh, None, None, None, None, None


class IdMapFunction(torch.autograd.Function):
    """Layers whose backward needs the output gradient and the forward it
    belongs to (adaptive max pooling keeps its last forward's maxima):
    layer.forward(x, y) returns the forward's id, layer.backward(id, dy,
    dx)."""

    @staticmethod
    def forward(ctx, x, layer, grid):
        y = T.empty(grid, layer.dst_shape(), x.dtype)
        ctx.id = layer.forward(T.ref(x), T.ref(y))
        ctx.layer, ctx.shape, ctx.grid = layer, x.shape, grid
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = T.empty(ctx.grid, ctx.shape, dy.dtype)
        ctx.layer.backward(ctx.id, T.ref(dy), T.ref(dx))
        return dx, None, None


class DropoutFunction(torch.autograd.Function):
    """Dropout with a mask from `seed` and global indices: the same mask
    applied to the output gradient."""

    @staticmethod
    def forward(ctx, x, layer, grid, seed):
        y = T.empty(grid, x.shape, x.dtype)
        layer.apply(T.ref(x), T.ref(y), seed)
        ctx.layer, ctx.grid, ctx.seed = layer, grid, seed
        return y

    @staticmethod
    def backward(ctx, dy):
        dx = T.empty(ctx.grid, dy.shape, dy.dtype)
        ctx.layer.apply(T.ref(dy), T.ref(dx), ctx.seed)
        return dx, None, None, None
