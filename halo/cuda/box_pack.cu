#include "halo/cuda/box_pack.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"

namespace distconv {

using internal::check_cuda;

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kUnitsPerThread = 4;
constexpr std::int64_t kMaxBlocksX = 65535;
constexpr std::size_t kMaxSegments = 65535;  // gridDim.y

// A unit of `Bytes` bytes moved by one load and one store.
template <int Bytes> struct CopyUnit;
template <> struct CopyUnit<2> { using type = unsigned short; };
template <> struct CopyUnit<4> { using type = unsigned int; };
template <> struct CopyUnit<8> { using type = uint2; };
template <> struct CopyUnit<16> { using type = uint4; };

// W elements moved together and combined one by one.
template <typename T, int W>
struct alignas(sizeof(T) * W) Lanes {
  T v[W];
};

// The CUDA type of elements of T: distconv's bf16 and fp16 combine as
// CUDA's.
template <typename T>
struct CudaElement {
  using type = T;
};
template <>
struct CudaElement<bf16> {
  using type = __nv_bfloat16;
};
static_assert(sizeof(bf16) == sizeof(__nv_bfloat16));
template <>
struct CudaElement<fp16> {
  using type = __half;
};
static_assert(sizeof(fp16) == sizeof(__half));

template <typename T>
using Accumulator =
    std::conditional_t<std::is_same_v<T, double>, double, float>;

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    using A = Accumulator<T>;
    return static_cast<T>(static_cast<A>(a) + static_cast<A>(b));
  }
};

// std::max(a, b): a unless a < b.
struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    using A = Accumulator<T>;
    return static_cast<A>(a) < static_cast<A>(b) ? b : a;
  }
};

// Every block of row blockIdx.y works on segment blockIdx.y, striding over
// its units; consecutive threads touch consecutive units of a row.
__device__ void load_segment(const BoxSegment* segments, BoxSegment& s) {
  if (threadIdx.x == 0) s = segments[blockIdx.y];
  __syncthreads();
}

template <typename Unit>
__global__ void __launch_bounds__(kThreads)
    pack_kernel(const BoxSegment* segments, const Unit* __restrict__ array,
                Unit* __restrict__ packed) {
  __shared__ BoxSegment s;
  load_segment(segments, s);
  const std::int64_t step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t k = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
       k < s.volume; k += step) {
    packed[s.packed_offset + k] = array[segment_array_index(s, k)];
  }
}

template <typename Unit>
__global__ void __launch_bounds__(kThreads)
    unpack_kernel(const BoxSegment* segments, const Unit* __restrict__ packed,
                  Unit* __restrict__ array) {
  __shared__ BoxSegment s;
  load_segment(segments, s);
  const std::int64_t step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t k = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
       k < s.volume; k += step) {
    array[segment_array_index(s, k)] = packed[s.packed_offset + k];
  }
}

template <typename T, int W, typename Op>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const BoxSegment* segments,
                   const Lanes<T, W>* __restrict__ packed,
                   Lanes<T, W>* __restrict__ array, Op op) {
  __shared__ BoxSegment s;
  load_segment(segments, s);
  const std::int64_t step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t k = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
       k < s.volume; k += step) {
    const std::int64_t at = segment_array_index(s, k);
    const Lanes<T, W> in = packed[s.packed_offset + k];
    Lanes<T, W> cell = array[at];
    for (int j = 0; j < W; ++j) cell.v[j] = op(cell.v[j], in.v[j]);
    array[at] = cell;
  }
}

dim3 grid_for(std::int64_t max_volume, std::size_t segments) {
  const std::int64_t per_block = kThreads * kUnitsPerThread;
  const std::int64_t blocks = std::clamp<std::int64_t>(
      (max_volume + per_block - 1) / per_block, 1, kMaxBlocksX);
  return dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(segments));
}

std::int64_t max_volume(const BoxSegments& s, std::size_t begin,
                        std::size_t end) {
  std::int64_t most = 0;
  for (std::size_t i = begin; i < end; ++i) {
    most = std::max(most, s.segments[i].volume);
  }
  return most;
}

// Calls fn(std::integral_constant<int, W>) for the plan's width W (units of
// at most 16 bytes, as make_box_segments was asked for).
template <typename T, int W, typename Fn>
bool try_width(int width, Fn& fn) {
  if constexpr (sizeof(T) * W <= 16) {
    if (width == W) {
      fn(std::integral_constant<int, W>());
      return true;
    }
  }
  return false;
}

template <typename T, typename Fn>
void with_width(int width, Fn fn) {
  if (try_width<T, 1>(width, fn) || try_width<T, 2>(width, fn) ||
      try_width<T, 4>(width, fn) || try_width<T, 8>(width, fn)) {
    return;
  }
  throw Error(ErrorKind::kInvalidArgument,
              internal::str("no pack kernel for units of ", width, " x ",
                            sizeof(T), " bytes"));
}

bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace

template <typename T>
DeviceBoxCopy<T>::DeviceBoxCopy(const Shape& extent,
                                const std::vector<Box>& boxes) {
  vector_.host = make_box_segments(extent, boxes, 16 / sizeof(T));
  scalar_.host = make_box_segments(extent, boxes, 1);
  require(scalar_.host.segments.size() <= kMaxSegments,
          ErrorKind::kUnsupported, scalar_.host.segments.size(),
          " non-empty boxes exceed the GPU pack kernels' limit of ", kMaxSegments);
  try {
    upload(vector_);
    upload(scalar_);
  } catch (...) {
    release(vector_);
    release(scalar_);
    throw;
  }
}

template <typename T>
DeviceBoxCopy<T>::~DeviceBoxCopy() {
  release(vector_);
  release(scalar_);
}

template <typename T>
DeviceBoxCopy<T>::DeviceBoxCopy(DeviceBoxCopy&& other) noexcept
    : vector_(std::exchange(other.vector_, {})),
      scalar_(std::exchange(other.scalar_, {})) {}

template <typename T>
DeviceBoxCopy<T>& DeviceBoxCopy<T>::operator=(DeviceBoxCopy&& other) noexcept {
  std::swap(vector_, other.vector_);
  std::swap(scalar_, other.scalar_);
  return *this;
}

template <typename T>
void DeviceBoxCopy<T>::upload(Plan& plan) {
  const std::size_t bytes = sizeof(BoxSegment) * plan.host.segments.size();
  if (bytes == 0) return;
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc of ", bytes,
             " bytes of pack segments");
  plan.device = static_cast<BoxSegment*>(p);
  check_cuda(cudaMemcpy(p, plan.host.segments.data(), bytes,
                        cudaMemcpyHostToDevice),
             "cudaMemcpy of the pack segments");
  // From pageable memory cudaMemcpy may return before the data has landed;
  // kernels on non-blocking streams must not see it half written.
  check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
}

template <typename T>
void DeviceBoxCopy<T>::release(Plan& plan) noexcept {
  if (plan.device != nullptr) cudaFree(plan.device);
  plan.device = nullptr;
}

template <typename T>
const typename DeviceBoxCopy<T>::Plan& DeviceBoxCopy<T>::plan_for(
    const void* a, const void* b) const {
  const std::size_t unit = sizeof(T) * vector_.host.width;
  return aligned(a, unit) && aligned(b, unit) ? vector_ : scalar_;
}

template <typename T>
void DeviceBoxCopy<T>::pack(const T* array, T* packed,
                            cudaStream_t stream) const {
  const Plan& p = plan_for(array, packed);
  const std::size_t n = p.host.segments.size();
  if (n == 0) return;
  const dim3 grid = grid_for(p.host.max_volume, n);
  with_width<T>(p.host.width, [&](auto w) {
    using Unit = typename CopyUnit<sizeof(T) * decltype(w)::value>::type;
    pack_kernel<Unit><<<grid, kThreads, 0, stream>>>(
        p.device, reinterpret_cast<const Unit*>(array),
        reinterpret_cast<Unit*>(packed));
  });
  check_cuda(cudaGetLastError(), "launching the pack kernel");
}

template <typename T>
void DeviceBoxCopy<T>::unpack(const T* packed, T* array, BoxCombine combine,
                              cudaStream_t stream) const {
  const Plan& p = plan_for(array, packed);
  const std::vector<std::size_t>& waves = p.host.wave_begin;
  for (std::size_t w = 0; w + 1 < waves.size(); ++w) {
    const std::size_t begin = waves[w], end = waves[w + 1];
    const dim3 grid = grid_for(max_volume(p.host, begin, end), end - begin);
    const BoxSegment* segments = p.device + begin;
    with_width<T>(p.host.width, [&](auto width) {
      constexpr int W = decltype(width)::value;
      using Unit = typename CopyUnit<sizeof(T) * W>::type;
      using E = typename CudaElement<T>::type;
      using L = Lanes<E, W>;
      const L* in = reinterpret_cast<const L*>(packed);
      L* out = reinterpret_cast<L*>(array);
      switch (combine) {
        case BoxCombine::kCopy:
          unpack_kernel<Unit><<<grid, kThreads, 0, stream>>>(
              segments, reinterpret_cast<const Unit*>(packed),
              reinterpret_cast<Unit*>(array));
          break;
        case BoxCombine::kSum:
          combine_kernel<E, W><<<grid, kThreads, 0, stream>>>(segments, in,
                                                              out, SumOp());
          break;
        case BoxCombine::kMax:
          combine_kernel<E, W><<<grid, kThreads, 0, stream>>>(segments, in,
                                                              out, MaxOp());
          break;
      }
    });
    check_cuda(cudaGetLastError(), "launching the unpack kernel");
  }
}

#define DISTCONV_INSTANTIATE(T) template class DeviceBoxCopy<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE
template class DeviceBoxCopy<__half>;
template class DeviceBoxCopy<__nv_bfloat16>;

}  // namespace distconv
