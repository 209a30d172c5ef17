// onednn_primitives: bare oneDNN convolution primitives timed on one
// thread, written for oneDNN 2.x's API and 3.x's both, so that the same
// source built against each version (//perf:onednn_primitives against
// the oneDNN 3.2 of third_party/install_packages.sh, which distconv builds
// with, //perf:onednn26_primitives against Debian's oneDNN 2.6) measures
// them side by side (perf/compare_onednn_versions.sh runs both in one
// run).
//
//   onednn_primitives --dir=fwd|bwd_d|bwd_w --dt=f32|bf16
//                     --layout=nhwc|blocked [--reps=N] PROBLEM...
//
// PROBLEM in benchdnn's syntax (perf/conv_problem.h), e.g.
// mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1. --layout=nhwc: the
// tensors channels-last (what distconv runs in place); blocked: oneDNN's
// own choice (format_tag::any; nChw16c on AVX-512). Weights in oneDNN's
// choice, bias and the weight gradients in fp32. One JSON line per
// problem: the version, the implementation oneDNN chose, the median of
// --reps runs after two warm-up runs, in milliseconds. A pass for which
// oneDNN offers only its reference loops (an implementation named ref:...,
// minutes per run on these sizes) is not run: its line names the
// implementation and says so in "error".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dnnl.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "perf/conv_problem.h"

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Type = memory::data_type;

memory::dims dims_of(const distconv::Shape& s) {
  return memory::dims(s.begin(), s.end());
}

struct Options {
  std::string dir = "fwd", dt = "f32", layout = "nhwc";
  int reps = 10;
  std::vector<std::string> problems;
};

// The primitive of one pass and its arguments, filled with small values.
struct Pass {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::string impl;
};

memory filled(const memory::desc& md, const dnnl::engine& e) {
  memory m(md, e);
  auto* p = static_cast<unsigned char*>(m.get_data_handle());
  const size_t n = md.get_size();
  // Bytes of small values whatever the type: 0x3c is fp32/bf16 ~ 0.01..
  for (size_t i = 0; i < n; ++i) p[i] = (i % 4 == 3 || i % 2 == 1) ? 0x3c : 0;
  return m;
}

Pass make_pass(const Options& o, const distconv::ConvProblem& p,
               const dnnl::engine& e) {
  const distconv::ConvDesc& d = p.desc;
  const int k = d.spatial_dims();
  const Type type = o.dt == "bf16" ? Type::bf16 : Type::f32;
  const Tag act = o.layout == "blocked" ? Tag::any
                  : k == 2              ? Tag::nhwc
                                        : Tag::ndhwc;
  const memory::desc src(dims_of(p.src_shape), type, act);
  const memory::desc dst(dims_of(d.dst_shape(p.src_shape)), type, act);
  memory::dims wdims;
  if (d.groups > 1) wdims.push_back(d.groups);
  wdims.push_back(d.out_channels / d.groups);
  wdims.push_back(d.in_channels / d.groups);
  for (distconv::Index x : d.kernel) wdims.push_back(x);
  const memory::desc weights(wdims, type, Tag::any);
  const memory::desc diff_weights(wdims, Type::f32, Tag::any);
  const memory::desc bias({d.out_channels}, Type::f32, Tag::x);
  memory::dims strides = dims_of(d.stride), pl = dims_of(d.padding_lower),
               pr = dims_of(d.padding_upper), dil;
  for (distconv::Index x : d.dilation) dil.push_back(x - 1);
  const auto alg = dnnl::algorithm::convolution_direct;
  const auto fwd_prop = dnnl::prop_kind::forward_training;
  using Fwd = dnnl::convolution_forward;
  using BwdD = dnnl::convolution_backward_data;
  using BwdW = dnnl::convolution_backward_weights;
#if DNNL_VERSION_MAJOR >= 3
  const Fwd::primitive_desc fpd(e, fwd_prop, alg, src, weights, bias, dst,
                                strides, dil, pl, pr);
#else
  const Fwd::primitive_desc fpd(
      Fwd::desc(fwd_prop, alg, src, weights, bias, dst, strides, dil, pl, pr),
      e);
#endif
  Pass pass;
  if (o.dir == "fwd") {
    pass.primitive = Fwd(fpd);
    pass.args = {{DNNL_ARG_SRC, filled(fpd.src_desc(), e)},
                 {DNNL_ARG_WEIGHTS, filled(fpd.weights_desc(), e)},
                 {DNNL_ARG_BIAS, filled(fpd.bias_desc(), e)},
                 {DNNL_ARG_DST, filled(fpd.dst_desc(), e)}};
    pass.impl = fpd.impl_info_str();
  } else if (o.dir == "bwd_d") {
#if DNNL_VERSION_MAJOR >= 3
    const BwdD::primitive_desc pd(e, alg, src, weights, dst, strides, dil, pl,
                                  pr, fpd);
#else
    const BwdD::primitive_desc pd(
        BwdD::desc(alg, src, weights, dst, strides, dil, pl, pr), e, fpd);
#endif
    pass.primitive = BwdD(pd);
    pass.args = {{DNNL_ARG_DIFF_DST, filled(pd.diff_dst_desc(), e)},
                 {DNNL_ARG_WEIGHTS, filled(pd.weights_desc(), e)},
                 {DNNL_ARG_DIFF_SRC, filled(pd.diff_src_desc(), e)}};
    pass.impl = pd.impl_info_str();
  } else {
#if DNNL_VERSION_MAJOR >= 3
    const BwdW::primitive_desc pd(e, alg, src, diff_weights, bias, dst, strides,
                                  dil, pl, pr, fpd);
#else
    const BwdW::primitive_desc pd(
        BwdW::desc(alg, src, diff_weights, bias, dst, strides, dil, pl, pr), e,
        fpd);
#endif
    pass.primitive = BwdW(pd);
    pass.args = {{DNNL_ARG_SRC, filled(pd.src_desc(), e)},
                 {DNNL_ARG_DIFF_DST, filled(pd.diff_dst_desc(), e)},
                 {DNNL_ARG_DIFF_WEIGHTS, filled(pd.diff_weights_desc(), e)},
                 {DNNL_ARG_DIFF_BIAS, filled(pd.diff_bias_desc(), e)}};
    pass.impl = pd.impl_info_str();
  }
  return pass;
}

// `s` as the inside of a JSON string.
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

bool take(const std::string& arg, const char* name, std::string* value) {
  const std::string prefix = std::string(name) + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help") {
      std::printf(
          "usage: onednn_primitives --dir=fwd|bwd_d|bwd_w --dt=f32|bf16 "
          "--layout=nhwc|blocked [--reps=N] PROBLEM...\n"
          "Bare oneDNN convolution primitives on one thread, one JSON line "
          "per problem.\n"
          "  --dir     the pass (default %s)\n"
          "  --dt      element type (default %s)\n"
          "  --layout  nhwc: channels-last tensors; blocked: oneDNN's own "
          "(default %s)\n"
          "  --reps    timed runs after two warm-up runs (default %d)\n"
          "  --help    this text\n"
          "  PROBLEM   benchdnn's syntax, e.g. "
          "mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1\n",
          o.dir.c_str(), o.dt.c_str(), o.layout.c_str(), o.reps);
      return 0;
    }
    std::string v;
    if (take(arg, "--dir", &o.dir) || take(arg, "--dt", &o.dt) ||
        take(arg, "--layout", &o.layout)) {
    } else if (take(arg, "--reps", &v)) {
      o.reps = std::max(1, std::stoi(v));
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "onednn_primitives: unknown option %s\n",
                   arg.c_str());
      return 2;
    } else {
      o.problems.push_back(arg);
    }
  }
  if ((o.dir != "fwd" && o.dir != "bwd_d" && o.dir != "bwd_w") ||
      (o.dt != "f32" && o.dt != "bf16") ||
      (o.layout != "nhwc" && o.layout != "blocked") || o.problems.empty()) {
    std::fprintf(stderr,
                 "usage: onednn_primitives --dir=fwd|bwd_d|bwd_w "
                 "--dt=f32|bf16 --layout=nhwc|blocked [--reps=N] "
                 "PROBLEM...\n");
    return 2;
  }
  const dnnl_version_t* version = dnnl_version();
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  int status = 0;
  for (const std::string& text : o.problems) {
    std::string impl, error;
    double median = 0;
    try {
      const distconv::ConvProblem p = distconv::parse_conv_problem(text);
      Pass pass = make_pass(o, p, engine);
      impl = pass.impl;
      if (impl.rfind("ref", 0) == 0) {
        throw std::runtime_error("only the reference implementation (" + impl +
                                 "): not timed");
      }
      std::vector<double> times;
      for (int r = 0; r < o.reps + 2; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        pass.primitive.execute(stream, pass.args);
        stream.wait();
        const std::chrono::duration<double, std::milli> t =
            std::chrono::steady_clock::now() - t0;
        if (r >= 2) times.push_back(t.count());
      }
      std::sort(times.begin(), times.end());
      median = times[times.size() / 2];
    } catch (const std::exception& e) {
      error = e.what();
      status = 1;
    }
    std::printf(
        "{\"onednn\": \"%d.%d.%d\", \"problem\": \"%s\", \"dir\": \"%s\", "
        "\"dt\": \"%s\", \"layout\": \"%s\", \"impl\": \"%s\", "
        "\"median_ms\": %.3f, \"error\": \"%s\"}\n",
        version->major, version->minor, version->patch, escaped(text).c_str(),
        o.dir.c_str(), o.dt.c_str(), o.layout.c_str(), escaped(impl).c_str(),
        median, escaped(error).c_str());
  }
  return status;
}
