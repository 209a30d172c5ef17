#include "halo/halo_options.h"

namespace distconv {

bool receives_in_flight(HaloTransport transport) {
  return transport == HaloTransport::kMpiDatatypes;
}

}  // namespace distconv
