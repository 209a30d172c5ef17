// The blocked copies (16- and 8-channel blocks) against oneDNN's own
// reorder, padding channels included, and the copies back.
#include "kernels/onednn/blocked.h"

#include <gtest/gtest.h>

#include <dnnl.hpp>
#include <string>
#include <vector>

namespace distconv::onednn {
namespace {

TEST(Blocked, MatchesOnednnReorder) {
  using dnnl::memory;
  using Tag = memory::format_tag;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  for (const Shape& shape : {Shape{2, 32, 3, 5}, Shape{1, 72, 4, 3},
                             Shape{2, 16, 2, 3, 4}, Shape{1, 5, 2, 2}}) {
    for (const Index block : {16, 8}) {
      SCOPED_TRACE(shape.to_string() + " in blocks of " +
                   std::to_string(block));
      const bool is2d = shape.ndims() == 4;
      const memory::dims dims(shape.begin(), shape.end());
      std::vector<float> src(shape.volume());
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
      memory user({dims, memory::data_type::f32, is2d ? Tag::nhwc : Tag::ndhwc},
                  engine, src.data());
      const Tag tag = block == 16 ? (is2d ? Tag::nChw16c : Tag::nCdhw16c)
                                  : (is2d ? Tag::nChw8c : Tag::nCdhw8c);
      const memory::desc blocked_md(dims, memory::data_type::f32, tag);
      const Index size = blocked_size(shape, block);
      ASSERT_EQ(blocked_md.get_size(), size * sizeof(float));
      std::vector<float> want(size, 0.0f);
      std::vector<float> got(size, 0.0f);
      memory blocked(blocked_md, engine, want.data());
      dnnl::reorder(user, blocked).execute(stream, user, blocked);
      stream.wait();
      channels_last_to_blocked(shape, block, src.data(), got.data());
      EXPECT_EQ(got, want);
      // And back: every channel where it was.
      std::vector<float> back(src.size(), -1.0f);
      blocked_to_channels_last(shape, block, got.data(), back.data());
      EXPECT_EQ(back, src);
    }
  }
}

}  // namespace
}  // namespace distconv::onednn
