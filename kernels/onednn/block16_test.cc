// The blocked copy against oneDNN's own reorder, padding channels included,
// and the copy back.
#include "kernels/onednn/block16.h"

#include <gtest/gtest.h>

#include <dnnl.hpp>

#include <vector>

namespace distconv::onednn {
namespace {

TEST(Block16, MatchesOnednnReorder) {
  using dnnl::memory;
  using Tag = memory::format_tag;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  for (const Shape& shape : {Shape{2, 32, 3, 5}, Shape{1, 72, 4, 3},
                             Shape{2, 16, 2, 3, 4}, Shape{1, 5, 2, 2}}) {
    SCOPED_TRACE(shape.to_string());
    const bool is2d = shape.ndims() == 4;
    const memory::dims dims(shape.begin(), shape.end());
    std::vector<float> src(shape.volume());
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
    memory user({dims, memory::data_type::f32, is2d ? Tag::nhwc : Tag::ndhwc},
                engine, src.data());
    const memory::desc blocked_md(dims, memory::data_type::f32,
                                  is2d ? Tag::nChw16c : Tag::nCdhw16c);
    ASSERT_EQ(blocked_md.get_size(), block16_size(shape) * sizeof(float));
    std::vector<float> want(block16_size(shape), 0.0f);
    std::vector<float> got(block16_size(shape), 0.0f);
    memory blocked(blocked_md, engine, want.data());
    dnnl::reorder(user, blocked).execute(stream, user, blocked);
    stream.wait();
    channels_last_to_block16(shape, src.data(), got.data());
    EXPECT_EQ(got, want);
    // And back: every channel where it was.
    std::vector<float> back(src.size(), -1.0f);
    block16_to_channels_last(shape, got.data(), back.data());
    EXPECT_EQ(back, src);
  }
}

}  // namespace
}  // namespace distconv::onednn
