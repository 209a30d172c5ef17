#include "layers/internal/pointwise.h"

#include <sstream>

namespace distconv::internal {

std::string describe(const Distribution& dist) {
  std::ostringstream out;
  out << "global " << dist.global_shape() << " over grid "
      << dist.grid_shape();
  for (int d = 0; d < dist.ndims(); ++d) {
    const BlockPartition& p = dist.partition(d);
    if (p == BlockPartition::balanced(p.extent(), p.parts())) continue;
    out << ", dimension " << d << " split at";
    for (int i = 0; i <= p.parts(); ++i) {
      out << (i ? "," : " ") << (i < p.parts() ? p.begin(i) : p.extent());
    }
  }
  return out.str();
}

}  // namespace distconv::internal
