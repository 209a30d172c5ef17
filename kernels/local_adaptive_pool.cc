#include "kernels/local_adaptive_pool.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "distconv/element_types.h"

namespace distconv {
namespace {

// Spatial facts padded to three dimensions in front.
struct Geometry {
  std::array<Index, 3> lower{}, extent{1, 1, 1}, in{1, 1, 1}, size{1, 1, 1};
  std::array<Index, 3> stride{};  // of the view's spatial dimensions
  Index outputs() const { return size[0] * size[1] * size[2]; }
};

Geometry geometry(const Shape& extent, const Shape& strides,
                  const Shape& lower, const Shape& in, const Shape& size) {
  Geometry g;
  const int k = size.ndims();
  for (int d = 0; d < 3; ++d) {
    const int from = d - (3 - k);
    if (from < 0) continue;
    g.lower[d] = lower[from];
    g.extent[d] = extent[from + 2];
    g.in[d] = in[from];
    g.size[d] = size[from];
    g.stride[d] = strides[from + 2];
  }
  return g;
}

// Calls fn(o, lo, hi) for every output cell o (row-major) with its window
// within the shard as local [lo, hi) per dimension (empty: skipped), and
// cell(o, i) the global flat index of local cell i.
template <typename Fn>
void each_window(const Geometry& g, Fn fn) {
  Index o = 0;
  for (Index a = 0; a < g.size[0]; ++a) {
    for (Index b = 0; b < g.size[1]; ++b) {
      for (Index c = 0; c < g.size[2]; ++c, ++o) {
        const Index idx[3] = {a, b, c};
        std::array<Index, 3> lo{}, hi{};
        bool empty = false;
        for (int d = 0; d < 3; ++d) {
          const Index first = idx[d] * g.in[d] / g.size[d];
          const Index last = ((idx[d] + 1) * g.in[d] + g.size[d] - 1) /
                             g.size[d];
          lo[d] = std::max(first, g.lower[d]) - g.lower[d];
          hi[d] = std::min(last, g.lower[d] + g.extent[d]) - g.lower[d];
          empty = empty || lo[d] >= hi[d];
        }
        if (!empty) fn(o, lo, hi);
      }
    }
  }
}

// Calls fn(offset, flat) for every local cell of [lo, hi): its spatial
// offset in the view and its global flat index.
template <typename Fn>
void each_cell(const Geometry& g, const std::array<Index, 3>& lo,
               const std::array<Index, 3>& hi, Fn fn) {
  for (Index a = lo[0]; a < hi[0]; ++a) {
    for (Index b = lo[1]; b < hi[1]; ++b) {
      for (Index c = lo[2]; c < hi[2]; ++c) {
        const Index flat =
            ((g.lower[0] + a) * g.in[1] + g.lower[1] + b) * g.in[2] +
            g.lower[2] + c;
        fn(a * g.stride[0] + b * g.stride[1] + c * g.stride[2], flat);
      }
    }
  }
}

Index window_cells(const Geometry& g, Index o) {
  Index idx[3] = {o / (g.size[1] * g.size[2]), (o / g.size[2]) % g.size[1],
                  o % g.size[2]};
  Index cells = 1;
  for (int d = 0; d < 3; ++d) {
    cells *= ((idx[d] + 1) * g.in[d] + g.size[d] - 1) / g.size[d] -
             idx[d] * g.in[d] / g.size[d];
  }
  return cells;
}

}  // namespace

MaxCandidate better(const MaxCandidate& a, const MaxCandidate& b) {
  if (a.index < 0) return b;
  if (b.index < 0) return a;
  const bool na = std::isnan(a.value), nb = std::isnan(b.value);
  if (na || nb) {
    if (na && nb) return a.index > b.index ? a : b;
    return na ? a : b;
  }
  if (a.value != b.value) return a.value > b.value ? a : b;
  return a.index < b.index ? a : b;
}

template <typename T>
void LocalAdaptivePool<T>::sums(StridedView<const T> x, const Shape& lower,
                                const Shape& in, const Shape& size,
                                double* out) {
  const Geometry g = geometry(x.extent(), x.strides(), lower, in, size);
  const Index n = x.extent()[0], ch = x.extent()[1], v = g.outputs();
  const Index cs = x.strides()[1];
  std::fill(out, out + n * ch * v, 0.0);
  std::vector<double> acc(static_cast<size_t>(ch));
  for (Index s = 0; s < n; ++s) {
    const T* base = x.data() + s * x.strides()[0];
    each_window(g, [&](Index o, const auto& lo, const auto& hi) {
      std::fill(acc.begin(), acc.end(), 0.0);
      each_cell(g, lo, hi, [&](Index at, Index) {
        const T* p = base + at;
        for (Index c = 0; c < ch; ++c) acc[c] += double(p[c * cs]);
      });
      for (Index c = 0; c < ch; ++c) out[(s * ch + c) * v + o] = acc[c];
    });
  }
}

template <typename T>
void LocalAdaptivePool<T>::maxima(StridedView<const T> x, const Shape& lower,
                                  const Shape& in, const Shape& size,
                                  MaxCandidate* out) {
  const Geometry g = geometry(x.extent(), x.strides(), lower, in, size);
  const Index n = x.extent()[0], ch = x.extent()[1], v = g.outputs();
  const Index cs = x.strides()[1];
  std::fill(out, out + n * ch * v, MaxCandidate{});
  for (Index s = 0; s < n; ++s) {
    const T* base = x.data() + s * x.strides()[0];
    each_window(g, [&](Index o, const auto& lo, const auto& hi) {
      each_cell(g, lo, hi, [&](Index at, Index flat) {
        const T* p = base + at;
        for (Index c = 0; c < ch; ++c) {
          MaxCandidate& best = out[(s * ch + c) * v + o];
          best = better(best, MaxCandidate{double(p[c * cs]), flat});
        }
      });
    });
  }
}

template <typename T>
void LocalAdaptivePool<T>::average_backward(const double* dy,
                                            const Shape& lower,
                                            const Shape& in, const Shape& size,
                                            StridedView<T> dx) {
  const Geometry g = geometry(dx.extent(), dx.strides(), lower, in, size);
  const Index n = dx.extent()[0], ch = dx.extent()[1], v = g.outputs();
  // Sums in double over a dense channels-last scratch of the shard, then
  // rounded once into dx.
  Geometry dense = g;
  dense.stride = {ch * g.extent[1] * g.extent[2], ch * g.extent[2], ch};
  const Index per_sample = ch * g.extent[0] * g.extent[1] * g.extent[2];
  std::vector<double> acc(static_cast<size_t>(n * per_sample), 0.0);
  for (Index s = 0; s < n; ++s) {
    double* base = acc.data() + s * per_sample;
    each_window(dense, [&](Index o, const auto& lo, const auto& hi) {
      const double cells = static_cast<double>(window_cells(g, o));
      each_cell(dense, lo, hi, [&](Index at, Index) {
        for (Index c = 0; c < ch; ++c) {
          base[at + c] += dy[(s * ch + c) * v + o] / cells;
        }
      });
    });
  }
  const int k = size.ndims();
  dx.for_each([&](const Shape& i, T& val) {
    Index at = i[0] * per_sample + i[1];
    for (int d = 0; d < k; ++d) at += i[d + 2] * dense.stride[3 - k + d];
    val = T(acc[static_cast<size_t>(at)]);
  });
}

template <typename T>
void LocalAdaptivePool<T>::max_backward(const double* dy,
                                        const std::int64_t* argmax,
                                        const Shape& lower, const Shape& in,
                                        const Shape& size, StridedView<T> dx) {
  const Geometry g = geometry(dx.extent(), dx.strides(), lower, in, size);
  const Index n = dx.extent()[0], ch = dx.extent()[1], v = g.outputs();
  dx.for_each([](const Shape&, T& val) { val = T(0); });
  for (Index s = 0; s < n; ++s) {
    for (Index c = 0; c < ch; ++c) {
      for (Index o = 0; o < v; ++o) {
        Index flat = argmax[(s * ch + c) * v + o];
        if (flat < 0) continue;
        Index idx[3];
        for (int d = 2; d >= 0; --d) {
          idx[d] = flat % g.in[d];
          flat /= g.in[d];
        }
        Index at = s * dx.strides()[0] + c * dx.strides()[1];
        bool mine = true;
        for (int d = 0; d < 3; ++d) {
          const Index local = idx[d] - g.lower[d];
          mine = mine && local >= 0 && local < g.extent[d];
          at += local * g.stride[d];
        }
        if (!mine) continue;
        T& cell = dx.data()[at];
        cell = T(double(cell) + dy[(s * ch + c) * v + o]);
      }
    }
  }
}

#define DISTCONV_INSTANTIATE(T) template struct LocalAdaptivePool<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
