// Not API (namespace internal; a public header because the layers hold one):
// the pointer to a class's implementation (the pimpl idiom) with
// the library's moved-from rule: using an object after it was moved from
// throws kState naming it ("convolution used after it was moved from").
// The deleter is bound where Impl is complete, so the owning class needs
// no out-of-line destructor or moves.
//
//   class Pooling {                         // header: Impl incomplete
//     struct Impl;
//     internal::Pimpl<Impl> impl_;
//   };
//   impl_ = internal::Pimpl<Impl>::make("pooling", grid, desc);   // .cc
//   impl_->plan;                            // throws once moved from
#ifndef DISTCONV_PIMPL_H_
#define DISTCONV_PIMPL_H_

#include <memory>
#include <utility>

#include "distconv/error.h"

namespace distconv::internal {

template <typename Impl>
class Pimpl {
 public:
  Pimpl() = default;
  // A new Impl(args...) for an object called `what` in errors.
  template <typename... Args>
  static Pimpl make(const char* what, Args&&... args) {
    Pimpl p;
    p.what_ = what;
    p.ptr_ = Ptr(new Impl(std::forward<Args>(args)...),
                 [](Impl* i) { delete i; });
    return p;
  }
  // Moves leave the name behind too, for the moved-from object's error.
  Pimpl(Pimpl&& other) noexcept
      : what_(other.what_), ptr_(std::move(other.ptr_)) {}
  Pimpl& operator=(Pimpl&& other) noexcept {
    what_ = other.what_;
    ptr_ = std::move(other.ptr_);
    return *this;
  }

  Impl& operator*() const {
    require(ptr_ != nullptr, ErrorKind::kState, what_,
            " used after it was moved from");
    return *ptr_;
  }
  Impl* operator->() const { return &**this; }

 private:
  using Ptr = std::unique_ptr<Impl, void (*)(Impl*)>;
  const char* what_ = "object";
  Ptr ptr_{nullptr, nullptr};
};

}  // namespace distconv::internal

#endif  // DISTCONV_PIMPL_H_
