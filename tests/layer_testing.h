// Test helpers for the distributed layers: the grids every layer test runs
// on, and global inner products of distributed tensors (adjoint tests).
#ifndef DISTCONV_TESTS_LAYER_TESTING_H_
#define DISTCONV_TESTS_LAYER_TESTING_H_

#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/shape.h"

namespace distconv::testing {

// Every grid of all ranks over an ndims-dimensional tensor that keeps
// channels whole (samples and spatial splits, and their hybrids).
std::vector<Shape> grids_without_channel_split(int ndims);
// Every grid of all ranks that splits channels (alone or with samples and
// space); none on one rank.
std::vector<Shape> grids_with_channel_split(int ndims);
// A grid of all ranks splitting spatial dimensions only (the last such
// factorisation, so halos appear in every split dimension there is).
Shape spatial_grid(int ndims);
// A grid of all ranks splitting channels and, where the rank count allows,
// space too (the last such factorisation); all ones on one rank.
Shape channel_grid(int ndims);
// The squarest H x W grid of all ranks, for 2D tensors (4x4 on 16 ranks).
Shape squarest_hw_grid();

// The sum over every rank of the tensors' shard inner products (same
// layout), in double.
double global_dot(const DistTensor<double>& a, const DistTensor<double>& b);

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_LAYER_TESTING_H_
