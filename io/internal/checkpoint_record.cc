#include "io/internal/checkpoint_record.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <variant>

#include "distconv/error.h"
#include "io/internal/file_hash.h"

namespace distconv::io::internal {
namespace {

constexpr char kDescriptionKey[] = "description";

template <typename T>
const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  if constexpr (std::is_same_v<T, double>) return "float64";
  if constexpr (std::is_same_v<T, bf16>) return "bfloat16";
  return "unknown";
}

template <typename T>
const char* type_name(const DistTensor<T>*) {
  return type_name<T>();
}

std::string tensor_kind(const char* type, const Shape& shape) {
  return std::string(type) + " tensor " + shape.to_string();
}

}  // namespace

std::string array_kind(const char* type, Index n) {
  return std::string(type) + " array of " + std::to_string(n);
}

CheckpointRecord record_of(const CheckpointState& state) {
  CheckpointRecord r;
  r.description = state.description();
  for (const CheckpointState::Entry& e : state.entries()) {
    r.entries[e.name] = std::visit(
        [](auto* target) -> std::string {
          using Target = std::remove_pointer_t<decltype(target)>;
          if constexpr (std::is_same_v<Target, std::int64_t>) {
            return "int64";
          } else if constexpr (std::is_same_v<Target, std::string>) {
            return "bytes";
          } else if constexpr (std::is_same_v<Target, std::vector<float>> ||
                               std::is_same_v<Target, std::vector<double>>) {
            return array_kind(type_name<typename Target::value_type>(),
                              static_cast<Index>(target->size()));
          } else {
            return tensor_kind(type_name(target), target->global_shape());
          }
        },
        e.target);
  }
  return r;
}

std::string manifest_text(const CheckpointRecord& record) {
  std::string text =
      std::string(kDescriptionKey) + "\t" + record.description + "\n";
  for (const auto& [name, kind] : record.entries) {
    text += name + "\t" + kind + "\n";
  }
  return text;
}

CheckpointRecord parse_manifest(const std::string& text,
                                const std::string& path) {
  CheckpointRecord r;
  std::size_t at = 0;
  bool first = true;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::size_t tab = text.find('\t', at);
    require(end != std::string::npos && tab != std::string::npos && tab < end,
            ErrorKind::kIo, path, "'s manifest is not one of name, tab and ",
            "kind per line");
    const std::string name = text.substr(at, tab - at);
    const std::string kind = text.substr(tab + 1, end - tab - 1);
    if (first) {
      require(name == kDescriptionKey, ErrorKind::kIo, path,
              "'s manifest does not start with its description");
      r.description = kind;
      first = false;
    } else {
      require(r.entries.emplace(name, kind).second, ErrorKind::kIo, path,
              "'s manifest lists entry '", name, "' twice");
    }
    at = end + 1;
  }
  require(!first, ErrorKind::kIo, path, "'s manifest is empty");
  return r;
}

CheckpointRecord record_of_datasets(const H5File& file) {
  CheckpointRecord r;
  r.described = false;
  for (const std::string& name : file.datasets()) {
    const Shape shape = file.shape(name);
    const ElementType type = file.type(name);
    std::string kind;
    if (shape.ndims() >= 2) {
      kind = tensor_kind(to_string(type), shape);
    } else if (shape.ndims() == 1 && type == ElementType::kUint8) {
      kind = "bytes";
    } else if (shape == Shape{1} && type == ElementType::kInt64) {
      kind = "int64";
    } else if (shape.ndims() == 1) {
      kind = array_kind(to_string(type), shape[0]);
    } else {
      kind = std::string(to_string(type)) + " of shape " + shape.to_string();
    }
    r.entries[name] = kind;
  }
  return r;
}

namespace {

constexpr char kHeaderFirstLine[] = "distconv checkpoint 2";

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

long long header_size(const CheckpointRecord& record) {
  // The lines before the record: at most 32 + 4 * 30 characters.
  const long long text =
      160 + static_cast<long long>(manifest_text(record).size());
  // (HDF5 wants a user block a multiple of H5File's 4 KiB alignment.)
  long long size = 4096;
  while (size < text) size *= 2;
  return size;
}

std::string encode_header(const CheckpointHeader& h) {
  const std::string manifest = manifest_text(h.record);
  std::string text =
      std::string(kHeaderFirstLine) + "\nstep " + std::to_string(h.step) +
      "\nheader " + std::to_string(h.header_bytes) + "\nbytes " +
      std::to_string(h.file_bytes) + "\ndata " + hex(h.data_hash) +
      "\nmanifest " + hex(bytes_hash(manifest)) + "\n\n" + manifest;
  require(static_cast<long long>(text.size()) < h.header_bytes,
          ErrorKind::kInvalidArgument, "a checkpoint header of ", text.size(),
          " bytes in ", h.header_bytes);
  text.resize(static_cast<std::size_t>(h.header_bytes), '\0');
  return text;
}

bool has_header(const std::string& head) {
  return head.compare(0, std::strlen(kHeaderFirstLine), kHeaderFirstLine) == 0;
}

bool is_bare_hdf5(const std::string& head) {
  static const char kSignature[] = "\x89HDF\r\n\x1a\n";
  return head.compare(0, sizeof kSignature - 1, kSignature) == 0;
}

long long header_bytes_of(const std::string& first, const std::string& path) {
  const std::size_t at = first.find("\nheader ");
  long long n = 0;
  if (at != std::string::npos) {
    for (std::size_t i = at + 8;
         i < first.size() && std::isdigit(static_cast<unsigned char>(first[i]));
         ++i) {
      n = n * 10 + (first[i] - '0');
      if (n > (1 << 24)) break;
    }
  }
  require(n >= 512 && n <= (1 << 24) && (n & (n - 1)) == 0, ErrorKind::kIo,
          path, " has a damaged header: no header size");
  return n;
}

CheckpointHeader parse_header(const std::string& head,
                              const std::string& path) {
  const auto damaged = [&](const std::string& why) {
    throw Error(ErrorKind::kIo, path + " has a damaged header: " + why);
  };
  const std::size_t end = head.find('\0');
  const std::string text = head.substr(0, end);
  // Nothing but zeros after the text: every byte of the header counts.
  if (end == std::string::npos ||
      head.find_first_not_of('\0', end) != std::string::npos) {
    damaged("bytes after its text");
  }
  const std::size_t blank = text.find("\n\n");
  if (!has_header(text) || blank == std::string::npos) {
    damaged("it is not a distconv checkpoint 2 header");
  }
  CheckpointHeader h;
  std::uint64_t manifest_hash = 0;
  // The lines "key value" after the first, in this order.
  std::size_t at = std::strlen(kHeaderFirstLine) + 1;
  const auto value = [&](const char* key) {
    const std::size_t eol = text.find('\n', at);
    const std::string line = text.substr(at, eol - at);
    const std::string prefix = std::string(key) + " ";
    if (eol == std::string::npos || eol > blank ||
        line.compare(0, prefix.size(), prefix) != 0 ||
        line.size() == prefix.size() || line.size() > prefix.size() + 20) {
      damaged(std::string("no ") + key + " line");
    }
    at = eol + 1;
    return line.substr(prefix.size());
  };
  const auto number = [&](const char* key, int base) {
    const std::string v = value(key);
    for (char c : v) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) ||
          (base == 10 && !std::isdigit(static_cast<unsigned char>(c)))) {
        damaged(std::string("its ") + key + " is not a number");
      }
    }
    return std::stoull(v, nullptr, base);
  };
  h.step = static_cast<std::int64_t>(number("step", 10));
  h.header_bytes = static_cast<long long>(number("header", 10));
  h.file_bytes = static_cast<long long>(number("bytes", 10));
  h.data_hash = number("data", 16);
  manifest_hash = number("manifest", 16);
  if (at != blank + 1) damaged("more lines than it should have");
  const std::string manifest = text.substr(blank + 2);
  if (bytes_hash(manifest) != manifest_hash) {
    damaged("its manifest does not match its checksum");
  }
  if (h.header_bytes != static_cast<long long>(head.size()) ||
      h.file_bytes < h.header_bytes) {
    damaged("its sizes disagree");
  }
  h.record = parse_manifest(manifest, path);
  return h;
}

std::vector<std::string> differences(const CheckpointRecord& file,
                                     const CheckpointRecord& run) {
  std::vector<std::string> out;
  if (file.described && file.description != run.description) {
    out.push_back("written for '" + file.description + "', this run is '" +
                  run.description + "'");
  }
  // Entries of other kinds first, then those only here, then those only
  // there.
  for (const auto& [name, kind] : file.entries) {
    const auto mine = run.entries.find(name);
    if (mine != run.entries.end() && mine->second != kind) {
      out.push_back("entry '" + name + "': " + kind + " there, " +
                    mine->second + " here");
    }
  }
  for (const auto& [name, kind] : run.entries) {
    if (file.entries.count(name) == 0) {
      out.push_back("entry '" + name + "': " + kind +
                    " here, not in the checkpoint");
    }
  }
  for (const auto& [name, kind] : file.entries) {
    if (run.entries.count(name) == 0) {
      out.push_back("entry '" + name + "': " + kind +
                    " there, not in this run");
    }
  }
  return out;
}

}  // namespace distconv::io::internal
