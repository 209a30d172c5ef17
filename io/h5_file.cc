#include "io/h5_file.h"

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/pimpl.h"
#include "io/internal/cache_window.h"
#include "io/internal/h5_file_state.h"
#include "io/internal/h5_transfer.h"
#include "io/internal/h5_util.h"
#include "io/internal/mpi_io.h"

namespace distconv::io {

using internal::check_h5;
using internal::checked;
using internal::Hid;
using internal::QuietErrors;
using internal::transfer;
using internal::dims_of;
using internal::Direction;
using internal::select;
using internal::ShardMemory;
using internal::simple_space;

namespace {

// Throws Error(kIo) unless the stored type reads as `want`.
void check_type(hid_t stored, ElementType want, const std::string& name) {
  ElementType type = want;
  std::string what;
  const bool known = internal::element_type_of(stored, &type, &what);
  if (!known || type != want) {
    throw Error(ErrorKind::kIo, name + " holds " +
                                    (known ? to_string(type) : what) +
                                    ", not " + to_string(want));
  }
}

const char* order_name(int ndims) {
  return ndims == 5 ? "NCDHW" : ndims == 4 ? "NCHW" : "C-order";
}

// Throws Error(kIo) when a dataset's "distconv_order" attribute says it is
// stored otherwise than N, C, [D,] H, W (a dataset without it, another
// tool's, is taken as written in that order).
void check_order(hid_t dset, int ndims, const std::string& name) {
  QuietErrors quiet;
  if (H5Aexists(dset, "distconv_order") <= 0) return;
  const std::string what = "cannot read the distconv_order of " + name;
  const Hid a = checked(H5Aopen(dset, "distconv_order", H5P_DEFAULT), H5Aclose,
                        what);
  const Hid type = checked(H5Aget_type(a.get()), H5Tclose, what);
  const Hid space = checked(H5Aget_space(a.get()), H5Sclose, what);
  require(H5Tget_class(type.get()) == H5T_STRING &&
              H5Tis_variable_str(type.get()) == 0 &&
              H5Sget_simple_extent_npoints(space.get()) == 1,
          ErrorKind::kIo, name,
          "'s distconv_order is not a string (distconv writes \"",
          order_name(ndims), "\")");
  std::string value(H5Tget_size(type.get()), '\0');
  check_h5(H5Aread(a.get(), type.get(), value.data()), what);
  value.resize(value.find('\0') == std::string::npos ? value.size()
                                                     : value.find('\0'));
  require(value == order_name(ndims), ErrorKind::kIo, name, " is stored ",
          value, " (its distconv_order), not ", order_name(ndims));
}

}  // namespace

H5File::H5File(MPI_Comm comm, const std::string& path, H5Mode mode,
               const H5FileOptions& options)
    : state_(distconv::internal::Pimpl<State>::make("H5File")) {
  state_->comm = comm;
  state_->path = path;
  state_->mode = mode;
  state_->user_block = static_cast<long long>(options.user_block);
  distconv::internal::check_mpi(MPI_Comm_rank(comm, &state_->rank),
                                "MPI_Comm_rank");
  state_->open_file();
}

void H5File::close() { state_->close(); }

const std::string& H5File::path() const { return state_->path; }

bool H5File::contains(const std::string& dataset) const {
  QuietErrors quiet;
  return H5Lexists(state_->file.get(), dataset.c_str(), H5P_DEFAULT) > 0;
}

Shape H5File::shape(const std::string& dataset) const {
  Shape s;
  state_->agree([&] {
    const Hid dset = state_->open(dataset);
    s = dims_of(state_->space_of(dset, dataset).get());
  });
  return s;
}

ElementType H5File::type(const std::string& dataset) const {
  ElementType t = ElementType::kFloat32;
  state_->agree([&] {
    const Hid dset = state_->open(dataset);
    const Hid stored =
        checked(H5Dget_type(dset.get()), H5Tclose,
                "cannot read the type of " + state_->name(dataset));
    std::string what;
    require(internal::element_type_of(stored.get(), &t, &what), ErrorKind::kIo,
            state_->name(dataset), " holds ", what,
            ", which distconv does not read");
  });
  return t;
}

std::vector<std::string> H5File::datasets() const {
  std::vector<std::string> names;
  state_->agree([&] {
    const auto add = [](hid_t, const char* name, const H5L_info_t*,
                        void* out) -> herr_t {
      static_cast<std::vector<std::string>*>(out)->push_back(name);
      return 0;
    };
    check_h5(H5Literate(state_->file.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
                        add, &names),
             "cannot list the datasets of " + state_->path);
  });
  std::sort(names.begin(), names.end());
  return names;
}

template <typename T>
void H5File::write(const std::string& dataset, const DistTensor<T>& tensor,
                   const H5DatasetOptions& options) {
  State& s = *state_;
  const Shape global = tensor.global_shape();
  require(options.chunk.ndims() == 0 || options.chunk.ndims() == global.ndims(),
          ErrorKind::kInvalidArgument, "chunk ", options.chunk, " for ",
          s.name(dataset), " of ", global.ndims(), " dimensions");
  const std::string what = "cannot write " + s.name(dataset);
  const long long name_bytes = static_cast<long long>(dataset.size());
  s.before_object(name_bytes,
                  internal::storage_bytes(global, sizeof(T), options.chunk),
                  what);
  Hid dset;
  s.agree([&] {
    if (H5Lexists(s.file.get(), dataset.c_str(), H5P_DEFAULT) > 0) {
      dset = s.open(dataset);
      const Shape have = dims_of(s.space_of(dset, dataset).get());
      require(have == global, ErrorKind::kIo, s.name(dataset), " has shape ",
              have, ", not ", global);
      return;
    }
    const Hid space = simple_space(global);
    const Hid dcpl = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose,
                             "cannot make a dataset property list");
    if (options.chunk.ndims() > 0) {
      hsize_t chunk[kMaxDims];
      for (int d = 0; d < global.ndims(); ++d) {
        chunk[d] = static_cast<hsize_t>(
            std::max<Index>(1, std::min(options.chunk[d], global[d])));
      }
      check_h5(H5Pset_chunk(dcpl.get(), global.ndims(), chunk),
               "cannot chunk " + s.name(dataset));
    }
    const Hid type = internal::h5_memory_type(element_type<T>());
    dset = checked(
        H5Dcreate2(s.file.get(), dataset.c_str(), type.get(), space.get(),
                   H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
        H5Dclose, "cannot create " + s.name(dataset));
  });
  s.after_object(name_bytes, dset.get(), what);
  ShardMemory<T> memory(tensor, /*fill=*/true);
  const bool runs = internal::all_long_runs(
      s.comm, global, tensor.shard(), internal::kLongRunBytes / sizeof(T));
  internal::CacheWindow window(s.written, options.page_cache);
  s.agree([&] {
    internal::move_shard(dset.get(), tensor.shard(), memory, runs,
                         Direction::kWrite, window,
                         "cannot write " + s.name(dataset));
    check_h5(dset.reset(), "cannot write " + s.name(dataset));
  });
  set_attribute(dataset, "distconv_order", order_name(global.ndims()));
}

template <typename T>
void H5File::read(const std::string& dataset, DistTensor<T>& tensor,
                  const H5ReadOptions& options) const {
  const State& s = *state_;
  const Shape global = tensor.global_shape();
  const Shape offset = options.offset.ndims() == 0
                           ? Shape::filled(global.ndims(), 0)
                           : options.offset;
  require(offset.ndims() == global.ndims(), ErrorKind::kInvalidArgument,
          "offset ", offset, " for a tensor of ", global.ndims(),
          " dimensions");
  ShardMemory<T> memory(tensor, /*fill=*/false);
  // (a window of a larger dataset goes in one collective transfer)
  const bool runs =
      options.offset.ndims() == 0 &&
      internal::all_long_runs(s.comm, global, tensor.shard(),
                              internal::kLongRunBytes / sizeof(T));
  internal::CacheWindow window(s.path, options.page_cache);
  s.agree([&] {
    const Hid dset = s.open(dataset);
    const Hid file_space = s.space_of(dset, dataset);
    const Shape have = dims_of(file_space.get());
    const ElementType want = element_type<T>();
    const int n = global.ndims();
    switch (options.window) {
      case H5Window::kWhole:
        require(have == global && offset == Shape::filled(n, 0),
                ErrorKind::kIo, s.name(dataset), " has shape ", have, ", not ",
                global, have == global ? " at offset " + offset.to_string()
                                       : std::string());
        break;
      case H5Window::kSamples: {
        bool rest = have.ndims() == n;
        for (int d = 1; rest && d < n; ++d) rest = have[d] == global[d];
        require(rest, ErrorKind::kIo, s.name(dataset), " has shape ", have,
                ": a batch of ", global,
                " needs every extent but the samples' to be the tensor's");
        for (int d = 1; d < n; ++d) {
          require(offset[d] == 0, ErrorKind::kInvalidArgument, "offset ",
                  offset, " of a batch of samples: only the first is not 0");
        }
        [[fallthrough]];
      }
      case H5Window::kBox:
        require(have.ndims() == n &&
                    within(offset + global - Shape::filled(n, 1), have) &&
                    within(offset, have),
                ErrorKind::kIo, s.name(dataset), " of shape ", have,
                " does not hold a ", global, " window at ", offset);
        break;
    }
    check_order(dset.get(), n, s.name(dataset));
    const Hid stored = checked(H5Dget_type(dset.get()), H5Tclose,
                               "cannot read the type of " + s.name(dataset));
    check_type(stored.get(), want, s.name(dataset));
    internal::move_shard(dset.get(), tensor.shard().shifted(offset), memory,
                         runs, Direction::kRead, window,
                         "cannot read " + s.name(dataset));
  });
  memory.unpack(tensor);
}

template <typename T>
std::vector<T> H5File::read_box(const std::string& dataset,
                                const Box& box) const {
  if constexpr (std::is_same_v<T, bf16>) {
    // Read as float (exact from bfloat16) and rounded to nearest even here:
    // HDF5's own conversion rounds ties away from zero.
    const std::vector<float> wide = read_box<float>(dataset, box);
    std::vector<bf16> values(wide.size());
    convert(wide.data(), wide.size(), values.data());
    return values;
  }
  const State& s = *state_;
  std::vector<T> values(static_cast<std::size_t>(box.volume()));
  Hid dset;
  // Boxes differ between ranks: every rank's is checked before any moves.
  s.agree([&] {
    dset = s.open(dataset);
    const Shape have = dims_of(s.space_of(dset, dataset).get());
    require(box.ndims() == have.ndims() &&
                (box.empty() ||
                 (within(box.lower, have) &&
                  within(box.lower + box.extent -
                             Shape::filled(have.ndims(), 1),
                         have))),
            ErrorKind::kIo, s.name(dataset), " of shape ", have,
            " does not hold the box ", box.extent, " at ", box.lower);
    const Hid stored = checked(H5Dget_type(dset.get()), H5Tclose,
                               "cannot read the type of " + s.name(dataset));
    const H5T_class_t kind = H5Tget_class(stored.get());
    require(kind == H5T_INTEGER || kind == H5T_FLOAT, ErrorKind::kIo,
            s.name(dataset), " holds neither integers nor floating point");
  });
  s.agree([&] {
    T dummy{};
    const Hid collective = transfer(H5FD_MPIO_COLLECTIVE);
    internal::move_box(dset.get(), s.space_of(dset, dataset).get(), box,
                       box.extent,
                       Box{Shape::filled(box.ndims(), 0), box.extent},
                       values.empty() ? &dummy : values.data(),
                       collective.get(), Direction::kRead,
                       "cannot read " + s.name(dataset));
  });
  return values;
}

template <typename T>
void H5File::write(const std::string& dataset, const Shape& shape,
                   const T* data) {
  State& s = *state_;
  const bool mine = s.rank == 0 && shape.volume() > 0;
  s.agree([&] {
    require(!mine || data != nullptr, ErrorKind::kInvalidArgument,
            "no data for ", s.name(dataset));
  });
  const std::string what = "cannot write " + s.name(dataset);
  const long long name_bytes = static_cast<long long>(dataset.size());
  s.before_object(name_bytes,
                  internal::storage_bytes(shape, sizeof(T), Shape()), what);
  Hid dset;
  s.agree([&] {
    if (H5Lexists(s.file.get(), dataset.c_str(), H5P_DEFAULT) > 0) {
      dset = s.open(dataset);
      const Shape have = dims_of(s.space_of(dset, dataset).get());
      require(have == shape, ErrorKind::kIo, s.name(dataset), " has shape ",
              have, ", not ", shape);
      return;
    }
    const Hid type = internal::h5_memory_type(element_type<T>());
    dset = checked(H5Dcreate2(s.file.get(), dataset.c_str(), type.get(),
                              simple_space(shape).get(), H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT),
                   H5Dclose, "cannot create " + s.name(dataset));
  });
  s.after_object(name_bytes, dset.get(), what);
  s.agree([&] {
    const Box all{Shape::filled(shape.ndims(), 0), shape};
    const Box none{Shape::filled(shape.ndims(), 0),
                   Shape::filled(shape.ndims(), 0)};
    const Hid space = simple_space(shape);
    const Hid file_space = s.space_of(dset, dataset);
    select(file_space.get(), mine ? all : none);
    select(space.get(), mine ? all : none);
    const T dummy{};
    const Hid collective = transfer(H5FD_MPIO_COLLECTIVE);
    const Hid type = internal::h5_memory_type(element_type<T>());
    check_h5(H5Dwrite(dset.get(), type.get(), space.get(), file_space.get(),
                      collective.get(), mine ? data : &dummy),
             "cannot write " + s.name(dataset));
    check_h5(dset.reset(), "cannot write " + s.name(dataset));
  });
}

template <typename T>
std::vector<T> H5File::read_array(const std::string& dataset) const {
  const State& s = *state_;
  std::vector<T> values;
  s.agree([&] {
    const Hid dset = s.open(dataset);
    const Hid file_space = s.space_of(dset, dataset);
    const Shape shape = dims_of(file_space.get());
    const Hid stored = checked(H5Dget_type(dset.get()), H5Tclose,
                               "cannot read the type of " + s.name(dataset));
    check_type(stored.get(), element_type<T>(), s.name(dataset));
    s.check_fits(dset.get(), stored.get(), shape, s.name(dataset));
    values.resize(static_cast<std::size_t>(shape.volume()));
    T dummy{};
    const Hid collective = transfer(H5FD_MPIO_COLLECTIVE);
    const Hid type = internal::h5_memory_type(element_type<T>());
    check_h5(H5Dread(dset.get(), type.get(), H5S_ALL, H5S_ALL,
                     collective.get(), values.empty() ? &dummy : values.data()),
             "cannot read " + s.name(dataset));
  });
  return values;
}

namespace {

// Opens `key` of `object`, replacing any attribute of that name by one of
// `type` and `space` when `create`.
Hid attribute(hid_t file, const std::string& object, const std::string& key,
              hid_t type, hid_t space, const std::string& what) {
  if (H5Aexists_by_name(file, object.c_str(), key.c_str(), H5P_DEFAULT) > 0) {
    check_h5(H5Adelete_by_name(file, object.c_str(), key.c_str(), H5P_DEFAULT),
             what);
  }
  return checked(
      H5Acreate_by_name(file, object.c_str(), key.c_str(), type, space,
                        H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose, what);
}

std::string attribute_name(const std::string& object, const std::string& key,
                           const std::string& path) {
  return "attribute '" + key + "' of '" + object + "' in " + path;
}

}  // namespace

void H5File::set_attribute(const std::string& object, const std::string& key,
                           std::int64_t value) {
  State& s = *state_;
  const std::string what =
      "cannot write " + attribute_name(object, key, s.path);
  const long long bytes = static_cast<long long>(key.size()) + 8;
  s.before_object(bytes, 0, what);
  s.agree([&] {
    const Hid space = simple_space(Shape{});
    const Hid a = attribute(s.file.get(), object, key, H5T_NATIVE_INT64,
                            space.get(), what);
    check_h5(H5Awrite(a.get(), H5T_NATIVE_INT64, &value), what);
  });
  s.after_object(bytes, -1, what);
}

void H5File::set_attribute(const std::string& object, const std::string& key,
                           const std::string& value) {
  State& s = *state_;
  const std::string what =
      "cannot write " + attribute_name(object, key, s.path);
  const long long bytes = static_cast<long long>(key.size() + value.size());
  s.before_object(bytes, 0, what);
  s.agree([&] {
    const Hid type = checked(H5Tcopy(H5T_C_S1), H5Tclose, what);
    check_h5(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())),
             what);
    const Hid space = simple_space(Shape{});
    const Hid a =
        attribute(s.file.get(), object, key, type.get(), space.get(), what);
    std::string padded = value;
    padded.resize(std::max<std::size_t>(1, value.size()), '\0');
    check_h5(H5Awrite(a.get(), type.get(), padded.data()), what);
  });
  s.after_object(bytes, -1, what);
}

std::int64_t H5File::int_attribute(const std::string& object,
                                   const std::string& key) const {
  const State& s = *state_;
  const std::string what = "cannot read " + attribute_name(object, key, s.path);
  std::int64_t value = 0;
  s.agree([&] {
    const Hid a =
        checked(H5Aopen_by_name(s.file.get(), object.c_str(), key.c_str(),
                                H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose, what);
    check_h5(H5Aread(a.get(), H5T_NATIVE_INT64, &value), what);
  });
  return value;
}

std::string H5File::string_attribute(const std::string& object,
                                     const std::string& key) const {
  const State& s = *state_;
  const std::string what = "cannot read " + attribute_name(object, key, s.path);
  std::string value;
  s.agree([&] {
    const Hid a =
        checked(H5Aopen_by_name(s.file.get(), object.c_str(), key.c_str(),
                                H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose, what);
    const Hid type = checked(H5Aget_type(a.get()), H5Tclose, what);
    require(H5Tget_class(type.get()) == H5T_STRING &&
                H5Tis_variable_str(type.get()) == 0,
            ErrorKind::kIo, attribute_name(object, key, s.path),
            " is not a fixed-length string");
    // (no more than the file holds: a damaged file can say anything)
    require(H5Tget_size(type.get()) <= s.file_bytes(), ErrorKind::kIo,
            attribute_name(object, key, s.path), " says it holds ",
            H5Tget_size(type.get()), " bytes, more than the file");
    value.resize(H5Tget_size(type.get()));
    check_h5(H5Aread(a.get(), type.get(), value.data()), what);
    value.resize(value.find('\0') == std::string::npos ? value.size()
                                                       : value.find('\0'));
  });
  return value;
}

#define DISTCONV_IO_H5(T)                                                     \
  template void H5File::write<T>(const std::string&, const DistTensor<T>&,    \
                                 const H5DatasetOptions&);                    \
  template void H5File::read<T>(const std::string&, DistTensor<T>&,           \
                                const H5ReadOptions&) const;                  \
  template void H5File::write<T>(const std::string&, const Shape&, const T*); \
  template std::vector<T> H5File::read_array<T>(const std::string&) const;   \
  template std::vector<T> H5File::read_box<T>(const std::string&, const Box&) \
      const;
DISTCONV_IO_H5(float)
DISTCONV_IO_H5(double)
DISTCONV_IO_H5(std::int64_t)
DISTCONV_IO_H5(std::uint8_t)
DISTCONV_IO_H5(bf16)
#undef DISTCONV_IO_H5

}  // namespace distconv::io
