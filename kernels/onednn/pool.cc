#include "kernels/onednn/pool.h"

#include <dnnl.hpp>

#include <optional>
#include <string>
#include <unordered_map>

#include "distconv/error.h"
#include "kernels/onednn/conv_descs.h"

namespace distconv::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::algorithm algorithm_of(PoolKind kind) {
  switch (kind) {
    case PoolKind::kMax:
      return dnnl::algorithm::pooling_max;
    case PoolKind::kAverageIncludePadding:
      return dnnl::algorithm::pooling_avg_include_padding;
    case PoolKind::kAverageExcludePadding:
      return dnnl::algorithm::pooling_avg_exclude_padding;
  }
  throw Error(ErrorKind::kInvalidArgument, "unknown pooling kind");
}

}  // namespace

struct Pool::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable dnnl::stream stream{engine};
  memory::desc src_md, dst_md;
  dnnl::pooling_forward forward;
  dnnl::pooling_backward backward;
  std::string name;
  std::optional<memory> workspace;  // max pooling
  mutable bool forward_ran = false;
};

Pool::Pool(const PoolDesc& d, const Shape& src_shape, const Shape& dst_shape)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  const Tag act = src_shape.ndims() == 4 ? Tag::nhwc : Tag::ndhwc;
  s.src_md = memory::desc(dims_of(src_shape), memory::data_type::f32, act);
  s.dst_md = memory::desc(dims_of(dst_shape), memory::data_type::f32, act);
  const auto strides = dims_of(d.stride), kernel = dims_of(d.kernel);
  const auto pl = dims_of(d.padding_lower), pu = dims_of(d.padding_upper);
  const dnnl::algorithm alg = algorithm_of(d.kind);
  try {
    const memory::dims dense(kernel.size(), 0);  // no dilation
    const dnnl::pooling_forward::primitive_desc fpd(
        s.engine, dnnl::prop_kind::forward_training, alg, s.src_md, s.dst_md,
        strides, kernel, dense, pl, pu);
    const dnnl::pooling_backward::primitive_desc bpd(
        s.engine, alg, s.src_md, s.dst_md, strides, kernel, dense, pl, pu,
        fpd);
    s.forward = dnnl::pooling_forward(fpd);
    s.backward = dnnl::pooling_backward(bpd);
    s.name = std::string(fpd.impl_info_str()) + " | " + bpd.impl_info_str();
    if (fpd.workspace_desc().get_size() > 0) {
      s.workspace.emplace(fpd.workspace_desc(), s.engine);
    }
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kUnsupported,
                std::string("oneDNN cannot plan this pooling: ") + e.what());
  }
}

Pool::~Pool() = default;
Pool::Pool(Pool&&) noexcept = default;
Pool& Pool::operator=(Pool&&) noexcept = default;

std::string Pool::implementation() const { return impl_->name; }

void Pool::forward(const float* src, float* dst) const {
  Impl& s = *impl_;
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(s.src_md, s.engine, const_cast<float*>(src))},
      {DNNL_ARG_DST, memory(s.dst_md, s.engine, dst)}};
  if (s.workspace) args.emplace(DNNL_ARG_WORKSPACE, *s.workspace);
  s.forward.execute(s.stream, args);
  s.stream.wait();
  s.forward_ran = true;
}

void Pool::backward(const float* diff_dst, float* diff_src) const {
  Impl& s = *impl_;
  require(s.forward_ran || !s.workspace, ErrorKind::kState,
          "max pooling's backward needs a forward first (it uses the "
          "positions of the maxima)");
  std::unordered_map<int, memory> args{
      {DNNL_ARG_DIFF_DST,
       memory(s.dst_md, s.engine, const_cast<float*>(diff_dst))},
      {DNNL_ARG_DIFF_SRC, memory(s.src_md, s.engine, diff_src)}};
  if (s.workspace) args.emplace(DNNL_ARG_WORKSPACE, *s.workspace);
  s.backward.execute(s.stream, args);
  s.stream.wait();
}

}  // namespace distconv::onednn
