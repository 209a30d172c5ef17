"""Moving shards between distributions over the ranks of a grid: what
`cat`, `add` and `redistribute_like` do to inputs split otherwise than the
first, and what a grouped convolution does to an input whose channel
split cuts a group. Only the cells that change owner travel (the
library's Redistribution plans, per peer, the box it sends and the box it
receives; cells staying on a rank are copied locally).

The layers are kept per (dtype, distributions) in a small
least-recently-used cache on the grid object (they die with it), so a
network with several skip connections plans each move once. Every rank
makes the same calls in the same order, so every rank finds the same
layers there.
"""
import collections

from . import _distconv as _C
from . import _functions as F
from . import _tensors as T


class LayerCache:
    """Layers made by `make()`, kept under a key of plain values (at most
    `size` of them; the least recently used go first)."""

    def __init__(self, size=64):
        self._size = size
        self._layers = collections.OrderedDict()

    def get(self, key, make):
        layer = self._layers.get(key)
        if layer is None:
            layer = make()
            self._layers[key] = layer
            while len(self._layers) > self._size:
                self._layers.popitem(last=False)
        self._layers.move_to_end(key)
        return layer


def layers_of(grid):
    """The cache of layers planned over `grid`."""
    cache = getattr(grid, "_distconv_layers", None)
    if cache is None:
        cache = LayerCache()
        grid._distconv_layers = cache
    return cache


def key_of(dist):
    """A distribution as a plain value: its part sizes per dimension."""
    return tuple(tuple(dist.sizes(d)) for d in range(len(dist.global_shape)))


def with_sizes(dist, like, dims):
    """`dist` with `like`'s part sizes in dimensions `dims` (every rank
    decides alike: both are agreed distributions)."""
    sizes = [dist.sizes(d) if d not in dims else like.sizes(d)
             for d in range(len(dist.global_shape))]
    return _C.Distribution.from_sizes(sizes)


def move(grid, x, src, dst, to_grid=None):
    """x (this rank's shard of `src` over `grid`) as this rank's shard of
    `dst` over `to_grid` (default: the same grid); differentiable. x itself
    when nothing moves."""
    to_grid = grid if to_grid is None else to_grid
    if to_grid is grid and src == dst:
        return x
    # to_grid itself in the key: the cache keeps it alive, so it is never
    # mistaken for a later grid.
    key = ("move", to_grid, x.dtype, key_of(src), key_of(dst))
    layer = layers_of(grid).get(key, lambda: getattr(
        _C, "Redistribution" + T.data_suffix(x.dtype))(grid, src, to_grid,
                                                       dst))
    return F.MapFunction.apply(x, layer, grid, to_grid)
