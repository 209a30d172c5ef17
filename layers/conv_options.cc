#include "layers/conv_options.h"

#include "distconv/error.h"

namespace distconv {

const char* to_string(ChannelParallelism scheme) {
  switch (scheme) {
    case ChannelParallelism::kStationaryOutput: return "stationary_output";
    case ChannelParallelism::kStationaryInput: return "stationary_input";
    case ChannelParallelism::kStationaryWeights: return "stationary_weights";
  }
  return "?";
}

ChannelParallelism channel_parallelism_named(const std::string& name,
                                             const char* what) {
  for (ChannelParallelism c : {ChannelParallelism::kStationaryOutput,
                               ChannelParallelism::kStationaryInput,
                               ChannelParallelism::kStationaryWeights}) {
    if (name == to_string(c)) return c;
  }
  throw Error(ErrorKind::kInvalidArgument,
              std::string(what) + "=" + name +
                  " is not stationary_output, stationary_input or "
                  "stationary_weights");
}

}  // namespace distconv
