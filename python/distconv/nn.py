"""Distributed layers as torch.nn modules: torch.nn's names, arguments and
defaults, with a leading `grid` (a distconv.ProcessGrid).

Inputs and outputs are the rank's shards of the global tensors (ordinary
CPU torch.Tensors, float32, float64, bfloat16 or float16; outputs are
channels-last). bfloat16 and float16 inputs go with float32 parameters.
Parameters are whole torch.nn.Parameters, initialised as torch.nn
initialises them and then made rank 0's on every rank; after backward()
their .grad is the whole gradient on every rank. On its first call a
module agrees with the other ranks on the global shape its shards form
and plans for it; a call whose shards form another shape re-plans.
"""
import torch

from . import _distconv as _C
from . import _functions as F
from . import _moves
from . import _tensors as T

__all__ = [
    "Conv2d", "Conv3d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool2d",
    "MaxPool3d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm2d",
    "InstanceNorm3d", "ReLU", "LeakyReLU", "Upsample", "Dropout",
    "Dropout2d", "Dropout3d", "CrossEntropyLoss", "MSELoss", "interpolate",
]


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _unsupported(what):
    return T.error("unsupported", what)


def _param_dtype(dtype):
    """The dtype of a module's parameters: float32 (the default) or
    float64. The 16-bit types are input types: a module with float32
    parameters takes bfloat16 and float16 inputs (docs/pytorch.md)."""
    if dtype is None:
        return torch.get_default_dtype()
    if dtype in (torch.bfloat16, torch.float16):
        raise _unsupported(
            "parameters of dtype %s: distconv's modules keep float32 "
            "parameters (the master copy) and take %s inputs; build the "
            "module with dtype=torch.float32" % (dtype, dtype))
    if dtype not in (torch.float32, torch.float64):
        raise _unsupported("parameters of dtype %s (torch.float32 or "
                           "torch.float64)" % (dtype,))
    return dtype


class _Planned(torch.nn.Module):
    """Caches the extension's layer for the last distribution and dtype."""

    def __init__(self, grid, spatial_dims):
        super().__init__()
        self.grid = grid
        self._spatial = spatial_dims
        self._key = None
        self._layer = None
        # (a weak reference to a distconv.Profiler, name) while profiled.
        self._profiler = None

    def _agree(self, x, dtype=None, problem=""):
        """The distribution x's shards form (collective: every rank agrees
        on it, or raises the same distconv.Error)."""
        name = type(self).__name__
        what = "%s input" % name
        if not problem and isinstance(x, torch.Tensor):
            dims = (4, 5) if self._spatial is None else (self._spatial + 2,)
            if x.dim() not in dims:
                problem = "%s has %d dimensions, %s takes %s" % (
                    what, x.dim(), name, " or ".join(map(str, dims)))
        return T.agree(self.grid, x, what, dtype, problem)

    def _layer_for(self, x, dist, make, variant=None):
        """The layer for x's dtype and the distribution `dist` (planned
        again when either changed since the last call)."""
        if self._key is None or self._key[0] != (x.dtype, variant) or \
                not self._key[1] == dist:
            self._layer = make(T.suffix(x.dtype), dist)
            profiler = self._profiler[0]() if self._profiler else None
            if profiler is not None:
                self._layer = profiler.wrap(self._layer, self)
            self._key = ((x.dtype, variant), dist)
        return self._layer

    def _plan(self, x, make, dtype=None, problem="", variant=None):
        """_agree, then _layer_for."""
        return self._layer_for(x, self._agree(x, dtype, problem), make,
                               variant)


class _ConvNd(_Planned):

    def __init__(self, grid, spatial, in_channels, out_channels, kernel_size,
                 stride, padding, dilation, groups, bias, padding_mode,
                 device, dtype, channel_parallelism, transposed=False,
                 output_padding=0):
        super().__init__(grid, spatial)
        dtype = _param_dtype(dtype)
        modes = ("zeros",) if transposed else ("zeros", "circular")
        if padding_mode not in modes:
            raise _unsupported("padding_mode %r (only %s)" % (
                padding_mode, " or ".join(repr(m) for m in modes)))
        if device is not None and torch.device(device).type != "cpu":
            raise _unsupported("device %s (the PyTorch layers run on CPU)" %
                               device)
        nn_cls = {(2, False): torch.nn.Conv2d, (3, False): torch.nn.Conv3d,
                  (2, True): torch.nn.ConvTranspose2d,
                  (3, True): torch.nn.ConvTranspose3d}[(spatial, transposed)]
        extra = ({"output_padding": output_padding} if transposed else
                 {"padding_mode": padding_mode})
        like = nn_cls(in_channels, out_channels, kernel_size, stride=stride,
                      padding=padding, dilation=dilation, groups=groups,
                      bias=bias, dtype=dtype, **extra)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = like.kernel_size, like.stride
        self.dilation, self.groups = like.dilation, groups
        self.padding = like.padding
        self.output_padding = _tuple(output_padding, spatial)
        self.padding_mode = padding_mode
        self.transposed = transposed
        self.weight = like.weight
        self.bias = like.bias
        for p in self.parameters():
            T.broadcast_(grid, p.data)
        self._lower, self._upper = self._pads(like.padding)
        self._appended = (0,) * spatial
        if transposed:
            self._upper, self._layer_output_padding, self._appended = \
                _transposed_upper_end(self._upper, self.output_padding,
                                      self.stride)
        self._scheme = getattr(_C.ChannelParallelism, channel_parallelism)

    def _pads(self, padding):
        if padding == "valid":
            z = (0,) * self._spatial
            return z, z
        if padding == "same":
            total = [d * (k - 1) for d, k in zip(self.dilation,
                                                 self.kernel_size)]
            lower = tuple(t // 2 for t in total)
            return lower, tuple(t - l for t, l in zip(total, lower))
        return tuple(padding), tuple(padding)

    def _make(self, suffix, dist):
        has_bias = self.bias is not None
        if self.transposed:
            desc = _C.DeconvDesc(self.in_channels, self.out_channels,
                                 self.kernel_size, self.stride, self.dilation,
                                 self._lower, self._upper,
                                 self._layer_output_padding, self.groups, has_bias)
            return getattr(_C, "Deconvolution" + suffix)(self.grid, desc,
                                                         dist)
        desc = _C.ConvDesc(self.in_channels, self.out_channels,
                           self.kernel_size, self.stride, self.dilation,
                           self._lower, self._upper, self.groups, has_bias,
                           self.padding_mode == "circular")
        return getattr(_C, "Convolution" + suffix)(self.grid, desc, dist,
                                                   self._scheme)

    def forward(self, x):
        dist = self._agree(x, self.weight.dtype)
        if not self.transposed and self.groups > 1:
            # A channel split cutting a group: move the channels to whole
            # groups first (the layer splits channels between groups).
            whole = _whole_groups(dist, self.groups)
            x, dist = _moves.move(self.grid, x, dist, whole), whole
        layer = self._layer_for(x, dist, self._make)
        if self.transposed:
            wbox = ((0,) * self.weight.dim(), tuple(self.weight.shape))
            bbox = ((0,), (self.out_channels,))
        else:
            wbox, bbox = layer.weights_block(), layer.bias_block()
        y = F.ConvFunction.apply(x, self.weight, self.bias, layer,
                                 self.grid, wbox, bbox)
        if any(self._appended):
            y = F.AppendFunction.apply(y, self.bias, self.grid,
                                       self._appended)
        return y

    def describe(self):
        """How this rank runs the planned layer (after a first call)."""
        return self._layer.describe() if self._layer else "not planned yet"

    def extra_repr(self):
        return ("{}, {}, kernel_size={}, stride={}, padding={}, grid={}"
                .format(self.in_channels, self.out_channels, self.kernel_size,
                        self.stride, self.padding, self.grid.shape))


def _whole_groups(dist, groups):
    """`dist`, or where its channel parts cut one of `groups` groups, the
    groups balanced over the same parts (whole groups each)."""
    sizes = dist.sizes(1)
    per_group = dist.global_shape[1] // groups
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    if all(o % per_group == 0 for o in offsets):
        return dist
    parts = len(sizes)
    counts = [groups // parts + (1 if i < groups % parts else 0)
              for i in range(parts)]
    return _C.Distribution.from_sizes(
        [[c * per_group for c in counts] if d == 1 else dist.sizes(d)
         for d in range(len(dist.global_shape))])


def _transposed_upper_end(upper, output_padding, stride):
    """torch.nn takes a transposed convolution's output padding up to
    max(stride, dilation) - 1; the layer up to stride - 1. The output's
    upper end is the same: the full output cropped by `upper` padding cells
    and extended by `output_padding` cells, so output padding first cancels
    padding; what is left beyond a stride is appended: cells no input
    reaches, the bias alone. Per dimension: the layer's upper padding, its
    output padding, the cells appended."""
    pads, ops, appended = [], [], []
    for u, op, s in zip(upper, output_padding, stride):
        m = min(u, op)
        u, op = u - m, op - m
        extra = op - op % s if op >= s else 0
        pads.append(u)
        ops.append(op - extra)
        appended.append(extra)
    return tuple(pads), tuple(ops), tuple(appended)


class Conv2d(_ConvNd):
    def __init__(self, grid, in_channels, out_channels, kernel_size,
                 stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, *,
                 channel_parallelism="stationary_output"):
        super().__init__(grid, 2, in_channels, out_channels, kernel_size,
                         stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, channel_parallelism)


class Conv3d(_ConvNd):
    def __init__(self, grid, in_channels, out_channels, kernel_size,
                 stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, *,
                 channel_parallelism="stationary_output"):
        super().__init__(grid, 3, in_channels, out_channels, kernel_size,
                         stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, channel_parallelism)


class ConvTranspose2d(_ConvNd):
    def __init__(self, grid, in_channels, out_channels, kernel_size,
                 stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(grid, 2, in_channels, out_channels, kernel_size,
                         stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, "stationary_output",
                         transposed=True, output_padding=output_padding)


class ConvTranspose3d(_ConvNd):
    def __init__(self, grid, in_channels, out_channels, kernel_size,
                 stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(grid, 3, in_channels, out_channels, kernel_size,
                         stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, "stationary_output",
                         transposed=True, output_padding=output_padding)


class _PoolNd(_Planned):

    def __init__(self, grid, spatial, kind, kernel_size, stride, padding):
        super().__init__(grid, spatial)
        self.kernel_size = _tuple(kernel_size, spatial)
        self.stride = _tuple(stride if stride is not None else kernel_size,
                             spatial)
        self.padding = _tuple(padding, spatial)
        self._desc = _C.PoolDesc(kind, self.kernel_size, self.stride,
                                 self.padding)

    def forward(self, x):
        layer = self._plan(x, lambda s, d: getattr(_C, "Pooling" + s)(
            self.grid, self._desc, d))
        return F.PoolFunction.apply(x, layer, self.grid)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}".format(
            self.kernel_size, self.stride, self.padding)


def _max_pool_checks(dilation, return_indices, ceil_mode):
    if dilation not in (1, (1, 1), (1, 1, 1)):
        raise _unsupported("max pooling with dilation %r" % (dilation,))
    if return_indices:
        raise _unsupported("max pooling with return_indices=True")
    if ceil_mode:
        raise _unsupported("pooling with ceil_mode=True")


class MaxPool2d(_PoolNd):
    def __init__(self, grid, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        _max_pool_checks(dilation, return_indices, ceil_mode)
        super().__init__(grid, 2, _C.PoolKind.max, kernel_size, stride,
                         padding)


class MaxPool3d(_PoolNd):
    def __init__(self, grid, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        _max_pool_checks(dilation, return_indices, ceil_mode)
        super().__init__(grid, 3, _C.PoolKind.max, kernel_size, stride,
                         padding)


def _avg_kind(ceil_mode, count_include_pad, divisor_override):
    if ceil_mode:
        raise _unsupported("pooling with ceil_mode=True")
    if divisor_override is not None:
        raise _unsupported("average pooling with divisor_override")
    return (_C.PoolKind.average_include_padding if count_include_pad
            else _C.PoolKind.average_exclude_padding)


class AvgPool2d(_PoolNd):
    def __init__(self, grid, kernel_size, stride=None, padding=0,
                 ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(grid, 2, _avg_kind(ceil_mode, count_include_pad,
                                            divisor_override),
                         kernel_size, stride, padding)


class AvgPool3d(_PoolNd):
    def __init__(self, grid, kernel_size, stride=None, padding=0,
                 ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(grid, 3, _avg_kind(ceil_mode, count_include_pad,
                                            divisor_override),
                         kernel_size, stride, padding)


def _adopt_norm(module, like):
    """A normalisation module takes the settings, parameters and buffers of
    the torch.nn module `like` (built with the same arguments)."""
    module.num_features, module.eps = like.num_features, like.eps
    module.momentum, module.affine = like.momentum, like.affine
    module.track_running_stats = like.track_running_stats
    module.weight, module.bias = like.weight, like.bias
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        module.register_buffer(name, getattr(like, name))


def _no_cumulative(momentum, name):
    if momentum is None:
        raise _unsupported("%s with momentum=None (a cumulative average)" %
                           name)


class _BatchNorm(_Planned):

    def __init__(self, grid, spatial, num_features, eps, momentum, affine,
                 track_running_stats, device, dtype, stats):
        super().__init__(grid, spatial)
        _no_cumulative(momentum, "batch norm")
        _adopt_norm(self, (torch.nn.BatchNorm2d if spatial == 2 else
                           torch.nn.BatchNorm3d)(
            num_features, eps, momentum, affine, track_running_stats,
            dtype=_param_dtype(dtype)))
        self._stats = getattr(_C.BatchNormStats,
                              "global_" if stats == "global" else stats)

    def forward(self, x):
        dtype = self.weight.dtype if self.affine else None
        layer = self._plan(x, lambda s, d: getattr(_C, "BatchNorm" + s)(
            self.grid, d, self.eps, self.momentum, self._stats), dtype)
        c = self.num_features
        pdtype = T.param_dtype(x.dtype)
        scale = self.weight if self.affine else torch.ones(c, dtype=pdtype)
        shift = self.bias if self.affine else torch.zeros(c, dtype=pdtype)
        use_batch = self.training or not self.track_running_stats
        if self.track_running_stats:
            mean = self.running_mean.detach().double().contiguous()
            var = self.running_var.detach().double().contiguous()
        else:
            mean = torch.zeros(c, dtype=torch.float64)
            var = torch.ones(c, dtype=torch.float64)
        y = F.BatchNormFunction.apply(x, scale, shift, layer, self.grid,
                                      mean, var, use_batch)
        if self.training and self.track_running_stats:
            with torch.no_grad():
                self.running_mean.copy_(mean)
                self.running_var.copy_(var)
                self.num_batches_tracked += 1
        return y

    def extra_repr(self):
        return "{}, eps={}, momentum={}, affine={}".format(
            self.num_features, self.eps, self.momentum, self.affine)


class BatchNorm2d(_BatchNorm):
    def __init__(self, grid, num_features, eps=1e-5, momentum=0.1,
                 affine=True, track_running_stats=True, device=None,
                 dtype=None, *, stats="global"):
        super().__init__(grid, 2, num_features, eps, momentum, affine,
                         track_running_stats, device, dtype, stats)


class BatchNorm3d(_BatchNorm):
    def __init__(self, grid, num_features, eps=1e-5, momentum=0.1,
                 affine=True, track_running_stats=True, device=None,
                 dtype=None, *, stats="global"):
        super().__init__(grid, 3, num_features, eps, momentum, affine,
                         track_running_stats, device, dtype, stats)


class GroupNorm(_Planned):
    """torch.nn.GroupNorm: statistics per (sample, group) over the ranks
    splitting the sample's space. Grids may split channels between whole
    groups."""

    def __init__(self, grid, num_groups, num_channels, eps=1e-5, affine=True,
                 device=None, dtype=None):
        super().__init__(grid, None)
        dtype = _param_dtype(dtype)
        like = torch.nn.GroupNorm(num_groups, num_channels, eps, affine,
                                  dtype=dtype)
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        self.weight, self.bias = like.weight, like.bias

    def forward(self, x):
        dtype = self.weight.dtype if self.affine else None
        dist = self._agree(x, dtype)
        if dist.global_shape[1] != self.num_channels:
            raise T.error("shape mismatch", "GroupNorm of %d channels on an "
                          "input of shape %s" % (self.num_channels,
                                                 dist.global_shape))
        layer = self._layer_for(x, dist, lambda s, d: getattr(
            _C, "GroupNorm" + s)(self.grid, d, self.num_groups, self.eps,
                                 False, 0.1))
        return F.GroupNormFunction.apply(x, self.weight, self.bias, layer,
                                         self.grid, None, None, True)

    def extra_repr(self):
        return "{}, {}, eps={}, affine={}".format(
            self.num_groups, self.num_channels, self.eps, self.affine)


class _InstanceNorm(_Planned):

    def __init__(self, grid, spatial, num_features, eps, momentum, affine,
                 track_running_stats, device, dtype):
        super().__init__(grid, spatial)
        _no_cumulative(momentum, "instance norm")
        _adopt_norm(self, (torch.nn.InstanceNorm2d if spatial == 2 else
                           torch.nn.InstanceNorm3d)(
            num_features, eps, momentum, affine, track_running_stats,
            dtype=_param_dtype(dtype)))

    def forward(self, x):
        dtype = self.weight.dtype if self.affine else None
        dist = self._agree(x, dtype)
        if dist.global_shape[1] != self.num_features:
            raise T.error("shape mismatch", "%s of %d features on an input "
                          "of shape %s" % (type(self).__name__,
                                           self.num_features,
                                           dist.global_shape))
        c, track = self.num_features, self.track_running_stats
        layer = self._layer_for(x, dist, lambda s, d: getattr(
            _C, "GroupNorm" + s)(self.grid, d, c, self.eps, track,
                                 self.momentum))
        mean = var = None
        if track:
            mean = self.running_mean.detach().double().contiguous()
            var = self.running_var.detach().double().contiguous()
        y = F.GroupNormFunction.apply(x, self.weight, self.bias, layer,
                                      self.grid, mean, var, self.training)
        if self.training and track:  # (torch.nn leaves num_batches_tracked)
            with torch.no_grad():
                self.running_mean.copy_(mean)
                self.running_var.copy_(var)
        return y

    def extra_repr(self):
        return "{}, eps={}, momentum={}, affine={}, " \
            "track_running_stats={}".format(
                self.num_features, self.eps, self.momentum, self.affine,
                self.track_running_stats)


class InstanceNorm2d(_InstanceNorm):
    def __init__(self, grid, num_features, eps=1e-5, momentum=0.1,
                 affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(grid, 2, num_features, eps, momentum, affine,
                         track_running_stats, device, dtype)


class InstanceNorm3d(_InstanceNorm):
    def __init__(self, grid, num_features, eps=1e-5, momentum=0.1,
                 affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(grid, 3, num_features, eps, momentum, affine,
                         track_running_stats, device, dtype)


class _AdaptivePool(_Planned):

    def __init__(self, grid, spatial, kind, output_size):
        super().__init__(grid, spatial)
        self.output_size = output_size
        self._kind = kind

    def forward(self, x):
        dist = self._agree(x)
        size = tuple(e if o is None else int(o) for e, o in zip(
            dist.global_shape[2:], _tuple(self.output_size, self._spatial)))
        layer = self._layer_for(x, dist, lambda s, d: getattr(
            _C, "AdaptivePooling" + s)(self.grid, self._kind, size, d),
            variant=size)
        return F.IdMapFunction.apply(x, layer, self.grid)

    def extra_repr(self):
        return "output_size={}".format(self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    def __init__(self, grid, output_size):
        super().__init__(grid, 2, _C.AdaptivePoolKind.average, output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    def __init__(self, grid, output_size):
        super().__init__(grid, 3, _C.AdaptivePoolKind.average, output_size)


def _no_indices(return_indices):
    if return_indices:
        raise _unsupported("adaptive max pooling with return_indices=True")


class AdaptiveMaxPool2d(_AdaptivePool):
    def __init__(self, grid, output_size, return_indices=False):
        _no_indices(return_indices)
        super().__init__(grid, 2, _C.AdaptivePoolKind.max, output_size)


class AdaptiveMaxPool3d(_AdaptivePool):
    def __init__(self, grid, output_size, return_indices=False):
        _no_indices(return_indices)
        super().__init__(grid, 3, _C.AdaptivePoolKind.max, output_size)


class _Dropout(_Planned):
    """Dropout whose mask is a hash of a seed and each element's (or
    channel's) global index: the same on any split as on one process with
    the same seed. The seed: `seed`, or drawn from torch's generator on
    rank 0 at the first training call (so building the module draws
    nothing, and parameters initialise as torch.nn's do) and sent to every
    rank; each training call uses the next seed of a sequence, the same on
    every rank."""

    def __init__(self, grid, spatial, p, inplace, channels, seed):
        super().__init__(grid, spatial)
        if not 0.0 <= p <= 1.0:
            raise T.error("invalid argument", "dropout probability has to be "
                          "between 0 and 1, but got %r" % (p,))
        self.p, self.inplace = p, inplace  # inplace: the output is new
        self._channels = channels
        self.seed = None if seed is None else int(seed)
        self.calls = 0

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        layer = self._plan(x, lambda s, d: getattr(_C, "Dropout" + s)(
            self.grid, self.p, self._channels, d))
        if self.seed is None:  # collective: every rank calls forward
            drawn = torch.randint(0, 2 ** 53, (1,)).double()
            self.seed = int(T.broadcast_(self.grid, drawn).item())
        call = (self.seed * 0x9E3779B97F4A7C15 + self.calls) % 2 ** 64
        self.calls += 1
        return F.DropoutFunction.apply(x, layer, self.grid, call)

    def extra_repr(self):
        return "p={}, seed={}".format(self.p, self.seed)


class Dropout(_Dropout):
    def __init__(self, grid, p=0.5, inplace=False, *, seed=None):
        super().__init__(grid, None, p, inplace, False, seed)


class Dropout2d(_Dropout):
    def __init__(self, grid, p=0.5, inplace=False, *, seed=None):
        super().__init__(grid, 2, p, inplace, True, seed)


class Dropout3d(_Dropout):
    def __init__(self, grid, p=0.5, inplace=False, *, seed=None):
        super().__init__(grid, 3, p, inplace, True, seed)


class _Activation(_Planned):

    def __init__(self, grid, desc, inplace):
        super().__init__(grid, None)
        self._desc = desc
        self.inplace = inplace  # accepted; the output is always a new tensor

    def forward(self, x):
        layer = self._plan(x, lambda s, d: getattr(_C, "Activation" + s)(
            self.grid, self._desc, d))
        return F.ActivationFunction.apply(x, layer, self.grid)


class ReLU(_Activation):
    def __init__(self, grid, inplace=False):
        super().__init__(grid, _C.ActivationDesc.relu(), inplace)


class LeakyReLU(_Activation):
    def __init__(self, grid, negative_slope=0.01, inplace=False):
        super().__init__(grid, _C.ActivationDesc.leaky_relu(negative_slope),
                         inplace)
        self.negative_slope = negative_slope


_LINEAR_MODES = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _interpolation(size, scale_factor, mode, align_corners,
                   recompute_scale_factor):
    """Checks F.interpolate's arguments as torch does; returns the mode."""
    if mode != "nearest" and mode not in _LINEAR_MODES:
        raise _unsupported("upsampling mode %r (nearest, linear, bilinear "
                           "or trilinear)" % (mode,))
    if (size is None) == (scale_factor is None):
        raise T.error("invalid argument", "give either size or "
                      "scale_factor, not both nor neither")
    if mode == "nearest":
        if align_corners is not None:
            raise T.error("invalid argument", "align_corners only goes "
                          "with the linear modes")
        if size is not None:
            raise _unsupported("nearest upsampling by size: give an integer "
                               "scale_factor")
    return mode


def _linear_target(dist, size, scale_factor, recompute_scale_factor):
    """The output's spatial size and the scales the source coordinates use
    (empty: input / output), as F.interpolate computes them."""
    spatial = tuple(dist.global_shape[2:])
    k = len(spatial)
    if size is not None:
        return tuple(int(v) for v in _tuple(size, k)), []
    factors = _tuple(scale_factor, k)
    out = tuple(int(float(e) * float(f)) for e, f in zip(spatial, factors))
    if recompute_scale_factor:
        return out, []
    return out, [1.0 / float(f) for f in factors]


def _linear_problem(x, mode):
    """What is wrong with x's rank for a linear mode ('' if nothing)."""
    if isinstance(x, torch.Tensor) and x.dim() != _LINEAR_MODES[mode]:
        return "%s interpolation of a %d-dimensional tensor (%d)" % (
            mode, x.dim(), _LINEAR_MODES[mode])
    return ""


def _linear_layer(grid, x, dist, mode, size, scale_factor, align_corners,
                  recompute_scale_factor):
    """The linear interpolation for x's dtype and distribution, kept in the
    grid's cache of layers."""
    out, scales = _linear_target(dist, size, scale_factor,
                                 recompute_scale_factor)
    key = ("interpolate", x.dtype, _moves.key_of(dist), out, tuple(scales),
           bool(align_corners))
    return _moves.layers_of(grid).get(key, lambda: getattr(
        _C, "Interpolate" + T.suffix(x.dtype))(
            grid, out, scales, bool(align_corners), dist))


class Upsample(_Planned):
    """torch.nn.Upsample: 'nearest' by an integer scale_factor, or linear
    interpolation ('bilinear' on 4D, 'trilinear' on 5D tensors) to a size
    or by a scale_factor, align_corners either way."""

    def __init__(self, grid, size=None, scale_factor=None, mode="nearest",
                 align_corners=None, recompute_scale_factor=None):
        super().__init__(grid, None)
        self.mode = _interpolation(size, scale_factor, mode, align_corners,
                                   recompute_scale_factor)
        self.size, self.scale_factor = size, scale_factor
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x):
        if self.mode != "nearest":
            # The module's own layer (as interpolate() plans it), so that a
            # distconv.Profiler times its calls.
            layer = self._plan(x, lambda s, d: _linear_layer(
                self.grid, x, d, self.mode, self.size, self.scale_factor,
                self.align_corners, self.recompute_scale_factor),
                problem=_linear_problem(x, self.mode))
            return F.MapFunction.apply(x, layer, self.grid, self.grid)
        spatial = x.dim() - 2 if isinstance(x, torch.Tensor) else 2
        factors = _tuple(self.scale_factor, spatial)
        problem = ""
        if any(int(f) != f or f < 1 for f in factors):
            problem = "Upsample scale_factor %r: integers >= 1 only" % (
                self.scale_factor,)
        layer = self._plan(x, lambda s, d: getattr(_C, "Upsample" + s)(
            self.grid, tuple(int(f) for f in factors), d), problem=problem)
        return F.MapFunction.apply(x, layer, self.grid, self.grid)

    def extra_repr(self):
        return "size={}, scale_factor={}, mode={}".format(
            self.size, self.scale_factor, self.mode)


def interpolate(grid, x, size=None, scale_factor=None, mode="nearest",
                align_corners=None, recompute_scale_factor=None):
    """torch.nn.functional.interpolate on shards over `grid`: 'nearest' by
    an integer scale factor, 'bilinear' (4D) and 'trilinear' (5D) to a
    size or by a scale factor; differentiable."""
    mode = _interpolation(size, scale_factor, mode, align_corners,
                          recompute_scale_factor)
    if mode == "nearest":
        return Upsample(grid, scale_factor=scale_factor)(x)
    dist = T.agree(grid, x, "interpolate input",
                   problem=_linear_problem(x, mode))
    layer = _linear_layer(grid, x, dist, mode, size, scale_factor,
                          align_corners, recompute_scale_factor)
    return F.MapFunction.apply(x, layer, grid, grid)


def _reduction(reduction):
    if reduction not in ("mean", "sum"):
        raise _unsupported("loss reduction %r ('mean' or 'sum')" % reduction)
    return getattr(_C.LossReduction, reduction)


class CrossEntropyLoss(_Planned):
    """Class indices (an int64 target of shape (N, spatial...)) or class
    probabilities (a target shaped like the input); the loss of the whole
    tensor, the same on every rank."""

    def __init__(self, grid, weight=None, size_average=None,
                 ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(grid, None)
        if weight is not None:
            raise _unsupported("cross-entropy with class weights")
        if label_smoothing != 0.0:
            raise _unsupported("cross-entropy with label_smoothing")
        if size_average is not None or reduce is not None:
            raise _unsupported("size_average and reduce (use reduction)")
        self.ignore_index, self.reduction = ignore_index, reduction
        self._reduction = _reduction(reduction)

    def forward(self, input, target):
        indices = isinstance(target, torch.Tensor) and \
            target.dtype == torch.int64
        kind = (_C.LossKind.cross_entropy_indices if indices else
                _C.LossKind.cross_entropy_probabilities)
        problem = ""
        if indices:
            if target.dim() != input.dim() - 1:
                problem = ("CrossEntropyLoss target of %d dimensions for an "
                           "input of %d" % (target.dim(), input.dim()))
            else:
                target = target.unsqueeze(1).contiguous()
        elif not isinstance(target, torch.Tensor) or \
                target.dtype != input.dtype:
            problem = ("CrossEntropyLoss target: int64 class indices or "
                       "probabilities of the input's dtype")
        if not problem and tuple(target.shape[2:]) != \
                tuple(input.shape[2:]):
            problem = "CrossEntropyLoss target shard %s for input shard %s" \
                % (tuple(target.shape), tuple(input.shape))
        desc = _C.LossDesc(kind, self._reduction,
                           self.ignore_index if indices else None)
        layer = self._plan(input, lambda s, d: getattr(_C, "Loss" + s)(
            self.grid, desc, d), problem=problem, variant=indices)
        return F.LossFunction.apply(input, target, layer, self.grid)


class MSELoss(_Planned):
    def __init__(self, grid, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(grid, None)
        if size_average is not None or reduce is not None:
            raise _unsupported("size_average and reduce (use reduction)")
        self.reduction = reduction
        self._desc = _C.LossDesc(_C.LossKind.mean_squared_error,
                                 _reduction(reduction), None)

    def forward(self, input, target):
        problem = ""
        if not isinstance(target, torch.Tensor) or \
                target.shape != getattr(input, "shape", None) or \
                target.dtype != input.dtype:
            problem = "MSELoss target must have the input's shard shape " \
                "and dtype"
        layer = self._plan(input, lambda s, d: getattr(_C, "Loss" + s)(
            self.grid, self._desc, d), problem=problem)
        return F.LossFunction.apply(input, target, layer, self.grid)
