// The reference kernels against PyTorch: testdata/conv_golden.txt holds
// convolutions computed by PyTorch 1.13 (testdata/make_conv_golden.py says
// how), an implementation independent of ours, for 2D and 3D cases with
// groups, stride, dilation, asymmetric padding, even and lop-sided kernels.
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference/conv.h"

namespace distconv::reference {
namespace {

constexpr char kGolden[] = "kernels/reference/testdata/conv_golden.txt";

struct GoldenCase {
  std::string name;
  std::map<std::string, std::vector<double>> fields;  // key -> numbers
};

std::vector<GoldenCase> read_cases() {
  std::ifstream in(kGolden);
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "case") {
      cases.push_back({});
      words >> cases.back().name;
      continue;
    }
    if (cases.empty()) continue;
    std::vector<double>& values = cases.back().fields[key];
    for (double v; words >> v;) values.push_back(v);
  }
  return cases;
}

Shape to_shape(const std::vector<double>& v) {
  Shape s = Shape::filled(static_cast<int>(v.size()), 0);
  for (size_t i = 0; i < v.size(); ++i) s[static_cast<int>(i)] = Index(v[i]);
  return s;
}

std::vector<double> seq(Index n, double scale, double shift, bool cosine) {
  std::vector<double> v(n);
  for (Index i = 0; i < n; ++i) {
    v[i] = cosine ? std::cos(scale * i + shift) : std::sin(scale * i + shift);
  }
  return v;
}

void expect_close(const std::vector<double>& ours,
                  const std::vector<double>& torch, const std::string& what) {
  ASSERT_EQ(ours.size(), torch.size()) << what;
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_NEAR(ours[i], torch[i], 1e-12 * std::max(1.0, std::abs(torch[i])))
        << what << " element " << i;
  }
}

TEST(ReferenceConvGolden, MatchesPyTorch) {
  const std::vector<GoldenCase> cases = read_cases();
  ASSERT_EQ(cases.size(), 5u) << "cannot read " << kGolden;
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto& f = c.fields;
    const Shape x = to_shape(f.at("src")), wshape = to_shape(f.at("weights"));
    const int k = x.ndims() - 2;
    Shape kernel = Shape::filled(k, 0);
    for (int d = 0; d < k; ++d) kernel[d] = wshape[d + 2];
    const Index groups = Index(f.at("groups")[0]);
    ConvDesc conv = ConvDesc::make(x[1], wshape[0], kernel);
    conv.groups = groups;
    conv.stride = to_shape(f.at("stride"));
    conv.dilation = to_shape(f.at("dilation"));
    conv.padding_lower = to_shape(f.at("pad_lower"));
    conv.padding_upper = to_shape(f.at("pad_upper"));
    conv.bias = ConvBias::kAdd;
    ASSERT_EQ(conv.weights_shape(), wshape);
    const Shape y = conv.dst_shape(x);
    const std::vector<double> src = seq(x.volume(), 0.37, 0, false);
    const std::vector<double> w = seq(wshape.volume(), 0.91, 0, true);
    std::vector<double> b(wshape[0]);
    for (Index i = 0; i < wshape[0]; ++i) b[i] = 0.1 * i;
    const std::vector<double> dy = seq(y.volume(), 1.3, 0.5, false);
    std::vector<double> dst(y.volume()), dx(x.volume()), dw(w.size()),
        db(b.size());
    conv_fwd(conv, x, src.data(), w.data(), b.data(), y, dst.data());
    conv_bwd_data(conv, y, dy.data(), w.data(), x, dx.data());
    conv_bwd_weights(conv, x, src.data(), y, dy.data(), dw.data(), db.data());
    expect_close(dst, f.at("dst"), "dst");
    expect_close(dx, f.at("dx"), "diff_src");
    expect_close(dw, f.at("dw"), "diff_weights");
    expect_close(db, f.at("db"), "diff_bias");
  }
}

}  // namespace
}  // namespace distconv::reference
