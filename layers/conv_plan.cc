#include "layers/conv_plan.h"

#include <sstream>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "halo/halo_plan.h"
#include "layers/internal/channel_plan.h"

namespace distconv {
namespace {

using internal::channel_plan;
using internal::channel_slice_shape;
using internal::full_channel_layout;
using internal::sub_partition;
using internal::with_filter_pieces;

// Builds the plan in the order the layer needs it: buffers, then pieces.
class Planner {
 public:
  explicit Planner(ConvPlan& plan) : p_(plan) {}

  void buffers() {
    const ConvDesc& desc = p_.desc();
    const ChannelBlocks& c = p_.channels;
    Index first_c = 0, first_f = 0;  // of this member's blocks
    if (c.split) {
      const Shape grid = p_.src_layout.distribution().grid_shape();
      const Shape coord = p_.src_layout.distribution().part_coord(p_.rank);
      p_.slice_shape = channel_slice_shape(grid);
      Shape slice_coord = coord;
      slice_coord[1] = 0;
      p_.slice_rank =
          static_cast<int>(linear_index(slice_coord, p_.slice_shape));
      p_.member = static_cast<int>(coord[1]);
      const int i = p_.channel_block(), j = p_.filter_block();
      const BlockPartition& c_parts =
          p_.src_layout.distribution().partition(1);
      const BlockPartition f_blocks =
          BlockPartition::balanced(desc.out_channels, c.pf);
      first_c = c_parts.begin(i * c.pf);
      first_f = f_blocks.begin(j);
      if (c.pf > 1) {  // gather the channel block over the row of members
        const BlockPartition block = sub_partition(c_parts, i * c.pf, c.pf);
        p_.x_full = full(p_.src_layout, block, 1, "src");
        p_.dx_full = full(dx_layout(), block, 1, "diff_src");
      }
      if (c.pc > 1) {  // sum the filter block over the column of members
        const BlockPartition pieces =
            BlockPartition::balanced(f_blocks.size(j), c.pc);
        p_.y_full = full(p_.dst_layout, pieces, 0, "dst");
        p_.dy_full = full(p_.diff_dst_layout, pieces, 0, "diff_dst");
      }
      if (c.transposed()) {
        p_.y_piece_size = p_.block_elements(*p_.y_full);
        p_.dy_piece_size = p_.block_elements(*p_.dy_full);
      }
    }
    p_.x_buf = buffer(p_.x_full, p_.src_layout, first_c);
    p_.y_buf = buffer(p_.y_full, p_.dst_layout, first_f);
    p_.dy_buf = buffer(p_.dy_full, p_.diff_dst_layout, first_f);
    p_.dx_buf = buffer(p_.dx_full, dx_layout(), first_c);
    if (in_place()) {
      p_.x_shard = ConvBuffer::of(plain(p_.src_layout), p_.rank);
      p_.dy_shard = ConvBuffer::of(p_.dst_layout, p_.rank);
    }
    // Weights: the filters this rank computes by the input channels it
    // reads (all of a group's unless channels are split).
    const Shape ws = desc.weights_shape();
    Box& w = p_.weights_block;
    w = Box{Shape::filled(ws.ndims(), 0), ws};
    w.lower[0] = p_.y_buf.box.lower[1];
    w.extent[0] = p_.y_buf.channels();
    if (c.split) {
      w.lower[1] = p_.x_buf.box.lower[1];
      w.extent[1] = p_.x_buf.channels();
    }
    const Box own = p_.dst_layout.shard(p_.rank);
    p_.bias_block = Box{Shape{own.lower[1]}, Shape{own.extent[1]}};
  }

  void pieces() {
    const ConvGeometry& g = p_.geometry;
    const Box src_shard = p_.dx_buf.work(p_.src_layout.shard(p_.rank));
    const Box dst_shard = p_.y_buf.work(p_.dst_layout.shard(p_.rank));
    // The input gradients computed here: the shard, and with circular
    // padding the padding cells at the ends, folded back afterwards.
    const Box dx_box = p_.dx_buf.work(
        g.diff_src_box(p_.src_layout.distribution(), p_.rank));
    // In place, the early pieces read the caller's shards: the interior
    // only, which reads no halo.
    const ConvBuffer& x_early = in_place() ? p_.x_shard : p_.x_buf;
    const ConvBuffer& dy_early = in_place() ? p_.dy_shard : p_.dy_buf;
    if (p_.overlap == ConvOverlap::kNone) {  // all after the halos arrive
      p_.forward_late.push_back(forward_piece("forward", dst_shard, p_.x_buf,
                                              p_.y_buf, ConvPass::kForward));
      p_.data_late.push_back(data_piece("backward-data", dx_box, p_.dy_buf));
    } else {
      // The core (or, when halos are written in flight or the early pieces
      // read the shard in place, the interior) runs while halos travel;
      // the boundary boxes after, recomputing any core cells that read
      // stale halos. Nothing may read halo cells early (not even to
      // recompute them) when the transport receives into the tensor while
      // in flight.
      const bool interior_only =
          receives_in_flight(p_.transport) || in_place();
      const BoxSplit f = g.split_forward(dst_shard, src_shard);
      const Box f_early = interior_only ? f.interior : f.core;
      if (!f_early.empty()) {
        p_.forward_early.push_back(forward_piece("forward core", f_early,
                                                 x_early, p_.y_buf,
                                                 ConvPass::kForward));
      }
      for (const Box& b : f.boundary) {
        p_.forward_late.push_back(forward_piece(
            "forward boundary", b, p_.x_buf, p_.y_buf, ConvPass::kForward));
      }
      const BoxSplit d = g.split_backward_data(dx_box, dst_shard);
      const Box d_early = interior_only ? d.interior : d.core;
      if (!d_early.empty()) {
        p_.data_early.push_back(
            data_piece("backward-data core", d_early, dy_early));
      }
      for (const Box& b : d.boundary) {
        p_.data_late.push_back(
            data_piece("backward-data boundary", b, p_.dy_buf));
      }
    }
    const Box w_box = p_.dy_buf.work(dst_shard);
    if (!in_place()) {
      p_.weights_early.push_back(forward_piece("backward-weights", w_box,
                                               p_.x_buf, p_.dy_buf,
                                               ConvPass::kBackwardWeights));
      return;
    }
    const BoxSplit w = g.split_forward(w_box, src_shard);
    if (!w.interior.empty()) {
      p_.weights_early.push_back(
          forward_piece("backward-weights core", w.interior, p_.x_shard,
                        p_.dy_shard, ConvPass::kBackwardWeights));
    }
    for (const Box& b : w.boundary) {
      p_.weights_late.push_back(
          forward_piece("backward-weights boundary", b, p_.x_buf, p_.dy_shard,
                        ConvPass::kBackwardWeights));
    }
    frames(src_shard, dst_shard);
  }

 private:
  bool in_place() const { return p_.input == ConvInput::kInPlace; }
  static HaloLayout plain(const HaloLayout& layout) {
    return HaloLayout(layout.distribution())
        .with_storage(layout.storage_order());
  }

  // kInPlace: the shard cells each frame needs before its exchange: what
  // the late pieces read of the shard, and what the exchange sends.
  void frames(const Box& src_shard, const Box& dst_shard) {
    auto add = [](std::vector<Box>& boxes, const Box& b) {
      if (!b.empty()) boxes.push_back(b);
    };
    const Box x_own = p_.x_buf.work(src_shard);
    for (const auto* pieces : {&p_.forward_late, &p_.weights_late}) {
      for (const ConvPiece& piece : *pieces) {
        add(p_.x_frame, p_.x_buf.local(intersect(piece.window.src, x_own)));
      }
    }
    for (const HaloMessage& m : make_halo_plan(p_.src_layout, p_.rank).sends) {
      add(p_.x_frame, m.local);
    }
    const Box dy_own = p_.dy_buf.work(dst_shard);
    for (const ConvPiece& piece : p_.data_late) {
      add(p_.dy_frame, p_.dy_buf.local(intersect(piece.window.dst, dy_own)));
    }
    for (const HaloMessage& m :
         make_halo_plan(p_.diff_dst_layout, p_.rank).sends) {
      add(p_.dy_frame, m.local);
    }
  }

  // The input gradient the pieces write.
  const HaloLayout& dx_layout() const {
    return p_.diff_src_folded ? *p_.diff_src_folded : p_.diff_src_layout;
  }
  ConvChannelTensor full(const HaloLayout& layout, const BlockPartition& block,
                         int members_dim, const char* what) const {
    return {full_channel_layout(layout, block.extent(), what), block,
            members_dim};
  }
  ConvBuffer buffer(const std::optional<ConvChannelTensor>& full,
                    const HaloLayout& layout, Index first_channel) const {
    if (!full) return ConvBuffer::of(layout, p_.rank);
    ConvBuffer b = ConvBuffer::of(full->layout, p_.slice_rank);
    b.box.lower[1] = first_channel;  // global channel of its channel 0
    return b;
  }

  // The convolution a piece runs: the window's padding, the buffers'
  // channels.
  ConvDesc local_desc(const ConvWindow& w, Index in_channels,
                      Index out_channels) const {
    const ConvDesc& whole = p_.desc();
    ConvDesc d = whole;
    d.padding_lower = w.padding_lower;
    d.padding_upper = w.padding_upper;
    d.padding_mode.clear();  // the halos hold what circular padding reads
    d.in_channels = in_channels;
    d.out_channels = out_channels;
    // Whole groups, or one group cut into channel blocks.
    d.groups = p_.channels.split
                   ? 1
                   : in_channels / (whole.in_channels / whole.groups);
    if (p_.sums_partial_outputs()) d.bias = ConvBias::kNone;
    return d;
  }

  ConvPiece forward_piece(const std::string& label, const Box& dst_box,
                          const ConvBuffer& in, const ConvBuffer& out,
                          ConvPass pass) const {
    ConvPiece piece;
    piece.label = label;
    piece.box = dst_box;
    piece.window = p_.geometry.forward_window(dst_box);
    piece.in_local = in.local(piece.window.src);
    piece.out_local = out.local(piece.window.dst);
    if (!piece.window.dst.empty() && !piece.window.src.empty() &&
        in.channels() > 0 && out.channels() > 0) {
      piece.kernel =
          planned_call(local_desc(piece.window, in.channels(), out.channels()),
                       piece.in_local.extent, in.strides,
                       piece.out_local.extent, out.strides, pass);
    }
    return piece;
  }

  ConvPiece data_piece(const std::string& label, const Box& src_box,
                       const ConvBuffer& dy) const {
    const ConvBuffer& dx = p_.dx_buf;
    ConvPiece piece;
    piece.label = label;
    piece.box = src_box;
    piece.window = p_.geometry.backward_data_window(src_box);
    piece.in_local = dy.local(piece.window.dst);
    piece.out_local = dx.local(piece.window.src);
    piece.target_local = dx.local(src_box);
    if (!piece.window.dst.empty() && dy.channels() > 0 && dx.channels() > 0) {
      piece.kernel = planned_call(
          local_desc(piece.window, dx.channels(), dy.channels()),
          piece.out_local.extent, dx.strides, piece.in_local.extent, dy.strides,
          ConvPass::kBackwardData);
    }
    piece.zero_first = !piece.kernel || piece.out_local != piece.target_local;
    return piece;
  }

  ConvPlan& p_;
};

}  // namespace

Box ConvBuffer::local(const Box& global) const {
  Box b = global.shifted(-box.lower);
  b.lower[1] = 0;
  b.extent[1] = box.extent[1];
  return b;
}

Box ConvBuffer::work(Box global) const {
  global.lower[1] = box.lower[1];
  global.extent[1] = box.extent[1];
  return global;
}

bool operator==(const ConvPiece& a, const ConvPiece& b) {
  return a.label == b.label && a.box == b.box &&
         a.window == b.window && a.in_local == b.in_local &&
         a.out_local == b.out_local && a.target_local == b.target_local &&
         a.zero_first == b.zero_first && a.kernel == b.kernel;
}

bool operator==(const ConvPlan& a, const ConvPlan& b) {
  return a.desc() == b.desc() &&
         a.geometry.src_shape() == b.geometry.src_shape() && a.rank == b.rank &&
         a.overlap == b.overlap && a.input == b.input &&
         a.transport == b.transport && a.search == b.search &&
         a.channels == b.channels && a.dst == b.dst &&
         a.src_layout == b.src_layout && a.dst_layout == b.dst_layout &&
         a.diff_dst_layout == b.diff_dst_layout &&
         a.diff_src_layout == b.diff_src_layout &&
         a.diff_src_folded == b.diff_src_folded &&
         a.slice_shape == b.slice_shape && a.slice_rank == b.slice_rank &&
         a.member == b.member && a.x_full == b.x_full &&
         a.dx_full == b.dx_full && a.y_full == b.y_full &&
         a.dy_full == b.dy_full && a.y_piece_size == b.y_piece_size &&
         a.dy_piece_size == b.dy_piece_size && a.x_buf == b.x_buf &&
         a.y_buf == b.y_buf && a.dy_buf == b.dy_buf && a.dx_buf == b.dx_buf &&
         a.x_shard == b.x_shard && a.dy_shard == b.dy_shard &&
         a.x_frame == b.x_frame && a.dy_frame == b.dy_frame &&
         a.weights_block == b.weights_block && a.bias_block == b.bias_block &&
         a.forward_early == b.forward_early &&
         a.forward_late == b.forward_late && a.data_early == b.data_early &&
         a.data_late == b.data_late && a.weights_early == b.weights_early &&
         a.weights_late == b.weights_late;
}

Index ConvPlan::slice_elements(const ConvChannelTensor& t) const {
  return t.layout.buffer_box(slice_rank).extent.volume();
}

Index ConvPlan::block_elements(const ConvChannelTensor& t) const {
  const Index n = t.block.extent();
  if (n == 0) return 0;
  const int part = t.members_dim == 0 ? channel_block() : filter_block();
  return slice_elements(t) / n * t.block.size(part);
}

int ConvPlan::slice_part_rank(int slice_part) const {
  Shape coord = unravel(slice_part, slice_shape);
  coord[1] = member;
  return static_cast<int>(
      linear_index(coord, src_layout.distribution().grid_shape()));
}

std::string describe_piece(const ConvPiece& p, const std::string& kernel) {
  std::ostringstream out;
  out << p.label << " " << p.box << ": " << kernel << "\n";
  return out.str();
}

std::string ConvPlan::describe_channels() const {
  if (!channels.split) return "";
  std::ostringstream out;
  out << "channels: " << channels.pc << " channel block(s) x " << channels.pf
      << " filter block(s)";
  if (channels.pf > 1) out << "; allgather of src, reduce-scatter of diff_src";
  if (channels.pc > 1) out << "; reduce-scatter of dst, allgather of diff_dst";
  if (channels.transposed()) out << "; pieces of dst and diff_dst swapped";
  out << "; weights block " << weights_block << "\n";
  return out.str();
}

std::string ConvPlan::describe() const {
  std::string out = describe_channels();
  auto call = [](const ConvPiece& p) -> std::string {
    if (!p.kernel) return "no kernel";
    const ConvDesc& d = p.kernel->desc;
    std::ostringstream s;
    s << d.in_channels << "->" << d.out_channels;
    if (d.groups > 1) s << " in " << d.groups << " groups";
    s << " on " << p.kernel->src_extent;
    return s.str();
  };
  for (const auto* list : {&forward_early, &forward_late, &data_early,
                           &data_late, &weights_early, &weights_late}) {
    for (const ConvPiece& p : *list) out += describe_piece(p, call(p));
  }
  return out;
}

ConvPlan plan_convolution(const ConvDesc& desc, const Distribution& src,
                          int rank, const ConvolutionOptions& options) {
  internal::check_plan_rank(src, rank);
  ConvGeometry geometry(desc, src.global_shape());
  ChannelBlocks channels = channel_plan(geometry, src, options);
  Distribution dst = with_filter_pieces(geometry.dst_distribution(src),
                                        channels, desc.out_channels);
  HaloLayout src_layout = chosen_layout(
      options.src_layout,
      geometry.src_layout(src, dst, StorageOrder::kChannelsLast), "src");
  HaloLayout diff_dst_layout =
      geometry.diff_dst_layout(src, dst, StorageOrder::kChannelsLast);
  const ConvInput input = channels.split ? ConvInput::kHaloBuffer
                                          : options.input;
  ConvPlan plan{std::move(geometry),
                rank,
                options.overlap,
                input,
                options.halo.transport,
                options.cpu.search,
                channels,
                dst,
                std::move(src_layout),
                HaloLayout(dst).with_storage(StorageOrder::kChannelsLast),
                std::move(diff_dst_layout),
                HaloLayout(src).with_storage(StorageOrder::kChannelsLast)};
  if (any_circular(desc.padding_mode)) {
    plan.diff_src_folded = plan.geometry.diff_src_layout(
        src, StorageOrder::kChannelsLast);
  }
  Planner planner(plan);
  planner.buffers();
  planner.pieces();
  return plan;
}

}  // namespace distconv
