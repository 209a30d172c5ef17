#include "kernels/onednn/softmax.h"

#include <dnnl.hpp>
#include <string>

#include "distconv/error.h"
#include "kernels/onednn/conv_descs.h"

namespace distconv::onednn {

using dnnl::memory;
using Tag = memory::format_tag;

struct Softmax::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable dnnl::stream stream{engine};
  memory::desc md;
  dnnl::softmax_forward forward;
  dnnl::softmax_backward backward;
  std::string name;
};

Softmax::Softmax(SoftmaxKind kind, const Shape& shape)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  require(shape.volume() > 0, ErrorKind::kUnsupported,
          "oneDNN softmax of an empty shape ", shape);
  const Tag tag = shape.ndims() == 4 ? Tag::nhwc : Tag::ndhwc;
  s.md = memory::desc(dims_of(shape), memory::data_type::f32, tag);
  const dnnl::algorithm alg = kind == SoftmaxKind::kSoftmax
                                  ? dnnl::algorithm::softmax_accurate
                                  : dnnl::algorithm::softmax_log;
  try {
    const dnnl::softmax_forward::primitive_desc fpd(
        s.engine, dnnl::prop_kind::forward_training, alg, s.md, s.md,
        /*axis=*/1);
    const dnnl::softmax_backward::primitive_desc bpd(s.engine, alg, s.md, s.md,
                                                     s.md, /*axis=*/1, fpd);
    s.forward = dnnl::softmax_forward(fpd);
    s.backward = dnnl::softmax_backward(bpd);
    s.name = std::string(fpd.impl_info_str()) + " | " + bpd.impl_info_str();
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kUnsupported,
                std::string("oneDNN softmax refused shape ") +
                    shape.to_string() + ": " + e.what());
  }
}

Softmax::~Softmax() = default;
Softmax::Softmax(Softmax&&) noexcept = default;
Softmax& Softmax::operator=(Softmax&&) noexcept = default;

std::string Softmax::implementation() const { return impl_->name; }

void Softmax::forward(const float* src, float* dst) const {
  const Impl& s = *impl_;
  s.forward.execute(
      s.stream,
      {{DNNL_ARG_SRC, memory(s.md, s.engine, const_cast<float*>(src))},
       {DNNL_ARG_DST, memory(s.md, s.engine, dst)}});
  s.stream.wait();
}

void Softmax::backward(const float* dst, const float* diff_dst,
                       float* diff_src) const {
  const Impl& s = *impl_;
  s.backward.execute(
      s.stream,
      {{DNNL_ARG_DST, memory(s.md, s.engine, const_cast<float*>(dst))},
       {DNNL_ARG_DIFF_DST,
        memory(s.md, s.engine, const_cast<float*>(diff_dst))},
       {DNNL_ARG_DIFF_SRC, memory(s.md, s.engine, diff_src)}});
  s.stream.wait();
}

}  // namespace distconv::onednn
