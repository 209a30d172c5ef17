// Box: a half-open axis-aligned box [lower, lower + extent) of a tensor's
// index space. Shards, local buffers, interiors, halo slabs and halo messages
// are all boxes, in global or in local (buffer) coordinates.
//
//   Box shard{{0, 0, 256, 0}, {8, 64, 256, 512}};   // rows 256..511 of H
//   Box halo = shard.expanded(/*lower=*/{0, 0, 1, 0}, /*upper=*/{0, 0, 1, 0});
//   intersect(halo, other_shard);                   // what `other` sends us
#ifndef DISTCONV_BOX_H_
#define DISTCONV_BOX_H_

#include <ostream>
#include <vector>

#include "distconv/shape.h"

namespace distconv {

struct Box {
  Shape lower;
  Shape extent;

  int ndims() const { return lower.ndims(); }
  Shape upper() const { return lower + extent; }  // exclusive
  Index volume() const { return extent.volume(); }
  bool empty() const { return volume() == 0; }
  bool contains(const Shape& point) const;
  bool contains(const Box& inner) const;  // an empty inner box is contained
  Box shifted(const Shape& offset) const { return {lower + offset, extent}; }
  // Grows the box by `below` before and `above` after it in each dimension.
  Box expanded(const Shape& below, const Shape& above) const;

  friend bool operator==(const Box& a, const Box& b) {
    return a.lower == b.lower && a.extent == b.extent;
  }
  friend bool operator!=(const Box& a, const Box& b) { return !(a == b); }
};

std::ostream& operator<<(std::ostream& out, const Box& b);

// The common part of two boxes; its extent is zero in some dimension when
// they do not overlap (and its lower corner is then meaningless).
Box intersect(const Box& a, const Box& b);

// The cells of `a` outside `b`, as at most 2 * ndims disjoint non-empty
// boxes (slabs below and above b in each dimension in turn).
std::vector<Box> subtract(const Box& a, const Box& b);

// The cells of every box of `boxes`, as disjoint non-empty boxes (each
// cell in exactly one): for loops that must visit a cell once, such as
// adding a region of one buffer into another.
std::vector<Box> disjoint_union(const std::vector<Box>& boxes);

}  // namespace distconv

#endif  // DISTCONV_BOX_H_
