#include "layers/conv_options.h"

namespace distconv {

const char* to_string(ChannelParallelism scheme) {
  switch (scheme) {
    case ChannelParallelism::kStationaryOutput: return "stationary_output";
    case ChannelParallelism::kStationaryInput: return "stationary_input";
    case ChannelParallelism::kStationaryWeights: return "stationary_weights";
  }
  return "?";
}

}  // namespace distconv
