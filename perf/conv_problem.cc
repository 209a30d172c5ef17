#include "perf/conv_problem.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "distconv/error.h"

namespace distconv {
namespace {

// Larger values are rejected, so that the padding arithmetic below cannot
// overflow.
constexpr Index kMaxValue = 1000000000;
constexpr char kDimNames[] = {'d', 'h', 'w'};

// The values as written, with benchdnn's conventions: 0 for "not given",
// -1 for padding and groups not given, dilation 0 for a dense kernel.
// Spatial arrays are indexed 0 = d, 1 = h, 2 = w.
struct RawDesc {
  Index g = -1, mb = 2, ic = 0, oc = 0;
  Index i[3] = {0, 0, 0}, o[3] = {0, 0, 0}, k[3] = {0, 0, 0};
  Index s[3] = {1, 1, 1}, p[3] = {-1, -1, -1}, dil[3] = {0, 0, 0};
  Index p_upper[3] = {0, 0, 0};
  std::string name;
};

// Throws the parse error for descriptor `text`.
template <typename... Parts>
void check(bool condition, const std::string& text, const Parts&... parts) {
  require(condition, ErrorKind::kInvalidArgument, "convolution descriptor \"",
          text, "\": ", parts...);
}

// The message of `e` without the "distconv: <kind>: " prefix.
std::string message_of(const Error& e) {
  const std::string prefix =
      std::string("distconv: ") + to_string(e.kind()) + ": ";
  const std::string what = e.what();
  return what.compare(0, prefix.size(), prefix) == 0
             ? what.substr(prefix.size())
             : what;
}

// Reads the non-negative decimal value of entry `prefix` at `*pos`.
Index parse_value(const std::string& text, const char* prefix, size_t* pos) {
  check(*pos >= text.size() || text[*pos] != '-', text, "`", prefix,
        "` must not be negative");
  check(*pos < text.size() &&
            std::isdigit(static_cast<unsigned char>(text[*pos])),
        text, "no value for `", prefix, "` at \"", text.substr(*pos), "\"");
  Index value = 0;
  while (*pos < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[*pos]))) {
    value = value * 10 + (text[*pos] - '0');
    check(value <= kMaxValue, text, "`", prefix, "` is larger than ",
          kMaxValue);
    ++*pos;
  }
  return value;
}

// The name after `n`: n"name" or nname.
std::string parse_name(const std::string& text, size_t pos) {
  const std::string rest = text.substr(pos);
  if (rest.empty() || rest.front() != '"') return rest;
  check(rest.size() >= 2 && rest.back() == '"', text,
        "the name has no closing '\"'");
  return rest.substr(1, rest.size() - 2);
}

// benchdnn's scan: each round tries every entry in a fixed order, then a
// name, then skips one `_`; a round that reads no entry is an error.
RawDesc scan(const std::string& text) {
  RawDesc r;
  const std::pair<const char*, Index*> entries[] = {
      {"g", &r.g},       {"mb", &r.mb},     {"ic", &r.ic},   {"id", &r.i[0]},
      {"ih", &r.i[1]},   {"iw", &r.i[2]},   {"oc", &r.oc},   {"od", &r.o[0]},
      {"oh", &r.o[1]},   {"ow", &r.o[2]},   {"kd", &r.k[0]}, {"kh", &r.k[1]},
      {"kw", &r.k[2]},   {"sd", &r.s[0]},   {"sh", &r.s[1]}, {"sw", &r.s[2]},
      {"pd", &r.p[0]},   {"ph", &r.p[1]},   {"pw", &r.p[2]}, {"dd", &r.dil[0]},
      {"dh", &r.dil[1]}, {"dw", &r.dil[2]},
  };
  check(!text.empty(), text, "empty");
  bool seen[std::size(entries)] = {};
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t round_start = pos;
    bool ok = false;
    for (std::size_t e = 0; e < std::size(entries); ++e) {
      const auto& [prefix, value] = entries[e];
      const size_t length = std::strlen(prefix);
      if (text.compare(pos, length, prefix) == 0) {
        check(!seen[e], text, "`", prefix, "` is given twice");
        seen[e] = true;
        ok = true;
        pos += length;
        *value = parse_value(text, prefix, &pos);
      }
    }
    if (pos < text.size() && text[pos] == 'n') {
      r.name = parse_name(text, pos + 1);
      break;
    }
    if (pos < text.size() && text[pos] == '_') ++pos;
    check(ok, text, "unrecognized entry at \"", text.substr(round_start), "\"");
  }
  return r;
}

Index span(const RawDesc& r, int d) {
  return (r.k[d] - 1) * (r.dil[d] + 1) + 1;
}

// Deduces the output size or the padding of spatial dimension `d`, which
// has some value given.
void complete_dimension(const std::string& text, RawDesc* r, int d) {
  const char n = kDimNames[d];
  check(r->i[d] > 0, text, "`i", n, "` is not given or 0");
  check(r->k[d] > 0, text, "`k", n, "` is not given or 0");
  if (r->o[d] == 0) {
    if (r->p[d] < 0) r->p[d] = 0;
    r->o[d] = (r->i[d] - span(*r, d) + 2 * r->p[d]) / r->s[d] + 1;
    check(r->o[d] > 0, text, "`o", n, "` is not given and the other values ",
          "give an output of ", r->o[d]);
    check(r->o[d] <= kMaxValue, text, "`o", n, "` is not given and the other ",
          "values give an output of ", r->o[d], ", larger than ", kMaxValue);
  } else if (r->p[d] < 0) {
    r->p[d] = ((r->o[d] - 1) * r->s[d] - r->i[d] + span(*r, d)) / 2;
    // Deduced values obey the limit of given ones (the canonical form
    // writes them).
    check(r->p[d] <= kMaxValue, text, "`p", n, "` is not given and `o", n,
          "` needs padding ", r->p[d], " before, larger than ", kMaxValue);
  }
}

// Copies every value of spatial dimension `from` to dimension `to`.
void copy_dimension(RawDesc* r, int from, int to) {
  for (Index* v : {r->i, r->o, r->k, r->s, r->p, r->dil}) v[to] = v[from];
}

// Number of spatial dimensions (2 or 3) after filling in the missing ones.
int fill_missing_dimensions(const std::string& text, RawDesc* r) {
  const bool has_d = r->o[0] != 0, has_h = r->o[1] != 0, has_w = r->o[2] != 0;
  if (has_d) {
    check(has_h == has_w, text,
          "a 3D problem needs both or neither of the h and w values");
    if (!has_h) {
      copy_dimension(r, 0, 1);
      copy_dimension(r, 0, 2);
    }
    return 3;
  }
  check(has_h || !has_w, text,
        "1D problems (only w values) are not supported, give h values");
  check(has_h, text, "no spatial size: give at least ih and kh");
  if (!has_w) copy_dimension(r, 1, 2);
  return 2;
}

// Sets the upper padding of spatial dimension `d` from its output size,
// (o - 1) s - i + span - p. benchdnn leaves it negative when the last input
// rows are never read (e.g. ih56 kh1 sh2: -1); an upper padding of 0 gives
// the same output then, and ConvDesc needs it >= 0. Padding below -s + 1
// would mean a smaller output than the input gives: an error.
void complete_upper_padding(const std::string& text, RawDesc* r, int d) {
  const char n = kDimNames[d];
  check(r->p[d] >= 0, text, "o", n, r->o[d], " i", n, r->i[d], " k", n, r->k[d],
        " s", n, r->s[d], " d", n, r->dil[d], " need padding ", r->p[d],
        " before, which must not be negative");
  const Index upper = (r->o[d] - 1) * r->s[d] - r->i[d] + span(*r, d) - r->p[d];
  check(upper > -r->s[d], text, "o", n, r->o[d], " is too small for i", n,
        r->i[d], " k", n, r->k[d], " s", n, r->s[d], " d", n, r->dil[d], " p",
        n, r->p[d], ": it needs padding ", upper, " after");
  r->p_upper[d] = std::max<Index>(upper, 0);
}

// Completes `r` the way benchdnn does; returns its spatial dimensions.
int complete(const std::string& text, RawDesc* r) {
  if (r->g >= 0) {
    check(r->g > 0, text, "`g` must be positive");
  } else {
    r->g = 1;
  }
  check(r->ic > 0, text, "`ic` is not given or 0");
  check(r->oc > 0, text, "`oc` is not given or 0");
  for (int d = 0; d < 3; ++d) {
    check(r->s[d] > 0, text, "`s", kDimNames[d], "` must be positive");
  }
  for (int d = 0; d < 3; ++d) {
    const bool unused = (r->i[d] | r->k[d] | r->o[d] | r->dil[d]) == 0 &&
                        r->s[d] == 1 && r->p[d] < 1;
    if (!unused) complete_dimension(text, r, d);
  }
  const int spatial = fill_missing_dimensions(text, r);
  for (int d = 3 - spatial; d < 3; ++d) complete_upper_padding(text, r, d);
  return spatial;
}

ConvProblem to_problem(const RawDesc& r, int spatial) {
  ConvProblem p;
  p.name = r.name;
  p.src_shape = Shape::filled(spatial + 2, 0);
  p.src_shape[0] = r.mb;
  p.src_shape[1] = r.ic;
  p.desc = ConvDesc::make(r.ic, r.oc, Shape::filled(spatial, 0));
  p.desc.groups = r.g;
  for (int j = 0; j < spatial; ++j) {
    const int d = 3 - spatial + j;
    p.src_shape[j + 2] = r.i[d];
    p.desc.kernel[j] = r.k[d];
    p.desc.stride[j] = r.s[d];
    p.desc.dilation[j] = r.dil[d] + 1;
    p.desc.padding_lower[j] = r.p[d];
    p.desc.padding_upper[j] = r.p_upper[d];
  }
  return p;
}

// Appends "<prefix><letter><value>" for each spatial dimension.
void write_spatial(std::ostream& out, char prefix, const Shape& values,
                   Index offset) {
  const int spatial = values.ndims();
  for (int j = 0; j < spatial; ++j) {
    out << prefix << kDimNames[3 - spatial + j] << values[j] + offset;
  }
}

std::string trim(const std::string& line) {
  const char* blanks = " \t\r\n\f\v";
  const size_t first = line.find_first_not_of(blanks);
  if (first == std::string::npos) return "";
  return line.substr(first, line.find_last_not_of(blanks) - first + 1);
}

}  // namespace

ConvProblem parse_conv_problem(const std::string& text, ProblemKind kind) {
  RawDesc r = scan(text);
  if (kind == ProblemKind::kBatchNorm || kind == ProblemKind::kElementwise ||
      kind == ProblemKind::kGroupNorm || kind == ProblemKind::kInterpolate) {
    const char* what = kind == ProblemKind::kBatchNorm   ? "batch normalisation"
                       : kind == ProblemKind::kGroupNorm ? "group normalisation"
                       : kind == ProblemKind::kInterpolate ? "interpolation"
                                                           : "element-wise";
    check(r.oc == 0 && (r.g < 0 || kind == ProblemKind::kGroupNorm), text,
          what, " descriptors have no `oc`",
          kind == ProblemKind::kGroupNorm ? "" : " or `g`");
    for (int d = 0; d < 3; ++d) {
      check((r.o[d] | r.k[d] | r.dil[d]) == 0 && r.s[d] == 1 && r.p[d] < 0,
            text, what,
            " descriptors have no output, kernel, stride, padding or "
            "dilation");
      if (r.i[d] > 0) r.k[d] = 1;
    }
    r.oc = r.ic;
  } else if (kind == ProblemKind::kPooling) {
    check(r.oc == 0 && r.g < 0, text,
          "pooling descriptors have no `oc` or `g`");
    r.oc = r.ic;
    for (int d = 0; d < 3; ++d) {
      check(r.dil[d] == 0, text, "dilated pooling is not supported");
    }
  } else if (kind == ProblemKind::kDeconvolution) {
    // The adjoint convolution runs from the output to the input.
    for (int d = 0; d < 3; ++d) {
      if ((r.i[d] | r.o[d] | r.k[d]) == 0) continue;  // an unused dimension
      check(r.i[d] > 0, text, "`i", kDimNames[d], "` is not given or 0");
      check(r.k[d] > 0, text, "`k", kDimNames[d], "` is not given or 0");
      if (r.o[d] == 0) {
        r.o[d] = (r.i[d] - 1) * r.s[d] - 2 * std::max<Index>(r.p[d], 0) +
                 span(r, d);
        check(r.o[d] > 0, text, "`o", kDimNames[d],
              "` is not given and the other values give an output of ",
              r.o[d]);
        check(r.o[d] <= kMaxValue, text, "`o", kDimNames[d],
              "` is not given and the other values give an output of ",
              r.o[d], ", larger than ", kMaxValue);
      }
      std::swap(r.i[d], r.o[d]);
    }
    std::swap(r.ic, r.oc);
  }
  const int spatial = complete(text, &r);
  ConvProblem p = to_problem(r, spatial);
  p.kind = kind;
  try {
    p.desc.validate(p.src_shape);
    if (kind == ProblemKind::kDeconvolution) {
      deconv_desc(p).validate(deconv_src_shape(p));
    } else if (kind == ProblemKind::kPooling) {
      pool_desc(p, PoolKind::kMax).validate(p.src_shape);
    }
  } catch (const Error& e) {
    check(false, text, message_of(e));
  }
  return p;
}

DeconvDesc deconv_desc(const ConvProblem& p) {
  const ConvDesc& c = p.desc;
  DeconvDesc d = DeconvDesc::make(c.out_channels, c.in_channels, c.kernel);
  d.groups = c.groups;
  d.stride = c.stride;
  d.dilation = c.dilation;
  d.padding_lower = c.padding_lower;
  d.padding_upper = c.padding_upper;
  d.padding_mode = c.padding_mode;
  // The output size the adjoint convolution's input has, beyond what
  // stride, kernel and padding give (an upper padding clamped to 0).
  const Shape src = c.dst_shape(p.src_shape);
  for (int j = 0; j < c.spatial_dims(); ++j) {
    d.output_padding[j] =
        p.src_shape[j + 2] -
        ((src[j + 2] - 1) * c.stride[j] - c.padding_lower[j] -
         c.padding_upper[j] + (c.kernel[j] - 1) * c.dilation[j] + 1);
  }
  return d;
}

Shape deconv_src_shape(const ConvProblem& p) {
  return p.desc.dst_shape(p.src_shape);
}

PoolDesc pool_desc(const ConvProblem& p, PoolKind kind) {
  PoolDesc d = PoolDesc::make(kind, p.desc.kernel);
  d.stride = p.desc.stride;
  d.padding_lower = p.desc.padding_lower;
  d.padding_upper = p.desc.padding_upper;
  d.padding_mode = p.desc.padding_mode;
  return d;
}

std::string to_string(const ConvProblem& p) {
  const ConvDesc& c = p.desc;
  const Shape dst = c.dst_shape(p.src_shape);
  Shape src_spatial = Shape::filled(c.spatial_dims(), 0);
  Shape dst_spatial = src_spatial;
  for (int j = 0; j < c.spatial_dims(); ++j) {
    src_spatial[j] = p.src_shape[j + 2];
    dst_spatial[j] = dst[j + 2];
  }
  Index in_channels = c.in_channels, out_channels = c.out_channels;
  if (p.kind == ProblemKind::kDeconvolution) {  // written from its side
    std::swap(src_spatial, dst_spatial);
    std::swap(in_channels, out_channels);
  }
  std::ostringstream out;
  if (p.kind == ProblemKind::kBatchNorm ||
      p.kind == ProblemKind::kElementwise ||
      p.kind == ProblemKind::kGroupNorm ||
      p.kind == ProblemKind::kInterpolate) {
    if (p.kind == ProblemKind::kGroupNorm) out << "g" << c.groups;
    out << "mb" << p.src_shape[0] << "_ic" << in_channels;
    write_spatial(out, 'i', src_spatial, 0);
    if (!p.name.empty()) out << "_n\"" << p.name << "\"";
    return out.str();
  }
  if (p.kind != ProblemKind::kPooling) out << "g" << c.groups;
  out << "mb" << p.src_shape[0] << "_ic" << in_channels;
  write_spatial(out, 'i', src_spatial, 0);
  out << "_";
  if (p.kind != ProblemKind::kPooling) out << "oc" << out_channels;
  write_spatial(out, 'o', dst_spatial, 0);
  out << "_";
  write_spatial(out, 'k', c.kernel, 0);
  out << "_";
  write_spatial(out, 's', c.stride, 0);
  out << "_";
  write_spatial(out, 'p', c.padding_lower, 0);
  if (p.kind != ProblemKind::kPooling) {
    out << "_";
    write_spatial(out, 'd', c.dilation, -1);
  }
  if (!p.name.empty()) out << "_n\"" << p.name << "\"";
  return out.str();
}

std::vector<ConvProblem> read_conv_batch(const std::string& path,
                                         ProblemKind kind) {
  std::ifstream in(path);
  require(in.is_open(), ErrorKind::kInvalidArgument, "cannot open ", path,
          " to read convolution descriptors");
  std::vector<ConvProblem> problems;
  std::string line;
  for (int line_number = 1; std::getline(in, line); ++line_number) {
    const std::string text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    try {
      problems.push_back(parse_conv_problem(text, kind));
    } catch (const Error& e) {
      throw Error(e.kind(),
                  internal::str(path, ":", line_number, ": ", message_of(e)));
    }
  }
  require(!in.bad(), ErrorKind::kInvalidArgument, "cannot read ", path);
  return problems;
}

}  // namespace distconv
