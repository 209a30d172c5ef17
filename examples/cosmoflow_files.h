// A CosmoFlow data set in the layout of the public files: a directory of
// HDF5 files (`*.hdf5` or `*.h5`, taken in name order), one sample each,
// holding
//   "full":    S x S x S x 4 (the volume, channels last; any integer or
//              floating-point type, 16-bit counts in the public files)
//   "unitPar": 4 (the sample's target parameters)
// The volume's first three axes are the tensor's D, H and W, its last the
// channels: sample n's x[n][c][d][h][w] = full[d][h][w][c].
//
//   CosmoflowFiles files(grid.comm(), "data/");
//   files.load(first, x, targets);  // samples [first, first + N) into the
//                                   // shards (N: x's global samples)
//
// Each rank reads only its shard's box of each file (a hyperslab: nothing
// else moves), converted to float by HDF5. Errors (an empty directory, a
// file without the datasets, a volume of another size) are the same
// distconv::Error on every rank.
#ifndef DISTCONV_EXAMPLES_COSMOFLOW_FILES_H_
#define DISTCONV_EXAMPLES_COSMOFLOW_FILES_H_

#include <mpi.h>

#include <string>
#include <vector>

#include "distconv/dist_tensor.h"

namespace distconv {
namespace examples {

class CosmoflowFiles {
 public:
  // Collective: rank 0 lists the directory, every rank gets the list.
  CosmoflowFiles(MPI_Comm comm, const std::string& dir);
  Index samples() const { return static_cast<Index>(paths_.size()); }
  // Collective over x's grid (targets' grid holds the same ranks): x is
  // N x 4 x S x S x S, targets N x 4 x 1 x 1 x 1.
  void load(Index first, DistTensor<float>& x,
            DistTensor<float>& targets) const;

 private:
  MPI_Comm comm_;
  std::vector<std::string> paths_;
};

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_COSMOFLOW_FILES_H_
