#include "kernels/local_interpolate.h"

#include <array>
#include <cstdint>

namespace distconv {
namespace {

// Up to 8 corners of an output cell: offsets from the input view's (n, 0)
// and weights.
struct Corners {
  int count = 0;
  std::array<Index, 8> offset{};
  std::array<double, 8> weight{};
};

// Calls fn(n, output offset, corners) for every output cell; spatial
// dimensions are padded to three in front (one output, one tap).
template <typename Fn>
void each_output(const Shape& in_strides, const Shape& out_extent,
                 const Shape& out_strides, const std::vector<LocalTaps>& taps,
                 Fn fn) {
  const int k = static_cast<int>(taps.size());
  LocalTaps one;
  one.i0 = one.i1 = {0};
  one.w0 = {1.0};
  one.w1 = {0.0};
  std::array<const LocalTaps*, 3> t{};
  std::array<Index, 3> in_s{}, out_s{}, ext{};
  for (int d = 0; d < 3; ++d) {
    const int from = d - (3 - k);
    t[d] = from >= 0 ? &taps[from] : &one;
    in_s[d] = from >= 0 ? in_strides[from + 2] : 0;
    out_s[d] = from >= 0 ? out_strides[from + 2] : 0;
    ext[d] = from >= 0 ? out_extent[from + 2] : 1;
  }
  for (Index n = 0; n < out_extent[0]; ++n) {
    for (Index a = 0; a < ext[0]; ++a) {
      for (Index b = 0; b < ext[1]; ++b) {
        for (Index c = 0; c < ext[2]; ++c) {
          const Index o[3] = {a, b, c};
          Corners cs;
          for (int mask = 0; mask < 8; ++mask) {
            double w = 1;
            Index off = 0;
            for (int d = 0; d < 3; ++d) {
              const bool hi = (mask >> (2 - d)) & 1;
              const double wd = hi ? t[d]->w1[o[d]] : t[d]->w0[o[d]];
              w *= wd;
              off += (hi ? t[d]->i1[o[d]] : t[d]->i0[o[d]]) * in_s[d];
            }
            if (w == 0) continue;
            cs.offset[cs.count] = off;
            cs.weight[cs.count] = w;
            ++cs.count;
          }
          fn(n, a * out_s[0] + b * out_s[1] + c * out_s[2], cs);
        }
      }
    }
  }
}

}  // namespace

template <typename T>
void LocalInterpolate<T>::forward(StridedView<const T> x,
                                  const std::vector<LocalTaps>& taps,
                                  StridedView<T> y) {
  const Index channels = y.extent()[1];
  const Index xc = x.strides()[1], yc = y.strides()[1];
  each_output(x.strides(), y.extent(), y.strides(), taps,
              [&](Index n, Index at, const Corners& cs) {
                const T* base = x.data() + n * x.strides()[0];
                T* out = y.data() + n * y.strides()[0] + at;
                for (Index ch = 0; ch < channels; ++ch) {
                  double v = 0;
                  for (int i = 0; i < cs.count; ++i) {
                    v += cs.weight[i] * double(base[cs.offset[i] + ch * xc]);
                  }
                  out[ch * yc] = T(v);
                }
              });
}

template <typename T>
void LocalInterpolate<T>::backward(StridedView<const T> dy,
                                   const std::vector<LocalTaps>& taps,
                                   StridedView<T> dx) {
  const Index channels = dy.extent()[1];
  const Index gc = dy.strides()[1], xc = dx.strides()[1];
  each_output(dx.strides(), dy.extent(), dy.strides(), taps,
              [&](Index n, Index at, const Corners& cs) {
                const T* g = dy.data() + n * dy.strides()[0] + at;
                T* base = dx.data() + n * dx.strides()[0];
                for (int i = 0; i < cs.count; ++i) {
                  T* p = base + cs.offset[i];
                  const double w = cs.weight[i];
                  for (Index ch = 0; ch < channels; ++ch) {
                    p[ch * xc] = T(double(p[ch * xc]) + w * double(g[ch * gc]));
                  }
                }
              });
}

template struct LocalInterpolate<float>;
template struct LocalInterpolate<double>;

}  // namespace distconv
