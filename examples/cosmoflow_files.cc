#include "examples/cosmoflow_files.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "distconv/error.h"
#include "io/h5_file.h"

namespace distconv {
namespace examples {
namespace {

constexpr Index kChannels = 4;

// Rank 0's `text` (or its error: `failed`) on every rank; an error is
// thrown on every rank.
std::string broadcast(MPI_Comm comm, std::string text, bool failed) {
  long long head[2] = {static_cast<long long>(text.size()), failed ? 1 : 0};
  MPI_Bcast(head, 2, MPI_LONG_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(head[0]));
  MPI_Bcast(text.data(), static_cast<int>(head[0]), MPI_CHAR, 0, comm);
  if (head[1]) throw Error(ErrorKind::kIo, text);
  return text;
}

// The data files of `dir`, sorted, joined by newlines.
std::string list_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".hdf5" || ext == ".h5")) {
      paths.push_back(entry.path().string());
    }
  }
  require(!error, ErrorKind::kIo, "cannot list ", dir, ": ", error.message());
  require(!paths.empty(), ErrorKind::kIo, dir, " holds no .hdf5 or .h5 files");
  std::sort(paths.begin(), paths.end());
  std::string joined;
  for (const std::string& p : paths) joined += p + '\n';
  return joined;
}

}  // namespace

CosmoflowFiles::CosmoflowFiles(MPI_Comm comm, const std::string& dir)
    : comm_(comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  bool failed = false;
  if (rank == 0) {
    try {
      text = list_files(dir);
    } catch (const Error& e) {
      text = e.what();
      failed = true;
    }
  }
  text = broadcast(comm, std::move(text), failed);
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    paths_.push_back(text.substr(at, end - at));
    at = end + 1;
  }
}

void CosmoflowFiles::load(Index first, DistTensor<float>& x,
                          DistTensor<float>& targets) const {
  const Shape global = x.global_shape();
  const Box shard = x.shard();
  const Index batch = global[0], size = global[2];
  require(global.ndims() == 5 && global[1] == kChannels && global[3] == size &&
              global[4] == size,
          ErrorKind::kInvalidArgument, "a CosmoFlow batch is N x 4 x S x S x ",
          "S, not ", global);
  require(first >= 0 && first + batch <= samples(), ErrorKind::kInvalidArgument,
          "samples ", first, " to ", first + batch, " of ", samples());
  // This rank's box of each of its samples' volumes: D, H, W, C.
  const Box box{
      Shape{shard.lower[2], shard.lower[3], shard.lower[4], shard.lower[1]},
      Shape{shard.extent[2], shard.extent[3], shard.extent[4],
            shard.extent[1]}};
  const Box none{Shape{0, 0, 0, 0}, Shape{0, 0, 0, 0}};
  std::vector<std::vector<float>> volumes(static_cast<std::size_t>(batch));
  std::vector<std::vector<float>> params(static_cast<std::size_t>(batch));
  for (Index n = 0; n < batch; ++n) {
    const std::string& path = paths_[static_cast<std::size_t>(first + n)];
    io::H5File file(comm_, path, io::H5Mode::kRead);
    const Shape stored = file.shape("full");
    require(stored == (Shape{size, size, size, kChannels}), ErrorKind::kIo,
            path, ": \"full\" is ", stored, ", not ",
            Shape{size, size, size, kChannels});
    const bool mine = !shard.empty() && n >= shard.lower[0] &&
                      n < shard.lower[0] + shard.extent[0];
    volumes[static_cast<std::size_t>(n)] =
        file.read_box<float>("full", mine ? box : none);
    params[static_cast<std::size_t>(n)] = file.read_array<float>("unitPar");
    require(params[static_cast<std::size_t>(n)].size() ==
                static_cast<std::size_t>(kChannels),
            ErrorKind::kIo, path, ": \"unitPar\" holds ",
            params[static_cast<std::size_t>(n)].size(), " values, not 4");
  }
  const Shape lower = shard.lower;
  const Shape e = box.extent;  // D, H, W, C of this rank's box
  x.interior().for_each([&](const Shape& i, float& v) {
    const std::vector<float>& volume =
        volumes[static_cast<std::size_t>(i[0] + lower[0])];
    v = volume[static_cast<std::size_t>(
        ((i[2] * e[1] + i[3]) * e[2] + i[4]) * e[3] + i[1])];
  });
  const Shape t_lower = targets.shard().lower;
  targets.interior().for_each([&](const Shape& i, float& v) {
    v = params[static_cast<std::size_t>(i[0] + t_lower[0])]
              [static_cast<std::size_t>(i[1] + t_lower[1])];
  });
}

}  // namespace examples
}  // namespace distconv
