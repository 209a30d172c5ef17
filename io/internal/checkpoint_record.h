// Internal: what a checkpoint belongs to, recorded in it and compared
// before a load reads anything (io/checkpoint.h). A record is the state's
// description (a network's, say) and each entry's name and kind:
//
//   description	segmentation: 2 x 18 x 64 x 64 input, width 16, 3
//   classes field	float32 tensor 2x3x5x4x7 momentum	float64 array of
//   6 rng	bytes step	int64 w	float32 array of 10
//
// (name, a tab, its kind; entries sorted by name).
//
// A checkpoint holds it in its header, the file's first bytes (HDF5's
// user block, which HDF5 leaves to its caller), beside what the file
// must be, as plain text:
//
//   distconv checkpoint 2
//   step 12
//   header 4096                 (the header's bytes: the user block)
//   bytes 227688                (the file's size)
//   data 5f0c...                (file_hash of the bytes after the header)
//   manifest 91ab...            (bytes_hash of the record's text)
//
//   description<TAB>...         (the record, as above)
//
// padded with zeros. The header is read, and the rest of the file checked
// against its hash, before HDF5 reads any byte of it: a damaged
// checkpoint is found without parsing it. Checkpoints of the first
// format have no header: their record is made from their datasets'
// names, shapes and types, without a description.
#ifndef DISTCONV_IO_INTERNAL_CHECKPOINT_RECORD_H_
#define DISTCONV_IO_INTERNAL_CHECKPOINT_RECORD_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "io/h5_file.h"

namespace distconv::io::internal {

struct CheckpointRecord {
  bool described = true;  // false: a first-format checkpoint's
  std::string description;
  std::map<std::string, std::string> entries;  // name -> kind
};

// The record of what `state` holds now.
CheckpointRecord record_of(const CheckpointState& state);
// The record as the manifest's text, and back (Error(kIo) naming `path`
// where the text is not a manifest).
std::string manifest_text(const CheckpointRecord& record);
CheckpointRecord parse_manifest(const std::string& text,
                                const std::string& path);
// A first-format checkpoint's record, from its datasets (collective).
CheckpointRecord record_of_datasets(const H5File& file);

struct CheckpointHeader {
  std::int64_t step = 0;
  long long header_bytes = 0;  // a power of 2 from 4096
  long long file_bytes = 0;
  std::uint64_t data_hash = 0;
  CheckpointRecord record;
};
// The header's size for `record`: the smallest power of 2 from 4096 (a
// multiple of H5File's alignment, as HDF5 wants) that holds its text.
long long header_size(const CheckpointRecord& record);
// The header's text, padded with zeros to h.header_bytes.
std::string encode_header(const CheckpointHeader& h);
// Whether `head` (a file's first bytes) starts as a checkpoint with a
// header does, rather than as an HDF5 file (the first format).
bool has_header(const std::string& head);
// Whether `head` (a file's first bytes) starts with HDF5's signature, as a
// file of the first format (a bare HDF5 file, no header) does.
bool is_bare_hdf5(const std::string& head);
// The header's size its first 512 bytes say (a power of 2 from 512 to
// 16 MiB); Error(kIo) naming `path` when they say none.
long long header_bytes_of(const std::string& first, const std::string& path);
// The header `head` holds; Error(kIo) naming `path` when it is damaged.
CheckpointHeader parse_header(const std::string& head, const std::string& path);

// How `file`'s record differs from `run`'s, one item per difference
// (empty: none): "written for 'A', this run is 'B'", "entry 'w': float32
// array of 10 there, float32 array of 12 here", "entry 'x': int64 here,
// not in the checkpoint". A first-format record's missing description is
// no difference.
std::vector<std::string> differences(const CheckpointRecord& file,
                                     const CheckpointRecord& run);

// The kind of a dataset (1-D arrays of `type`, ...), as record_of writes
// it, for checking that a dataset is what its manifest says.
std::string array_kind(const char* type, Index n);

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_CHECKPOINT_RECORD_H_
