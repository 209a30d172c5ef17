// Every layer's fingerprint names the memory space it was made for and,
// for the layers that read halos, where they read them: two ranks whose
// layers differ only there disagree.
#include "layers/internal/plan_fingerprints.h"

#include <gtest/gtest.h>

#include <string>

namespace distconv::internal {
namespace {

std::string field(const Fingerprint& f, const std::string& name) {
  for (const auto& [key, value] : f.fields()) {
    if (key == name) return value;
  }
  return "(none)";
}

// fingerprint(plan, ...) names `space`, and differs between the spaces.
template <typename Plan>
void ExpectSpaceNamed(const Plan& plan, const char* what) {
  SCOPED_TRACE(what);
  const Fingerprint host = fingerprint(plan, "float", "host");
  const Fingerprint device = fingerprint(plan, "float", "device");
  EXPECT_EQ(field(host, "memory space"), "host");
  EXPECT_EQ(field(device, "memory space"), "device");
}

TEST(PlanFingerprints, EveryLayerNamesItsMemorySpace) {
  const Distribution src(Shape{2, 4, 8, 8}, Shape{1, 1, 2, 1});
  ConvDesc conv = ConvDesc::make(4, 4, {3, 3});
  conv.padding_lower = conv.padding_upper = {1, 1};
  ExpectSpaceNamed(plan_convolution(conv, src, 0), "convolution");
  ExpectSpaceNamed(plan_deconvolution(DeconvDesc::make(4, 4, {2, 2}), src, 0),
                   "transposed convolution");
  ExpectSpaceNamed(plan_pooling(PoolDesc::make(PoolKind::kMax, {2, 2}), src, 0),
                   "pooling");
  ExpectSpaceNamed(plan_batch_norm(src, 0), "batch normalisation");
  ExpectSpaceNamed(plan_interpolate(InterpolateDesc::of_size({16, 16}), src, 0),
                   "linear interpolation");
}

// The layers that read halos say whether they read them in place.
TEST(PlanFingerprints, LayersReadingHalosNameWhereTheyRead) {
  const Distribution src(Shape{2, 4, 8, 8}, Shape{1, 1, 2, 1});
  ConvolutionOptions conv_in_place;
  conv_in_place.input = ConvInput::kInPlace;
  ConvDesc conv = ConvDesc::make(4, 4, {3, 3});
  conv.padding_lower = conv.padding_upper = {1, 1};
  EXPECT_EQ(field(fingerprint(plan_convolution(conv, src, 0), "float", "host"),
                  "reads"),
            "a buffer with halos");
  EXPECT_EQ(field(fingerprint(plan_convolution(conv, src, 0, conv_in_place),
                              "float", "host"),
                  "reads"),
            "in place");
  DeconvolutionOptions deconv_in_place;
  deconv_in_place.input = ConvInput::kInPlace;
  EXPECT_EQ(field(fingerprint(plan_deconvolution(DeconvDesc::make(4, 4, {2, 2}),
                                                 src, 0, deconv_in_place),
                              "float", "host"),
                  "reads"),
            "in place");
  EXPECT_EQ(
      field(fingerprint(plan_interpolate(InterpolateDesc::of_size({16, 16}),
                                         src, 0, ConvInput::kInPlace),
                        "float", "host"),
            "reads"),
      "in place");
}

// Pooling names the implementation its options asked for: ranks asked for
// different ones disagree.
TEST(PlanFingerprints, PoolingNamesTheKernelChoice) {
  const Distribution src(Shape{2, 4, 8, 8}, Shape{1, 1, 2, 1});
  const PoolDesc desc = PoolDesc::make(PoolKind::kMax, {2, 2});
  PoolingOptions o;
  EXPECT_EQ(field(fingerprint(plan_pooling(desc, src, 0, o), "float", "host"),
                  "kernel choice"),
            "heuristic");
  o.impl = PoolImpl::kOneCall;
  EXPECT_EQ(field(fingerprint(plan_pooling(desc, src, 0, o), "float", "host"),
                  "kernel choice"),
            "one_call");
}

}  // namespace
}  // namespace distconv::internal
