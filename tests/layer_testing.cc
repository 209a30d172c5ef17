#include "tests/layer_testing.h"

#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv::testing {

std::vector<Shape> grids_without_channel_split(int ndims) {
  std::vector<Shape> out;
  for (const Shape& g : factorizations(world_size(), ndims)) {
    if (g[1] == 1) out.push_back(g);
  }
  return out;
}

std::vector<Shape> grids_with_channel_split(int ndims) {
  std::vector<Shape> out;
  for (const Shape& g : factorizations(world_size(), ndims)) {
    if (g[1] > 1) out.push_back(g);
  }
  return out;
}

Shape channel_grid(int ndims) {
  // The fewest channel parts, then the most split spatial dimensions.
  auto split_dims = [](const Shape& g) {
    int k = 0;
    for (int d = 0; d < g.ndims(); ++d) k += g[d] > 1;
    return k;
  };
  Shape out = Shape::filled(ndims, 1);
  for (const Shape& g : factorizations(world_size(), ndims)) {
    if (g[0] != 1 || g[1] == 1) continue;
    if (out[1] == 1 || g[1] < out[1] ||
        (g[1] == out[1] && split_dims(g) > split_dims(out))) {
      out = g;
    }
  }
  return out;
}

Shape spatial_grid(int ndims) {
  Shape out;
  for (const Shape& g : factorizations(world_size(), ndims)) {
    if (g[0] == 1 && g[1] == 1) out = g;
  }
  return out;
}

Shape squarest_hw_grid() {
  const int n = world_size();
  int a = 1;
  for (int d = 1; d * d <= n; ++d) {
    if (n % d == 0) a = d;
  }
  return Shape{1, 1, a, n / a};
}

double global_dot(const DistTensor<double>& a, const DistTensor<double>& b) {
  double sum = 0;
  const StridedView<const double> bv = b.interior();
  a.interior().for_each(
      [&](const Shape& i, const double& v) { sum += v * bv(i); });
  return sum_over(a.grid().comm(), sum);
}

}  // namespace distconv::testing
