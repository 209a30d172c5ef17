// ConvProblem: a convolution problem written in oneDNN benchdnn's descriptor
// syntax (the `--conv` driver's problem descriptors and batch files), parsed
// into a source shape and a ConvDesc, and printed back.
//
//   ConvProblem p = parse_conv_problem(
//       "mb1ic3ih224oc64oh112kh7sh2ph3n\"resnet_stem\"");
//   p.src_shape;                 // {1, 3, 224, 224}
//   p.desc.dst_shape(p.src_shape);   // {1, 64, 112, 112}
//   p.desc.padding_lower;        // {3, 3}
//   p.desc.padding_upper;        // {2, 2}
//   to_string(p);  // "g1mb1_ic3ih224iw224_oc64oh112ow112_kh7kw7_sh2sw2_"
//                  // "ph3pw3_dh0dw0_n\"resnet_stem\""
//
// A descriptor is a sequence of prefix+integer entries (g, mb, ic, id, ih,
// iw, oc, od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw), each
// optionally followed by one `_`, then optionally `n` and a name that runs to
// the end of the text (`n"name"` or `nname`); an entry given twice is an
// error (benchdnn takes the last). The rules are otherwise benchdnn's:
//   - defaults: g 1, mb 2, stride 1, dilation 0, no name;
//   - benchdnn's dilation 0 is a dense kernel: ConvDesc::dilation = dX + 1;
//   - a spatial dimension is used when any of its values is given (s1 and
//     p0 alone do not count); ic, oc and the input and kernel size of each
//     used dimension are required;
//   - 2D when h is used, 3D when d is; with no w values (2D) all w values
//     are copied from h, with no h and w values (3D) from d;
//   - no output size: padding defaults to 0 and the output is
//     (i - span + 2 p) / s + 1, span = (k - 1) (d + 1) + 1;
//   - an output size without padding: p = ((o - 1) s - i + span) / 2;
//   - the upper padding follows from the output size:
//     (o - 1) s - i + span - p, which may differ from the lower one. Where
//     that is negative but above -s (the last input rows are never read,
//     e.g. ih56 kh1 sh2: -1), ConvDesc gets 0, which gives the same output;
//     benchdnn keeps the negative value. Lower values are an error.
// 1D problems (only w given) are rejected: ConvDesc has 2 or 3 spatial
// dimensions.
#ifndef DISTCONV_PERF_CONV_PROBLEM_H_
#define DISTCONV_PERF_CONV_PROBLEM_H_

#include <string>
#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/deconv_desc.h"
#include "distconv/pool_desc.h"
#include "distconv/shape.h"

namespace distconv {

// Which benchdnn driver's descriptors: --conv, --deconv or --pool.
//  - kDeconvolution: ic, i.. are the transposed convolution's input, oc, o..
//    its output; with no output size, o = (i - 1) s - 2 p + span (benchdnn's
//    deconv rule). The problem holds the adjoint convolution (from the
//    output to the input; DeconvDesc::adjoint): src_shape is the transposed
//    convolution's output shape. deconv_desc() gives the layer's desc.
//  - kPooling: no g or oc (oc is ic); the problem holds the window
//    convolution (PoolDesc::window_conv without groups); pool_desc() gives
//    the layer's desc. Dilated pooling (dh > 0) is refused.
//  - kBatchNorm: mb, ic and the input size only (benchdnn's --bnorm
//    descriptors, e.g. mb8ic64ih128); the problem holds a 1x1 convolution
//    from ic to ic so that it prints and parses like the others.
//  - kElementwise: the same descriptors as kBatchNorm, for the layers with
//    no communication (activations, add, concat, upsampling).
//  - kGroupNorm: as kBatchNorm plus `g`, the number of groups (benchdnn's
//    --gnorm descriptors, e.g. g8mb2ic32id16ih16iw16); desc.groups holds
//    it (1 when absent).
//  - kInterpolate: the same descriptors as kBatchNorm, the input of a
//    linear interpolation to twice its size.
enum class ProblemKind {
  kConvolution,
  kDeconvolution,
  kPooling,
  kBatchNorm,
  kElementwise,
  kGroupNorm,
  kInterpolate
};

struct ConvProblem {
  ProblemKind kind = ProblemKind::kConvolution;
  std::string name;  // from n"name" (or nname); empty if absent
  Shape src_shape;   // (N, C, [D,] H, W)
  ConvDesc desc;     // bias left as ConvBias::kNone (the caller sets it)
};

// Throws Error(kInvalidArgument) naming `text` and what is wrong with it:
// an unknown entry, a missing or negative value, a missing required value,
// an empty output, negative lower padding, an output too small for the
// input (upper padding <= -stride), or a description that
// ConvDesc::validate rejects (e.g. channels not divisible into groups).
ConvProblem parse_conv_problem(
    const std::string& text, ProblemKind kind = ProblemKind::kConvolution);

// A kDeconvolution problem's transposed convolution, and its input shape.
DeconvDesc deconv_desc(const ConvProblem& p);
Shape deconv_src_shape(const ConvProblem& p);
// A kPooling problem's pooling of `kind`.
PoolDesc pool_desc(const ConvProblem& p, PoolKind kind);

// The canonical form with every value and `_` between the groups of values,
// e.g. "g1mb2_ic16ih32iw32_oc16oh32ow32_kh3kw3_sh1sw1_ph1pw1_dh0dw0".
// parse_conv_problem(to_string(p)) gives `p` back for every parsed `p`. The
// form has no upper padding: it is implied by the output size, which this
// writes from p.desc.dst_shape (so it throws like that when `p` is invalid),
// and an upper padding larger than needed for that output is not kept.
std::string to_string(const ConvProblem& p);

// One descriptor per line; blank lines and lines whose first non-blank
// character is '#' are skipped, and blanks around a descriptor ignored.
// Throws Error(kInvalidArgument) naming `path` when it cannot be read, and
// "path:line: ..." for a bad descriptor.
std::vector<ConvProblem> read_conv_batch(
    const std::string& path, ProblemKind kind = ProblemKind::kConvolution);

}  // namespace distconv

#endif  // DISTCONV_PERF_CONV_PROBLEM_H_
