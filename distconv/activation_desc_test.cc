#include "distconv/activation_desc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "distconv/error.h"

namespace distconv {
namespace {

TEST(ActivationDesc, SlopesAndSigns) {
  const ActivationDesc relu = ActivationDesc::relu();
  EXPECT_EQ(relu.kind, ActivationKind::kRelu);
  EXPECT_EQ(relu.slope(), 0.0);
  EXPECT_TRUE(relu.keeps_sign());
  // A relu ignores the slope field, whatever it holds.
  ActivationDesc odd = relu;
  odd.negative_slope = -3;
  EXPECT_EQ(odd.slope(), 0.0);
  EXPECT_TRUE(odd.keeps_sign());
  const ActivationDesc leaky = ActivationDesc::leaky_relu(0.2);
  EXPECT_EQ(leaky.slope(), 0.2);
  EXPECT_TRUE(leaky.keeps_sign());
  EXPECT_EQ(ActivationDesc::leaky_relu().slope(), 0.01);
  EXPECT_FALSE(ActivationDesc::leaky_relu(-0.5).keeps_sign());
  EXPECT_STREQ(to_string(ActivationKind::kLeakyRelu), "leaky relu");
}

TEST(ActivationDesc, RejectsSlopesThatAreNotFinite) {
  ActivationDesc::leaky_relu(-2).validate();  // negative is fine
  for (double s : {std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), std::nan("")}) {
    try {
      ActivationDesc::leaky_relu(s).validate();
      ADD_FAILURE() << "no error for slope " << s;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos);
    }
  }
  ActivationDesc relu = ActivationDesc::relu();
  relu.negative_slope = std::nan("");  // unused by a relu
  relu.validate();
  ActivationDesc bad;
  bad.kind = static_cast<ActivationKind>(7);
  EXPECT_THROW(bad.validate(), Error);
}

}  // namespace
}  // namespace distconv
