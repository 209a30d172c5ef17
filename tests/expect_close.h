// Test helper: two arrays equal element by element within a relative
// tolerance, tol * (1 + |want|) per element (absolute near zero).
//
//   testing::expect_close(got, want, 1e-5, "forward");
#ifndef DISTCONV_TESTS_EXPECT_CLOSE_H_
#define DISTCONV_TESTS_EXPECT_CLOSE_H_

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace distconv::testing {

template <typename T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want,
                  double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(double(want[i]))))
        << what << " at " << i;
  }
}

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_EXPECT_CLOSE_H_
