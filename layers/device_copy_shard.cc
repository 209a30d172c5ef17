// copy_shard in GPU memory: one CUDA copy kernel over the shard interiors
// (layers/internal/copy_shard_impl.h). Built only with --config=cuda.
#include "distconv/device_space.h"
#include "layers/copy_shard.h"
#include "layers/internal/copy_shard_impl.h"
#include "layers/internal/device_pointwise.h"

namespace distconv {

template void copy_shard<float, DeviceSpace>(
    const DistTensor<float, DeviceSpace>&, DistTensor<float, DeviceSpace>&,
    const CopyShardOptions&);
template void copy_shard<double, DeviceSpace>(
    const DistTensor<double, DeviceSpace>&, DistTensor<double, DeviceSpace>&,
    const CopyShardOptions&);
template void copy_shard<bf16, DeviceSpace>(
    const DistTensor<bf16, DeviceSpace>&, DistTensor<bf16, DeviceSpace>&,
    const CopyShardOptions&);
template void copy_shard<fp16, DeviceSpace>(
    const DistTensor<fp16, DeviceSpace>&, DistTensor<fp16, DeviceSpace>&,
    const CopyShardOptions&);

}  // namespace distconv
