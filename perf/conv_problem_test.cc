#include "perf/conv_problem.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "gtest/gtest.h"

namespace distconv {
namespace {

// Every field of `p`, one per line, to compare problems in one EXPECT.
std::string fields(const ConvProblem& p) {
  const ConvDesc& c = p.desc;
  return internal::str(
      "name ", p.name, "\nsrc ", p.src_shape, "\nic ", c.in_channels, " oc ",
      c.out_channels, " g ", c.groups, "\nkernel ", c.kernel, "\nstride ",
      c.stride, "\ndilation ", c.dilation, "\npadding ", c.padding_lower, " / ",
      c.padding_upper, "\nbias ", c.bias == ConvBias::kAdd);
}

// One line: "src -> dst g<groups> k<kernel> s<stride> d<dilation>
// p<lower>/<upper>", with ConvDesc's dilation (1 = dense).
std::string summary(const std::string& text) {
  const ConvProblem p = parse_conv_problem(text);
  const ConvDesc& c = p.desc;
  EXPECT_EQ(c.bias, ConvBias::kNone) << text;
  return internal::str(p.src_shape, " -> ", c.dst_shape(p.src_shape), " g",
                       c.groups, " k", c.kernel, " s", c.stride, " d",
                       c.dilation, " p", c.padding_lower, "/", c.padding_upper);
}

TEST(ConvProblem, SamePadding) {
  EXPECT_EQ(summary("mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1"),
            "1x16x1024x1024 -> 1x16x1024x1024 g1 k3x3 s1x1 d1x1 p1x1/1x1");
  EXPECT_EQ(parse_conv_problem("ic16ih32oc16kh3ph1").name, "");
}

TEST(ConvProblem, GroupsAndSquareShapes) {
  EXPECT_EQ(summary("g2mb2ic8ih12oc6kh3ph1"),
            "2x8x12x12 -> 2x6x12x12 g2 k3x3 s1x1 d1x1 p1x1/1x1");
}

TEST(ConvProblem, StrideGivesAsymmetricPadding) {
  const std::string text = "mb1ic3ih224oc64oh112kh7sh2ph3n\"resnet_stem\"";
  EXPECT_EQ(summary(text),
            "1x3x224x224 -> 1x64x112x112 g1 k7x7 s2x2 d1x1 p3x3/2x2");
  EXPECT_EQ(parse_conv_problem(text).name, "resnet_stem");
}

TEST(ConvProblem, Defaults) {
  // g 1, mb 2, stride 1, dilation 0 (dense), padding 0.
  EXPECT_EQ(summary("ic3ih5oc2kh3"),
            "2x3x5x5 -> 2x2x3x3 g1 k3x3 s1x1 d1x1 p0x0/0x0");
  // Some w values given: w keeps its own defaults (sw 1), nothing is
  // copied from h.
  EXPECT_EQ(summary("ic1ih8iw16oc1kh3kw1sh2"),
            "2x1x8x16 -> 2x1x3x16 g1 k3x1 s2x1 d1x1 p0x0/0x0");
}

TEST(ConvProblem, PaddingFromOutputSize) {
  // ph = ((5 - 1) * 2 - 10 + 3) / 2 = 0, upper 8 - 10 + 3 - 0 = 1.
  EXPECT_EQ(summary("ic3ih10oc3oh5kh3sh2"),
            "2x3x10x10 -> 2x3x5x5 g1 k3x3 s2x2 d1x1 p0x0/1x1");
  // Dilation 1 (every other tap): span 5, "same" padding 2 / 2.
  EXPECT_EQ(summary("ic1ih10oc1oh10kh3dh1"),
            "2x1x10x10 -> 2x1x10x10 g1 k3x3 s1x1 d2x2 p2x2/2x2");
  // Output and padding given: the upper padding is what the output needs.
  EXPECT_EQ(summary("ic1ih10oc1oh12kh3ph1"),
            "2x1x10x10 -> 2x1x12x12 g1 k3x3 s1x1 d1x1 p1x1/3x3");
}

TEST(ConvProblem, UnreadInputRowsGiveUpperPaddingZero) {
  // ResNet-50's res3a_branch1: benchdnn's upper padding is
  // 27 * 2 - 56 + 1 - 0 = -1 (input row 55 is never read); 0 is the same.
  EXPECT_EQ(summary("mb1ic256ih56oc512oh28kh1sh2ph0"),
            "1x256x56x56 -> 1x512x28x28 g1 k1x1 s2x2 d1x1 p0x0/0x0");
  // No output size, stride 3: oh = (10 - 3) / 3 + 1 = 3, upper -2 -> 0.
  EXPECT_EQ(summary("ic1ih10oc1kh3sh3"),
            "2x1x10x10 -> 2x1x3x3 g1 k3x3 s3x3 d1x1 p0x0/0x0");
}

TEST(ConvProblem, ThreeDimensions) {
  // od = (9 - 5) / 2 + 1 = 3 (kd 3 with dilation 1 spans 5).
  EXPECT_EQ(summary("mb1ic4id9ih10iw11oc8kd3kh2kw1sd2dd1ph0"),
            "1x4x9x10x11 -> 1x8x3x9x11 g1 k3x2x1 s2x1x1 d2x1x1 "
            "p0x0x0/0x0x0");
  // Only d values: a cube.
  EXPECT_EQ(summary("ic4id8oc4kd3pd1"),
            "2x4x8x8x8 -> 2x4x8x8x8 g1 k3x3x3 s1x1x1 d1x1x1 p1x1x1/1x1x1");
}

TEST(ConvProblem, AnyOrderUnderscoresAndNames) {
  const std::string plain = fields(parse_conv_problem("ic16ih32oc8kh3ph1"));
  for (const std::string text :
       {"ic16_ih32_oc8_kh3_ph1", "ph1kh3oc8ih32ic16", "ic16ih32oc8kh3ph1_",
        "g1_mb2_ic16ih32iw32_oc8oh32ow32_kh3kw3_ph1pw1"}) {
    EXPECT_EQ(fields(parse_conv_problem(text)), plain) << text;
  }
  EXPECT_EQ(parse_conv_problem("ic1ih4oc1kh1nplain").name, "plain");
  EXPECT_EQ(parse_conv_problem("ic1ih4oc1kh1_n\"res2a_branch1\"").name,
            "res2a_branch1");
  EXPECT_EQ(parse_conv_problem("ic1ih4oc1kh1n\"\"").name, "");
}

TEST(ConvProblem, CanonicalForm) {
  EXPECT_EQ(to_string(parse_conv_problem(
                "mb1ic3ih224oc64oh112kh7sh2ph3n\"resnet_stem\"")),
            "g1mb1_ic3ih224iw224_oc64oh112ow112_kh7kw7_sh2sw2_ph3pw3_dh0dw0_"
            "n\"resnet_stem\"");
  EXPECT_EQ(
      to_string(parse_conv_problem("mb1ic4id9ih10iw11oc8kd3kh2kw1sd2dd1ph0")),
      "g1mb1_ic4id9ih10iw11_oc8od3oh9ow11_kd3kh2kw1_sd2sh1sw1_pd0ph0pw0_"
      "dd1dh0dw0");
}

TEST(ConvProblem, RoundTrip) {
  for (const std::string text : {
           "mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1",
           "g2mb2ic8ih12oc6kh3ph1",
           "mb1ic3ih224oc64oh112kh7sh2ph3n\"resnet_stem\"",
           "mb1ic4id9ih10iw11oc8kd3kh2kw1sd2dd1ph0",
           "ic3ih10oc3oh5kh3sh2",
           "ic1ih10oc1oh12kh3ph1nname with spaces",
           "g4mb0ic8ih7iw9oc4kh2kw3sh2sw3dh1dw2",
           "mb1ic256ih56oc512oh28kh1sh2ph0",
           "ic4id8oc4kd3pd1",
       }) {
    const ConvProblem p = parse_conv_problem(text);
    const std::string canonical = to_string(p);
    const ConvProblem q = parse_conv_problem(canonical);
    EXPECT_EQ(fields(q), fields(p)) << text << " -> " << canonical;
    EXPECT_EQ(to_string(q), canonical);
  }
}

// The message of the error parsing `text` throws, checked to be an invalid
// argument that names `text`.
std::string error_of(const std::string& text,
                     ProblemKind kind = ProblemKind::kConvolution) {
  try {
    parse_conv_problem(text, kind);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("\"" + text + "\""), std::string::npos) << what;
    return what;
  }
  return "no error";
}

#define EXPECT_ERROR(text, phrase) \
  EXPECT_NE(error_of(text).find(phrase), std::string::npos) << error_of(text)

// benchdnn's --pool descriptors: no oc or g; the window as a convolution.
TEST(ConvProblem, Pooling) {
  const ConvProblem p =
      parse_conv_problem("mb1ic16ih512kh3sh2ph1", ProblemKind::kPooling);
  EXPECT_EQ(p.src_shape, (Shape{1, 16, 512, 512}));
  const PoolDesc d = pool_desc(p, PoolKind::kAverageExcludePadding);
  EXPECT_EQ(d.kind, PoolKind::kAverageExcludePadding);
  EXPECT_EQ(d.kernel, (Shape{3, 3}));
  EXPECT_EQ(d.stride, (Shape{2, 2}));
  EXPECT_EQ(d.padding_lower, (Shape{1, 1}));
  EXPECT_EQ(d.padding_upper, (Shape{0, 0}));  // 512 -> 256 needs no more
  EXPECT_EQ(d.dst_shape(p.src_shape), (Shape{1, 16, 256, 256}));
  EXPECT_EQ(to_string(p), "mb1_ic16ih512iw512_oh256ow256_kh3kw3_sh2sw2_ph1pw1");
  EXPECT_EQ(to_string(parse_conv_problem(to_string(p), ProblemKind::kPooling)),
            to_string(p));
  EXPECT_THROW(parse_conv_problem("mb1ic16ih8oc16kh2", ProblemKind::kPooling),
               Error);
  EXPECT_THROW(parse_conv_problem("mb1ic16ih8kh2dh1", ProblemKind::kPooling),
               Error);
  EXPECT_THROW(parse_conv_problem("mb1ic16ih8kh2ph2", ProblemKind::kPooling),
               Error);  // padding not smaller than the kernel
}

// benchdnn's --deconv descriptors: ic, ih are the transposed convolution's
// input; the problem holds the adjoint convolution.
TEST(ConvProblem, Deconvolution) {
  const ConvProblem p = parse_conv_problem("mb1ic32ih256oc16kh4sh2ph1",
                                           ProblemKind::kDeconvolution);
  EXPECT_EQ(p.src_shape, (Shape{1, 16, 512, 512}));  // the output
  EXPECT_EQ(p.desc.in_channels, 16);
  EXPECT_EQ(p.desc.out_channels, 32);
  const DeconvDesc d = deconv_desc(p);
  EXPECT_EQ(deconv_src_shape(p), (Shape{1, 32, 256, 256}));
  EXPECT_EQ(d.dst_shape(deconv_src_shape(p)), (Shape{1, 16, 512, 512}));
  EXPECT_EQ(d.output_padding, (Shape{0, 0}));
  EXPECT_EQ(to_string(p),
            "g1mb1_ic32ih256iw256_oc16oh512ow512_kh4kw4_sh2sw2_ph1pw1_dh0dw0");
  // 3x3 stride 2 padding 1 from 5 to 10: upper padding 0 (PyTorch's
  // padding 1 with output padding 1).
  const ConvProblem q = parse_conv_problem("mb1ic4ih5oc4oh10kh3sh2ph1",
                                           ProblemKind::kDeconvolution);
  EXPECT_EQ(deconv_desc(q).padding_upper, (Shape{0, 0}));
  EXPECT_EQ(deconv_desc(q).output_padding, (Shape{0, 0}));
  // 1x1 stride 2 from 3 to 6: the last output row gets no input, which
  // only output padding expresses.
  const ConvProblem gap = parse_conv_problem("mb1ic4ih3oc4oh6kh1sh2",
                                             ProblemKind::kDeconvolution);
  EXPECT_EQ(deconv_desc(gap).output_padding, (Shape{1, 1}));
  EXPECT_EQ(deconv_desc(gap).dst_shape(deconv_src_shape(gap)),
            (Shape{1, 4, 6, 6}));
  EXPECT_EQ(deconv_desc(q).dst_shape(deconv_src_shape(q)),
            (Shape{1, 4, 10, 10}));
  EXPECT_EQ(to_string(parse_conv_problem(to_string(q),
                                         ProblemKind::kDeconvolution)),
            to_string(q));
  EXPECT_THROW(parse_conv_problem("mb1ic4ih5oc4oh12kh3sh2ph1",
                                  ProblemKind::kDeconvolution),
               Error);  // no adjoint convolution maps 12 to 5
}

// benchdnn's --gnorm descriptors: the groups and a shape.
TEST(ConvProblem, GroupNormDescriptors) {
  const ConvProblem p =
      parse_conv_problem("g8mb2ic32id16ih16iw16", ProblemKind::kGroupNorm);
  EXPECT_EQ(p.src_shape, (Shape{2, 32, 16, 16, 16}));
  EXPECT_EQ(p.desc.groups, 8);
  EXPECT_EQ(to_string(p), "g8mb2_ic32id16ih16iw16");
  EXPECT_EQ(parse_conv_problem(to_string(p), ProblemKind::kGroupNorm).desc,
            p.desc);
  EXPECT_EQ(parse_conv_problem("mb1ic4ih8", ProblemKind::kGroupNorm)
                .desc.groups,
            1);
  EXPECT_THROW(parse_conv_problem("g3mb1ic4ih8", ProblemKind::kGroupNorm),
               Error);
  EXPECT_THROW(parse_conv_problem("g2mb1ic4ih8kh3", ProblemKind::kGroupNorm),
               Error);
}

// benchdnn's --bnorm descriptors: a shape only.
TEST(ConvProblem, BatchNorm) {
  const ConvProblem p =
      parse_conv_problem("mb8ic64ih128", ProblemKind::kBatchNorm);
  EXPECT_EQ(p.src_shape, (Shape{8, 64, 128, 128}));
  EXPECT_EQ(to_string(p), "mb8_ic64ih128iw128");
  EXPECT_EQ(parse_conv_problem(to_string(p), ProblemKind::kBatchNorm).src_shape,
            p.src_shape);
  EXPECT_EQ(parse_conv_problem("mb1ic4id5ih6iw7", ProblemKind::kBatchNorm)
                .src_shape,
            (Shape{1, 4, 5, 6, 7}));
  EXPECT_THROW(parse_conv_problem("mb1ic4ih8kh3", ProblemKind::kBatchNorm),
               Error);
  EXPECT_THROW(parse_conv_problem("mb1ic4ih8oc4", ProblemKind::kBatchNorm),
               Error);
}

TEST(ConvProblem, Errors) {
  EXPECT_ERROR("", "empty");
  EXPECT_ERROR("ih8oc4kh3", "`ic` is not given or 0");
  EXPECT_ERROR("ic4ih8kh3", "`oc` is not given or 0");
  EXPECT_ERROR("ic4ih8oc0kh3", "`oc` is not given or 0");
  EXPECT_ERROR("ic4oc4kh3", "`ih` is not given or 0");
  EXPECT_ERROR("ic4ih8oc4", "`kh` is not given or 0");
  EXPECT_ERROR("ic4oc4", "no spatial size");
  EXPECT_ERROR("ic4iw8oc4kw3", "1D problems");
  EXPECT_ERROR("ic4id8ih8oc4kd3kh3", "both or neither of the h and w");
  EXPECT_ERROR("g0ic4ih8oc4kh3", "`g` must be positive");
  EXPECT_ERROR("ic4ih8oc4kh3sh0", "`sh` must be positive");
  EXPECT_ERROR("ic4ih8oc4kh3xy2", "unrecognized entry at \"xy2\"");
  EXPECT_ERROR("hello", "unrecognized entry at \"hello\"");
  EXPECT_ERROR("ic4ih8oc4kh3 ", "unrecognized entry at \" \"");
  EXPECT_ERROR("ic4__ih8oc4kh3", "unrecognized entry at \"_ih8oc4kh3\"");
  EXPECT_ERROR("ic4ihoc4kh3", "no value for `ih` at \"oc4kh3\"");
  EXPECT_ERROR("ic4ih8oc4kh", "no value for `kh`");
  EXPECT_ERROR("ic4ih-8oc4kh3", "`ih` must not be negative");
  EXPECT_ERROR("ic4ih99999999999oc4kh3", "`ih` is larger than");
  // Deduced values obey the same limit: padding for a huge output (a
  // fuzzer's find), an output from a huge input and padding.
  EXPECT_ERROR("ic1ih10oc4oh808001023kh3sh6",
               "`ph` is not given and `oh` needs padding 2424003062 before, "
               "larger than 1000000000");
  EXPECT_NE(error_of("ic16ih808001024oc16kh3sh6", ProblemKind::kDeconvolution)
                .find("`oh` is not given and the other values give an "
                      "output of 4848006141, larger than 1000000000"),
            std::string::npos);
  EXPECT_ERROR("ic1ih1000000000oc4kh1ph1000000000",
               "`oh` is not given and the other values give an output of "
               "3000000000, larger than 1000000000");
  EXPECT_ERROR("ic4ih8oc4kh3n\"name", "no closing");
  // A field given twice (which value was meant?).
  EXPECT_ERROR("mb1ic1ic2ih4oc2kh1", "`ic` is given twice");
  EXPECT_ERROR("ic4ih8oc4kh3_kh5", "`kh` is given twice");
  EXPECT_ERROR("g1mb2ic4ih8oc4kh3g1", "`g` is given twice");
  // No output size, kernel larger than the input: oh = (2 - 5) / 1 + 1.
  EXPECT_ERROR("ic4ih2oc4kh5",
               "`oh` is not given and the other values give "
               "an output of -2");
  // Output smaller than the input gives: upper 2 - 10 + 3 - 1 = -6.
  EXPECT_ERROR("ic4ih10oc4oh3kh3ph1",
               "oh3 is too small for ih10 kh3 sh1 dh0 ph1: it needs padding -6 "
               "after");
  // With stride 2, upper padding -2 drops an output: 2 - 8 + 3 - 0 = -3.
  EXPECT_ERROR("ic1ih8oc1oh2kh3sh2ph0", "it needs padding -3 after");
  // Deduced lower padding negative: (1 - 10 + 3) / 2 = -3.
  EXPECT_ERROR("ic4ih10oc4oh2kh3",
               "oh2 ih10 kh3 sh1 dh0 need padding -3 before, which must not "
               "be negative");
  // What ConvDesc::validate rejects.
  EXPECT_ERROR("g4ic6ih8oc8kh3", "not divisible into 4 groups");
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

TEST(ConvProblem, ReadBatch) {
  const std::string path = temp_path("batch.txt");
  write_file(path,
             "# resnet layers\n"
             "mb1ic3ih224oc64oh112kh7sh2ph3n\"resnet_stem\"\n"
             "\n"
             "  g2mb2ic8ih12oc6kh3ph1 \r\n"
             "   # an indented comment\n"
             "mb1ic4id9ih10iw11oc8kd3kh2kw1sd2dd1ph0");  // no final newline
  const std::vector<ConvProblem> batch = read_conv_batch(path);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(fields(batch[0]),
            fields(parse_conv_problem(
                "mb1ic3ih224oc64oh112kh7sh2ph3n\"resnet_stem\"")));
  EXPECT_EQ(fields(batch[1]),
            fields(parse_conv_problem("g2mb2ic8ih12oc6kh3ph1")));
  EXPECT_EQ(batch[2].src_shape, (Shape{1, 4, 9, 10, 11}));

  const std::string empty = temp_path("empty.txt");
  write_file(empty, "# nothing\n\n");
  EXPECT_TRUE(read_conv_batch(empty).empty());
}

TEST(ConvProblem, ReadBatchErrorsNameFileAndLine) {
  const std::string path = temp_path("bad_batch.txt");
  write_file(path, "ic4ih8oc4kh3\n# comment\nic4ih8oc4kh3zz1\n");
  try {
    read_conv_batch(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "distconv: invalid argument: " + path +
                  ":3: convolution descriptor \"ic4ih8oc4kh3zz1\": "
                  "unrecognized entry at \"zz1\"");
  }
  const std::string missing = temp_path("no_such_dir/batch.txt");
  try {
    read_conv_batch(missing);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("cannot open " + missing),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace distconv
