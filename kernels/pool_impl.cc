#include "kernels/pool_impl.h"

#include <iterator>
#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/error.h"

namespace distconv {
namespace {

constexpr PoolImpl kAll[] = {PoolImpl::kSlabs, PoolImpl::kOneCall,
                             PoolImpl::kReference};

}  // namespace

const char* to_string(PoolImpl impl) {
  switch (impl) {
    case PoolImpl::kSlabs:
      return "slabs";
    case PoolImpl::kOneCall:
      return "one_call";
    case PoolImpl::kReference:
      return "reference";
  }
  return "?";
}

PoolImpl pool_impl_named(const std::string& name, const char* what) {
  for (PoolImpl impl : kAll) {
    if (name == to_string(impl)) return impl;
  }
  throw Error(
      ErrorKind::kInvalidArgument,
      std::string(what) + "=" + name + " is not slabs, one_call or reference");
}

std::vector<PoolImpl> pool_impl_list() {
  return {std::begin(kAll), std::end(kAll)};
}

template <typename T>
std::string pool_impl_excluded(PoolImpl impl) {
  if (impl == PoolImpl::kReference || std::is_same_v<Compute<T>, float>) {
    return "";
  }
  return std::string(to_string(impl)) + ": oneDNN pooling here is fp32 only";
}

#define DISTCONV_INSTANTIATE(T) \
  template std::string pool_impl_excluded<T>(PoolImpl);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

PoolImpl heuristic_pool_impl(const PoolDesc& desc) {
  return desc.kind == PoolKind::kMax ? PoolImpl::kSlabs : PoolImpl::kOneCall;
}

}  // namespace distconv
