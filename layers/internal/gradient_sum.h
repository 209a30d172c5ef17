// GradientSum<T>: the non-blocking allreduce (sum) of a layer's parameter
// gradients (weights, then bias) over every rank of a communicator, so that
// it can travel while the layer computes its input gradient.
//
//   GradientSum<float> sum(grid.comm(), weights_size, bias_size);
//   sum.zero();
//   ... add local partial sums into sum.weights() and sum.bias() ...
//   sum.start(diff_weights, diff_bias);   // MPI_Iallreduce
//   sum.poke();                           // between kernels: progress
//   double waited = sum.wait();           // copies into diff_*
#ifndef DISTCONV_LAYERS_INTERNAL_GRADIENT_SUM_H_
#define DISTCONV_LAYERS_INTERNAL_GRADIENT_SUM_H_

#include <mpi.h>

#include <vector>

#include "distconv/shape.h"

namespace distconv::internal {

// Defined for float and double.
template <typename T>
class GradientSum {
 public:
  // Duplicates comm (collective). A bias size of 0 means no bias.
  GradientSum(MPI_Comm comm, Index weights_size, Index bias_size);
  ~GradientSum();  // completes an allreduce still in flight
  GradientSum(const GradientSum&) = delete;
  GradientSum& operator=(const GradientSum&) = delete;

  // Zeroes the local partial sums; throws kState while one is in flight
  // ("backward_weights called again before wait_gradients").
  void zero();
  T* weights() { return sums_.data(); }
  T* bias() { return bias_size_ > 0 ? sums_.data() + weights_size_ : nullptr; }

  // Starts summing over every rank; wait() writes the sums to diff_weights
  // and diff_bias (ignored without bias), which must stay valid until then
  // (either may be null where its size is 0).
  void start(T* diff_weights, T* diff_bias);
  void poke();    // lets MPI progress the allreduce (no-op when idle)
  double wait();  // seconds blocked; throws kState with nothing in flight

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  Index weights_size_, bias_size_;
  std::vector<T> sums_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  T* diff_weights_ = nullptr;
  T* diff_bias_ = nullptr;
  bool in_flight_ = false;  // between start() and wait()
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_GRADIENT_SUM_H_
