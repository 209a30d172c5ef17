"""distconv.Profiler: where a PyTorch training step goes, per distconv.nn
module and pass: time, an estimate of the FLOPs (convolutions), and the
share of the step, merged over the grid's ranks as the slowest rank sees
them (layers/profile.h: the same table and JSON as the C++ examples'
--profile, which perf/plot_profile.py reads).

    prof = distconv.Profiler(grid, model)    # every distconv.nn module
    for step in range(steps):
        with prof.step():
            loss = loss_fn(model(x), target)
            loss.backward()
            optimizer.step()
    table, json_text = prof.summary()         # collective over the grid
    if grid.rank == 0:
        print(table)
    prof.close()                               # the modules run bare again

It times the calls each module makes into the library inside step():
forward, and backward (its input and parameter gradients together, pass
"backward"); a loss whose input needs a gradient computes it in forward
(pass "forward-backward"); calls outside a step are not counted.
What runs outside them (PyTorch's autograd, distconv.cat and add, the
optimizer, torch.nn modules) is the table's "(in no row)". The time
blocked on halo exchanges and collectives is inside each call's time; the
Python profile does not split it out.
"""
import contextlib
import math
import time
import weakref

from . import _distconv as _C

# The layer methods timed, and the pass each is.
_PASSES = {"forward": "forward", "apply": "forward", "backward": "backward",
           "forward_backward": "forward-backward"}


def _conv_flops(module, layer, pass_):
    """A convolution's FLOPs on this rank (2 per multiply-add): forward over
    its output shard; backward twice that (input and weight gradients)."""
    taps = math.prod(module.kernel_size)
    out_cells = math.prod(layer.dst_shape())
    per_cell = 2.0 * taps * module.in_channels / module.groups
    if getattr(module, "transposed", False):
        per_cell /= math.prod(module.stride)
    forward = out_cells * per_cell
    return forward if pass_ == "forward" else 2 * forward


class _Timed:
    """Stands in for a module's extension layer: its passes are timed into
    the profile, everything else is the layer's. It holds its module
    weakly, and the profiler holds the modules weakly, so that no
    reference cycle keeps a grid alive until the garbage collector frees it
    at a different moment on each rank (freeing a grid is collective)."""

    def __init__(self, layer, profiler, name, module):
        self._layer = layer
        self._profiler = profiler
        self._name = name
        self._module = weakref.ref(module)

    def __getattr__(self, attr):
        value = getattr(self._layer, attr)
        pass_ = _PASSES.get(attr)
        if pass_ is None:
            return value

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self._profiler._add(self._name, pass_,
                                    time.perf_counter() - start,
                                    self._flops(pass_))
        return timed

    def _flops(self, pass_):
        module = self._module()
        if module is not None and hasattr(module, "kernel_size") and \
                hasattr(module, "in_channels") and \
                hasattr(self._layer, "dst_shape"):
            return _conv_flops(module, self._layer, pass_)
        return 0.0


class Profiler:
    """Times the passes of every distconv.nn module in `model` (see the
    module's docstring); `grid`: the grid summary() merges over."""

    def __init__(self, grid, model):
        from . import nn  # the modules it attaches to
        self._grid = grid
        self._profile = _C._Profile()
        self._modules = []
        self._in_step = False
        for name, m in model.named_modules():
            if isinstance(m, nn._Planned):
                m._profiler = (weakref.ref(self), name or type(m).__name__)
                if m._layer is not None:
                    m._layer = self.wrap(m._layer, m)
                self._modules.append(weakref.ref(m))
        if not self._modules:
            raise ValueError("Profiler: %s holds no distconv.nn module"
                             % type(model).__name__)

    def wrap(self, layer, module):
        """`layer`, timed as `module`'s (used by the modules themselves)."""
        if isinstance(layer, _Timed):
            return layer
        return _Timed(layer, self, module._profiler[1], module)

    def _add(self, name, pass_, seconds, flops):
        if self._in_step:
            self._profile.add(name, pass_, seconds, flops)

    @contextlib.contextmanager
    def step(self):
        """One step's bounds: its time is what the shares divide."""
        self._profile.begin_step()
        self._in_step = True
        try:
            yield self
        finally:
            self._in_step = False
            self._profile.end_step()

    @property
    def steps(self):
        return self._profile.steps()

    def summary(self, grid=None):
        """(table, json) over the ranks of `grid` (default: the profiler's
        grid); collective over them. A grid of this rank alone, e.g.
        ProcessGrid(MPI.COMM_SELF, (1, 1, 1, 1)), gives its own figures."""
        return self._profile.summarize(grid or self._grid)

    def close(self):
        """Detaches from the modules (their layers run bare again)."""
        for ref in self._modules:
            m = ref()
            if m is None:
                continue
            m._profiler = None
            if isinstance(m._layer, _Timed):
                m._layer = m._layer._layer
        self._modules = []
