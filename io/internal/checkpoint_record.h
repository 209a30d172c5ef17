// Internal: what a checkpoint belongs to, recorded in it and compared
// before a load reads anything (io/checkpoint.h). A record is the state's
// description (a network's, say) and each entry's name and kind:
//
//   description	segmentation: 2 x 18 x 64 x 64 input, width 16, 3
//   classes field	float32 tensor 2x3x5x4x7 momentum	float64 array of
//   6 rng	bytes step	int64 w	float32 array of 10
//
// (name, a tab, its kind; entries sorted by name). A checkpoint holds it
// as the attribute "manifest" of its root, with the text's checksum
// beside it ("manifest_checksum"). Checkpoints of the first format have
// none: their record is made from their datasets' names, shapes and types,
// without a description.
#ifndef DISTCONV_IO_INTERNAL_CHECKPOINT_RECORD_H_
#define DISTCONV_IO_INTERNAL_CHECKPOINT_RECORD_H_

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
