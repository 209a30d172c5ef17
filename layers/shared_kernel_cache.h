// share_kernel_cache: every rank's measured kernel choices (convolutions'
// and poolings') in every rank's cache (collective), so that one file
// written by one rank serves every rank of a later run, whatever pieces
// each rank then holds.
//
//   share_kernel_cache(grid.comm(), *cache);
//   if (grid.rank() == 0) cache->save("kernels.cache");
#ifndef DISTCONV_LAYERS_SHARED_KERNEL_CACHE_H_
#define DISTCONV_LAYERS_SHARED_KERNEL_CACHE_H_

#include <mpi.h>

#include "kernels/kernel_cache.h"

namespace distconv {

// Collective over `comm`: adds every rank's entries to every rank's cache
// (of two for one problem, the faster, as put() keeps).
void share_kernel_cache(MPI_Comm comm, KernelCache& cache);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_SHARED_KERNEL_CACHE_H_
