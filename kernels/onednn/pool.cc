#include "kernels/onednn/pool.h"

#include <algorithm>
#include <dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

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

// One oneDNN problem: a slab's rows (or the whole input) and its padding
// along the first spatial dimension.
struct Prim {
  Index in_rows, out_rows, pad_lo, pad_hi;  // what it was made for
  memory::desc src_md, dst_md, workspace_md;
  dnnl::pooling_forward forward;
  dnnl::pooling_backward backward;
  std::string name;
};

// Output rows [out_begin, out_end) of a sample read input rows
// [in_begin, in_end) through prims[prim].
struct Slab {
  Index out_begin, out_end, in_begin, in_end;
  size_t prim;
};

}  // namespace

struct Pool::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable dnnl::stream stream{engine};
  PoolDesc desc;
  Shape src_shape, dst_shape;
  Index batch = 1;                // samples per call
  Index in_row = 0, out_row = 0;  // values per row of a sample
  std::vector<Prim> prims;
  std::vector<Slab> slabs;                 // a call's (the same for every call)
  std::vector<memory> workspaces;          // max pooling: per call and slab
  mutable std::vector<float> shared_rows;  // backward: rows two slabs read
  mutable bool forward_ran = false;

  // Runs a slab's primitive (its forward or backward) on two buffers:
  // `src_arg` over the problem's src_md at `src`, `dst_arg` over its
  // dst_md at `dst`, and call's workspace where max pooling keeps one.
  void execute(const dnnl::primitive& prim, const Prim& p, int src_arg,
               const float* src, int dst_arg, const float* dst,
               size_t call) const {
    std::unordered_map<int, memory> args{
        {src_arg, memory(p.src_md, engine, const_cast<float*>(src))},
        {dst_arg, memory(p.dst_md, engine, const_cast<float*>(dst))}};
    if (!workspaces.empty()) args.emplace(DNNL_ARG_WORKSPACE, workspaces[call]);
    prim.execute(stream, args);
  }

  size_t prim_for(Index in_rows, Index out_rows, Index pad_lo, Index pad_hi);
  void add_slab(Index out_begin, Index out_end);
  Index calls() const {
    return batch == 0 ? 0 : src_shape[0] / batch * Index(slabs.size());
  }
};

size_t Pool::Impl::prim_for(Index in_rows, Index out_rows, Index pad_lo,
                            Index pad_hi) {
  for (size_t i = 0; i < prims.size(); ++i) {
    const Prim& p = prims[i];
    if (p.in_rows == in_rows && p.out_rows == out_rows && p.pad_lo == pad_lo &&
        p.pad_hi == pad_hi) {
      return i;
    }
  }
  Shape src = src_shape, dst = dst_shape;
  src[0] = dst[0] = batch;
  src[2] = in_rows;
  dst[2] = out_rows;
  PoolDesc d = desc;
  d.padding_lower[0] = pad_lo;
  d.padding_upper[0] = pad_hi;
  const Tag act = src.ndims() == 4 ? Tag::nhwc : Tag::ndhwc;
  Prim p{in_rows, out_rows, pad_lo, pad_hi};
  p.src_md = memory::desc(dims_of(src), memory::data_type::f32, act);
  p.dst_md = memory::desc(dims_of(dst), memory::data_type::f32, act);
  const memory::dims dense(d.kernel.ndims(), 0);  // no dilation
  try {
    const dnnl::pooling_forward::primitive_desc fpd(
        engine, dnnl::prop_kind::forward_training, algorithm_of(d.kind),
        p.src_md, p.dst_md, dims_of(d.stride), dims_of(d.kernel), dense,
        dims_of(d.padding_lower), dims_of(d.padding_upper));
    const dnnl::pooling_backward::primitive_desc bpd(
        engine, algorithm_of(d.kind), p.src_md, p.dst_md, dims_of(d.stride),
        dims_of(d.kernel), dense, dims_of(d.padding_lower),
        dims_of(d.padding_upper), fpd);
    p.forward = dnnl::pooling_forward(fpd);
    p.backward = dnnl::pooling_backward(bpd);
    p.workspace_md = fpd.workspace_desc();
    p.name = std::string(fpd.impl_info_str()) + " | " + bpd.impl_info_str();
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kUnsupported,
                std::string("oneDNN cannot plan this pooling: ") + e.what());
  }
  prims.push_back(std::move(p));
  return prims.size() - 1;
}

// The window rows of output rows [a, b): from a*S - pl to (b-1)*S - pl + K,
// what lies outside the input being padding; the last slab reads to the
// input's end with the problem's own upper padding (rows no window reads,
// as the whole problem would).
void Pool::Impl::add_slab(Index a, Index b) {
  const Index s = desc.stride[0], k = desc.kernel[0];
  const Index lo = a * s - desc.padding_lower[0];
  const Index in_begin = std::max<Index>(lo, 0);
  Index in_end = std::min((b - 1) * s + k + lo - a * s, src_shape[2]);
  Index pad_hi = (b - 1) * s + k + lo - a * s - in_end;
  if (b == dst_shape[2]) {
    in_end = src_shape[2];
    pad_hi = desc.padding_upper[0];
  }
  slabs.push_back({a, b, in_begin, in_end,
                   prim_for(in_end - in_begin, b - a, in_begin - lo, pad_hi)});
}

Pool::Pool(const PoolDesc& d, const Shape& src_shape, const Shape& dst_shape,
           const PoolOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.desc = d;
  s.src_shape = src_shape;
  s.dst_shape = dst_shape;
  auto per_row = [](const Shape& t) {  // 0 where there are no rows
    const Index rows = t[0] * t[2];
    return rows == 0 ? 0 : t.volume() / rows;
  };
  s.in_row = per_row(src_shape);
  s.out_row = per_row(dst_shape);
  // Output rows per slab: as many as keep the input under slab_bytes.
  const Index row_bytes = s.in_row * Index{sizeof(float)};
  const Index fit = options.slab_bytes / std::max<Index>(row_bytes, 1);
  const Index rows =
      fit < d.kernel[0] ? 1 : (fit - d.kernel[0]) / d.stride[0] + 1;
  const Index out_rows = dst_shape[2];
  if (options.slab_bytes == 0 || rows >= out_rows || src_shape.volume() == 0) {
    s.batch = src_shape[0];
    s.slabs.push_back({0, out_rows, 0, src_shape[2], 0});
    s.prim_for(src_shape[2], out_rows, d.padding_lower[0], d.padding_upper[0]);
  } else {
    for (Index a = 0; a < out_rows; a += rows) {
      s.add_slab(a, std::min(a + rows, out_rows));
    }
  }
  for (Index n = 0; n < src_shape[0]; n += s.batch) {
    for (const Slab& slab : s.slabs) {
      const memory::desc& ws = s.prims[slab.prim].workspace_md;
      if (ws.get_size() > 0) s.workspaces.emplace_back(ws, s.engine);
    }
  }
}

Pool::~Pool() = default;
Pool::Pool(Pool&&) noexcept = default;
Pool& Pool::operator=(Pool&&) noexcept = default;

std::string Pool::implementation() const { return impl_->prims[0].name; }

Index Pool::calls() const { return impl_->calls(); }

bool Pool::forward(const float* src, float* dst, PoolSlabCheck check) const {
  Impl& s = *impl_;
  s.forward_ran = false;
  size_t call = 0;
  for (Index n = 0; n < s.src_shape[0]; n += s.batch) {
    const float* x = src + n * s.src_shape[2] * s.in_row;
    float* y = dst + n * s.dst_shape[2] * s.out_row;
    for (const Slab& slab : s.slabs) {
      const Prim& p = s.prims[slab.prim];
      const float* in = x + slab.in_begin * s.in_row;
      if (check != nullptr &&
          check(in, s.batch * (slab.in_end - slab.in_begin) * s.in_row)) {
        return false;
      }
      s.execute(p.forward, p, DNNL_ARG_SRC, in, DNNL_ARG_DST,
                y + slab.out_begin * s.out_row, call++);
    }
  }
  s.stream.wait();
  s.forward_ran = true;
  return true;
}

void Pool::backward(const float* diff_dst, float* diff_src) const {
  Impl& s = *impl_;
  require(s.forward_ran || s.workspaces.empty(), ErrorKind::kState,
          "max pooling's backward needs a forward that ran to its end first "
          "(it uses the positions of the maxima)");
  size_t call = 0;
  for (Index n = 0; n < s.src_shape[0]; n += s.batch) {
    const float* dy = diff_dst + n * s.dst_shape[2] * s.out_row;
    float* dx = diff_src + n * s.src_shape[2] * s.in_row;
    Index done = 0;  // rows [0, done) hold their gradient so far
    for (const Slab& slab : s.slabs) {
      const Prim& p = s.prims[slab.prim];
      float* at = dx + slab.in_begin * s.in_row;
      if (slab.in_begin > done) {  // rows no window reads
        std::fill(dx + done * s.in_row, at, 0.0f);
      }
      // The rows this slab shares with the one before: oneDNN overwrites
      // them, so their sums so far are kept and added back.
      const Index shared =
          std::max<Index>(0, std::min(done, slab.in_end) - slab.in_begin) *
          s.in_row;
      s.shared_rows.assign(at, at + shared);
      s.execute(p.backward, p, DNNL_ARG_DIFF_SRC, at, DNNL_ARG_DIFF_DST,
                dy + slab.out_begin * s.out_row, call++);
      s.stream.wait();
      for (Index i = 0; i < shared; ++i) at[i] += s.shared_rows[i];
      done = std::max(done, slab.in_end);
    }
  }
}

}  // namespace distconv::onednn
