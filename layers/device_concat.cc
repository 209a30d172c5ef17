// Concat and Slice in GPU memory (layers/concat.h); written once for every
// space in layers/internal/concat_impl.h. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "layers/concat.h"
#include "layers/internal/concat_impl.h"
#include "layers/internal/device_pointwise.h"

namespace distconv {

template class Concat<float, DeviceSpace>;
template class Concat<double, DeviceSpace>;
template class Slice<float, DeviceSpace>;
template class Slice<double, DeviceSpace>;
template class Concat<bf16, DeviceSpace>;
template class Concat<fp16, DeviceSpace>;
template class Slice<bf16, DeviceSpace>;
template class Slice<fp16, DeviceSpace>;

}  // namespace distconv
