#include "kernels/onednn/conv.h"

#include <algorithm>
#include <dnnl.hpp>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/onednn/blocked.h"
#include "kernels/onednn/conv_descs.h"

namespace distconv::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

Tag channels_last(int ndims) { return ndims == 4 ? Tag::nhwc : Tag::ndhwc; }

// The channel-blocked layout of blocks of 16 or 8 channels.
Tag blocked_tag(int ndims, Index block) {
  if (block == 16) return ndims == 4 ? Tag::nChw16c : Tag::nCdhw16c;
  return ndims == 4 ? Tag::nChw8c : Tag::nCdhw8c;
}

// With stride 1, backward-data is itself a forward convolution: of
// diff_dst, with the weights' channel roles swapped and their taps
// reversed, and padding d(k-1) - p on each side (y[o] = sum_k w[k]
// x[o - pl + d k] gives dx[i] = sum_k w[K-1-k] y[i - (d(K-1) - pl) + d k]).
// (conv_impl_excluded() says where that padding would be negative or the
// stride is not 1.)
ConvDesc adjoint_forward(const ConvDesc& d) {
  ConvDesc a = d;
  std::swap(a.in_channels, a.out_channels);
  a.bias = ConvBias::kNone;
  for (int j = 0; j < d.spatial_dims(); ++j) {
    const Index extent = d.dilation[j] * (d.kernel[j] - 1);
    a.padding_lower[j] = extent - d.padding_lower[j];
    a.padding_upper[j] = extent - d.padding_upper[j];
  }
  return a;
}

// Plain weights (g, F/g, C/g, taps) of `d` into the adjoint forward's
// (g, C/g, F/g, taps reversed): reversing the row-major tap index reverses
// every spatial axis.
void transpose_and_flip(const ConvDesc& d, const float* w, float* out) {
  const Index g = d.groups, f = d.out_channels / g, c = d.in_channels / g;
  const Index taps = d.kernel.volume();
  for (Index gi = 0; gi < g; ++gi) {
    for (Index fi = 0; fi < f; ++fi) {
      for (Index ci = 0; ci < c; ++ci) {
        const float* from = w + ((gi * f + fi) * c + ci) * taps;
        float* to = out + ((gi * c + ci) * f + fi) * taps;
        for (Index k = 0; k < taps; ++k) to[taps - 1 - k] = from[k];
      }
    }
  }
}

bool is_reference(const std::string& impl) {
  return impl.rfind("ref", 0) == 0;
}

template <typename A>
constexpr ConvData data_of() {
  if constexpr (std::is_same_v<A, bf16>) return ConvData::kBf16;
  if constexpr (std::is_same_v<A, fp16>) return ConvData::kF16;
  return ConvData::kF32;
}

memory::data_type dnnl_type(ConvData data) {
  switch (data) {
    case ConvData::kBf16:
      return memory::data_type::bf16;
    case ConvData::kF16:
      return memory::data_type::f16;
    case ConvData::kF32:
      break;
  }
  return memory::data_type::f32;
}

}  // namespace

struct Conv::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable dnnl::stream stream{engine};
  ConvPass pass;
  ConvData data = ConvData::kF32;
  bool bias;
  dnnl::primitive prim;
  std::string name;
  // Weights in the primitive's layout, and reorders from / to plain.
  memory::desc user_weights_md, prim_weights_md;
  std::optional<dnnl::reorder> weights_in, weights_out;
  std::optional<memory> prim_weights;  // when the layouts differ
  memory::desc src_md, dst_md, bias_md;
  // On blocked copies of the activations (empty: on the caller's
  // channels-last arrays): src's (x or dx) and dst's (y or dy), in blocks
  // of `block` channels.
  Shape src_shape, dst_shape;
  Index block = 0;
  std::vector<float> blocked_src, blocked_dst;
  // Backward-data as the adjoint forward convolution: the description it
  // inverts and the transposed, flipped weights (empty: oneDNN's
  // backward-data primitive).
  ConvDesc desc;
  std::vector<float> adjoint_weights;
  // A dense layer as an inner product: the plain copy of src's side (x or
  // dx), the caller's channels-last layout of it, and the reorder from it
  // (forward, backward-weights) or back into it (backward-data).
  std::vector<float> plain;
  memory::desc channels_last_md, plain_block_md;  // the caller's cells
  std::optional<dnnl::reorder> to_plain, from_plain;

  // The pass's primitive (of Fwd, BwdData or BwdWeights: a convolution's
  // or an inner product's) from the forward primitive descriptor and the
  // makers of the backward ones; the primitive's weights (or weight
  // gradients) descriptor and name.
  template <typename Fwd, typename BwdData, typename BwdWeights, typename FwdPd,
            typename DataPd, typename WeightsPd>
  void take_pass(const FwdPd& fpd, DataPd data_pd, WeightsPd weights_pd) {
    if (pass == ConvPass::kForward) {
      prim = Fwd(fpd);
      prim_weights_md = fpd.weights_desc();
      name = fpd.impl_info_str();
    } else if (pass == ConvPass::kBackwardData) {
      const auto pd = data_pd(fpd);
      prim = BwdData(pd);
      prim_weights_md = pd.weights_desc();
      name = pd.impl_info_str();
    } else {
      const auto pd = weights_pd(fpd);
      prim = BwdWeights(pd);
      prim_weights_md = pd.diff_weights_desc();
      name = pd.impl_info_str();
    }
  }

  // The pass's convolution on src / dst memory descriptors.
  void make_pass(const ConvDesc& d, const memory::desc& src,
                 const memory::desc& dst) {
    take_pass<dnnl::convolution_forward, dnnl::convolution_backward_data,
              dnnl::convolution_backward_weights>(
        forward_pd(d, src, dst, engine),
        [&](const auto& f) { return backward_data_pd(d, src, dst, engine, f); },
        [&](const auto& f) {
          return backward_weights_pd(d, src, dst, engine, f);
        });
  }

  // The pass's inner product on plain src and (n, F) dst descriptors.
  void make_inner_product(const ConvDesc& d, const memory::desc& src,
                          const memory::desc& dst) {
    take_pass<dnnl::inner_product_forward, dnnl::inner_product_backward_data,
              dnnl::inner_product_backward_weights>(
        inner_product_forward_pd(d, src, dst, engine),
        [&](const auto& f) {
          return inner_product_backward_data_pd(d, src, dst, engine, f);
        },
        [&](const auto& f) {
          return inner_product_backward_weights_pd(d, src, dst, engine, f);
        });
  }

  // src (x) as the inner product reads it: its plain copy where planned.
  const void* plain_src(const void* src) {
    if (!to_plain) return src;
    memory from(channels_last_md, engine, const_cast<void*>(src));
    memory to(plain_block_md, engine, plain.data());
    to_plain->execute(stream, from, to);
    return plain.data();
  }

  // The weights in the primitive's layout: reordered into the plan's
  // buffer, or the user's array itself when the layouts agree.
  memory weights_for(const float* weights) const {
    memory user(user_weights_md, engine, const_cast<float*>(weights));
    if (!weights_in) return user;
    memory buffer = *prim_weights;  // a handle to the plan's buffer
    weights_in->execute(stream, user, buffer);
    return buffer;
  }
};

namespace {

// The activations' layout oneDNN picks for the pass when free to choose.
std::pair<memory::desc, memory::desc> preferred_layouts(
    ConvPass pass, const ConvDesc& d, const memory::desc& any_src,
    const memory::desc& any_dst, const dnnl::engine& engine) {
  const auto fpd = forward_pd(d, any_src, any_dst, engine);
  if (pass == ConvPass::kForward) return {fpd.src_desc(), fpd.dst_desc()};
  if (pass == ConvPass::kBackwardData) {
    const auto pd = backward_data_pd(d, any_src, any_dst, engine, fpd);
    return {pd.diff_src_desc(), pd.diff_dst_desc()};
  }
  const auto pd = backward_weights_pd(d, any_src, any_dst, engine, fpd);
  return {pd.src_desc(), pd.diff_dst_desc()};
}

// oneDNN 3.2's 1x1 backward-weights kernels for AVX-512 (jit_1x1:avx512_core,
// and jit_bf16_1x1:avx512_core_bf16 in bf16) and AVX2 crash on channels-last
// strided 1x1 problems with fewer than 16 input channels per group: a
// segmentation fault or a corrupted heap, bare primitives included
// (perf/onednn_primitives --dir=bwd_w --layout=nhwc [--dt=bf16]
// mb1ic8ih256iw200oc8kh1kw1sh2sw2ph0pw0), seen on an Intel Xeon (AVX-512,
// AVX512-BF16, no AMX) on 256x200 inputs: fp32 with 1 to 12 input
// channels and 1 to 64 output channels, bf16 with 8 and 12, where 16 and
// more ran (as did every other pass, 3x3 kernels and stride 1 of the same
// channel counts). Its AVX2 kernel (jit_1x1:avx2) does the same on an
// AMD EPYC with AVX2 only: a segmentation fault, or with another heap
// layout weight gradients off by 18% (kernels:local_conv_test, 256x200
// inputs, 2, 8 and 12 input channels; 16 ran right). The fp32 kernel
// runs them on blocked layouts. Why a
// channels-last kernel must not run (`name`: oneDNN's implementation), ""
// where nothing is known against it.
std::string known_fault(const ConvDesc& d, ConvPass pass,
                        const std::string& name) {
  if (pass != ConvPass::kBackwardWeights || name.rfind("jit", 0) != 0 ||
      name.find("1x1:avx") == std::string::npos ||
      d.in_channels / d.groups >= 16) {
    return "";
  }
  for (int j = 0; j < d.spatial_dims(); ++j) {
    if (d.stride[j] > 1) {
      return "oneDNN's " + name +
             " backward-weights crashes on channels-last strided 1x1 "
             "problems with fewer than 16 input channels per group (seen "
             "with oneDNN 3.2)";
    }
  }
  return "";
}

}  // namespace

Conv::Conv(const ConvDesc& d, const Shape& src_shape, const Shape& dst_shape,
           ConvPass pass, ConvImpl impl, ConvData data)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.pass = pass;
  s.data = data;
  s.bias = d.bias == ConvBias::kAdd;
  require(impl != ConvImpl::kReference, ErrorKind::kUnsupported,
          "the reference loops are not a oneDNN implementation");
  const std::string excluded = conv_impl_excluded(impl, d, pass);
  require(excluded.empty(), ErrorKind::kUnsupported, excluded);
  require((impl == ConvImpl::kNative16) == (data != ConvData::kF32),
          ErrorKind::kUnsupported,
          impl == ConvImpl::kNative16
              ? "oneDNN's 16-bit kernels are for bf16 and fp16 tensors"
              : "16-bit arrays run oneDNN's 16-bit kernels (native16) only");
  const auto f32 = memory::data_type::f32;
  const Tag act = channels_last(src_shape.ndims());
  const memory::desc src(dims_of(src_shape), dnnl_type(data), act);
  const memory::desc dst(dims_of(dst_shape), dnnl_type(data), act);
  s.src_md = src;
  s.dst_md = dst;
  ConvDesc weights_desc = d;  // whose plain weights the primitive reads
  try {
    if (impl == ConvImpl::kAdjointForward) {
      const ConvDesc adjoint = adjoint_forward(d);
      const auto apd = forward_pd(adjoint, dst, src, s.engine);
      require(!is_reference(apd.impl_info_str()), ErrorKind::kUnsupported,
              "oneDNN has only its reference kernel for the adjoint forward");
      s.prim = dnnl::convolution_forward(apd);
      s.prim_weights_md = apd.weights_desc();
      s.name = std::string(apd.impl_info_str()) + " as the adjoint forward";
      s.desc = d;
      s.adjoint_weights.resize(d.weights_shape().volume());
      weights_desc = adjoint;
    } else if (impl == ConvImpl::kInnerProduct) {
      require(covers_input(d, src_shape), ErrorKind::kUnsupported,
              "the inner product runs dense layers only (a ", d.kernel,
              " kernel on a ", src_shape, " input padded by ", d.padding_lower,
              " and ", d.padding_upper, ")");
      // The padded input in plain layout; the caller's cells are a block
      // of it, the padding stays zero.
      const Tag plain = src_shape.ndims() == 4 ? Tag::nchw : Tag::ncdhw;
      memory::dims padded = src.get_dims(), offsets(padded.size(), 0);
      ConvDesc unpadded = d;  // the inner product's: on the padded input
      for (int j = 0; j < d.spatial_dims(); ++j) {
        padded[j + 2] = d.kernel[j];
        offsets[j + 2] = d.padding_lower[j];
        unpadded.padding_lower[j] = unpadded.padding_upper[j] = 0;
      }
      const memory::desc psrc(padded, f32, plain);
      const memory::desc ndst({dst_shape[0], dst_shape[1]}, f32, Tag::nc);
      s.make_inner_product(unpadded, psrc, ndst);
      require(!is_reference(s.name), ErrorKind::kUnsupported,
              "oneDNN has only its reference kernel for this inner product");
      s.channels_last_md = src;
      s.src_md = psrc;
      s.dst_md = ndst;
      s.plain.assign(psrc.get_size() / sizeof(float), 0.0f);
      s.plain_block_md = psrc.submemory_desc(src.get_dims(), offsets);
      const memory cl(src, s.engine, nullptr),
          pl(s.plain_block_md, s.engine, nullptr);
      if (pass == ConvPass::kBackwardData) {
        s.from_plain.emplace(pl, cl);
      } else {
        s.to_plain.emplace(cl, pl);
      }
      s.name += " as an inner product on plain copies";
    } else if (impl == ConvImpl::kBlocked16 || impl == ConvImpl::kBlocked8) {
      // Taken only where oneDNN, free to choose, picks these blocks for
      // both activations (and a kernel that is not its reference one).
      s.block = impl == ConvImpl::kBlocked16 ? 16 : 8;
      const Tag tag = blocked_tag(src_shape.ndims(), s.block);
      const memory::desc bsrc(src.get_dims(), f32, tag);
      const memory::desc bdst(dst.get_dims(), f32, tag);
      const auto [psrc, pdst] = preferred_layouts(
          pass, d, memory::desc(src.get_dims(), f32, Tag::any),
          memory::desc(dst.get_dims(), f32, Tag::any), s.engine);
      const std::string blocks = std::to_string(s.block) + "-channel blocks";
      require(psrc == bsrc && pdst == bdst, ErrorKind::kUnsupported,
              "oneDNN does not pick ", blocks, " for this problem on this CPU");
      s.make_pass(d, bsrc, bdst);
      require(!is_reference(s.name), ErrorKind::kUnsupported,
              "oneDNN has only its reference kernel on ", blocks);
      s.src_shape = src_shape;
      s.dst_shape = dst_shape;
      s.src_md = bsrc;
      s.dst_md = bdst;
      // Padding channels of the last block stay zero.
      s.blocked_src.assign(blocked_size(src_shape, s.block), 0.0f);
      s.blocked_dst.assign(blocked_size(dst_shape, s.block), 0.0f);
      s.name += " on blocked copies";
    } else {
      s.make_pass(d, src, dst);
      const std::string fault = known_fault(d, pass, s.name);
      require(fault.empty(), ErrorKind::kUnsupported, fault);
      // A 16-bit problem oneDNN can only run with its reference loops is
      // one the fp32 kernels (on fp32 copies) run far faster.
      require(data == ConvData::kF32 || !is_reference(s.name),
              ErrorKind::kUnsupported,
              "oneDNN has no 16-bit kernel for this problem on this CPU "
              "(only its reference one)");
    }
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kUnsupported,
                std::string("oneDNN cannot plan this convolution: ") +
                    e.what());
  }
  s.bias_md = bias_desc(d);
  s.user_weights_md = plain_weights_desc(weights_desc);
  if (s.prim_weights_md != s.user_weights_md) {
    s.prim_weights.emplace(s.prim_weights_md, s.engine);
    const memory user(s.user_weights_md, s.engine, nullptr);
    if (pass == ConvPass::kBackwardWeights) {
      s.weights_out.emplace(*s.prim_weights, user);
    } else {
      s.weights_in.emplace(user, *s.prim_weights);
    }
  }
}

Conv::~Conv() = default;
Conv::Conv(Conv&&) noexcept = default;
Conv& Conv::operator=(Conv&&) noexcept = default;

std::string Conv::implementation() const { return impl_->name; }

Index Conv::held_bytes() const {
  const Impl& s = *impl_;
  const std::size_t floats = s.blocked_src.size() + s.blocked_dst.size() +
                             s.adjoint_weights.size() + s.plain.size();
  const std::size_t weights =
      s.prim_weights ? s.prim_weights->get_desc().get_size() : 0;
  return static_cast<Index>(floats * sizeof(float) + weights);
}

void Conv::check(ConvPass pass, ConvData data) const {
  const Impl& s = *impl_;
  const char* names[] = {"forward", "backward-data", "backward-weights"};
  require(s.pass == pass, ErrorKind::kState, "kernel not planned for the ",
          names[static_cast<int>(pass)], " pass");
  require(s.data == data, ErrorKind::kState,
          "kernel planned for another element type");
}

template <typename A>
void Conv::forward(const A* src, const float* weights, const float* bias,
                   A* dst) const {
  check(ConvPass::kForward, data_of<A>());
  run_forward(src, weights, bias, dst);
}

template <typename A>
void Conv::backward_data(const A* diff_dst, const float* weights,
                         A* diff_src) const {
  check(ConvPass::kBackwardData, data_of<A>());
  run_backward_data(diff_dst, weights, diff_src);
}

template <typename A>
void Conv::backward_weights(const A* src, const A* diff_dst,
                            float* diff_weights, float* diff_bias) const {
  check(ConvPass::kBackwardWeights, data_of<A>());
  run_backward_weights(src, diff_dst, diff_weights, diff_bias);
}

#define DISTCONV_INSTANTIATE(A)                                               \
  template void Conv::forward<A>(const A*, const float*, const float*, A*)    \
      const;                                                                  \
  template void Conv::backward_data<A>(const A*, const float*, A*) const;     \
  template void Conv::backward_weights<A>(const A*, const A*, float*, float*) \
      const;
// fp32 and the narrow types (oneDNN has no fp64 convolution).
DISTCONV_INSTANTIATE(float)
DISTCONV_FOR_EACH_NARROW_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

// The passes on untyped activations (the blocked copies and the adjoint
// forward are fp32 only).
void Conv::run_forward(const void* src, const float* weights, const float* bias,
                       void* dst) const {
  Impl& s = *impl_;
  const bool blocked = !s.blocked_src.empty();
  if (blocked) {
    channels_last_to_blocked(s.src_shape, s.block,
                             static_cast<const float*>(src),
                             s.blocked_src.data());
    src = s.blocked_src.data();
  }
  src = s.plain_src(src);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(s.src_md, s.engine, const_cast<void*>(src))},
      {DNNL_ARG_WEIGHTS, s.weights_for(weights)},
      {DNNL_ARG_DST,
       memory(s.dst_md, s.engine, blocked ? s.blocked_dst.data() : dst)}};
  if (s.bias) {
    args.emplace(DNNL_ARG_BIAS,
                 memory(s.bias_md, s.engine, const_cast<float*>(bias)));
  }
  s.prim.execute(s.stream, args);
  s.stream.wait();
  if (blocked) {
    blocked_to_channels_last(s.dst_shape, s.block, s.blocked_dst.data(),
                             static_cast<float*>(dst));
  }
}

void Conv::run_backward_data(const void* diff_dst, const float* weights,
                             void* diff_src) const {
  Impl& s = *impl_;
  if (!s.adjoint_weights.empty()) {
    transpose_and_flip(s.desc, weights, s.adjoint_weights.data());
    s.prim.execute(s.stream,
                   {{DNNL_ARG_SRC,
                     memory(s.dst_md, s.engine, const_cast<void*>(diff_dst))},
                    {DNNL_ARG_WEIGHTS, s.weights_for(s.adjoint_weights.data())},
                    {DNNL_ARG_DST, memory(s.src_md, s.engine, diff_src)}});
    s.stream.wait();
    return;
  }
  const bool blocked = !s.blocked_src.empty();
  if (blocked) {
    channels_last_to_blocked(s.dst_shape, s.block,
                             static_cast<const float*>(diff_dst),
                             s.blocked_dst.data());
    diff_dst = s.blocked_dst.data();
  }
  void* out = blocked        ? s.blocked_src.data()
              : s.from_plain ? s.plain.data()
                             : diff_src;
  s.prim.execute(s.stream,
                 {{DNNL_ARG_DIFF_DST,
                   memory(s.dst_md, s.engine, const_cast<void*>(diff_dst))},
                  {DNNL_ARG_WEIGHTS, s.weights_for(weights)},
                  {DNNL_ARG_DIFF_SRC, memory(s.src_md, s.engine, out)}});
  if (s.from_plain) {
    memory from(s.plain_block_md, s.engine, out);
    memory to(s.channels_last_md, s.engine, diff_src);
    s.from_plain->execute(s.stream, from, to);
  }
  s.stream.wait();
  if (blocked) {
    blocked_to_channels_last(s.src_shape, s.block, s.blocked_src.data(),
                             static_cast<float*>(diff_src));
  }
}

void Conv::run_backward_weights(const void* src, const void* diff_dst,
                                float* diff_weights, float* diff_bias) const {
  Impl& s = *impl_;
  memory user(s.user_weights_md, s.engine, diff_weights);
  if (!s.blocked_src.empty()) {
    channels_last_to_blocked(s.src_shape, s.block,
                             static_cast<const float*>(src),
                             s.blocked_src.data());
    channels_last_to_blocked(s.dst_shape, s.block,
                             static_cast<const float*>(diff_dst),
                             s.blocked_dst.data());
    src = s.blocked_src.data();
    diff_dst = s.blocked_dst.data();
  }
  src = s.plain_src(src);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(s.src_md, s.engine, const_cast<void*>(src))},
      {DNNL_ARG_DIFF_DST,
       memory(s.dst_md, s.engine, const_cast<void*>(diff_dst))},
      {DNNL_ARG_DIFF_WEIGHTS, s.weights_out ? *s.prim_weights : user}};
  if (s.bias) {
    args.emplace(DNNL_ARG_DIFF_BIAS, memory(s.bias_md, s.engine, diff_bias));
  }
  s.prim.execute(s.stream, args);
  if (s.weights_out) s.weights_out->execute(s.stream, *s.prim_weights, user);
  s.stream.wait();
}

}  // namespace distconv::onednn
