#include "io/internal/checkpoint_record.h"

#include <cstdint>
#include <type_traits>
#include <variant>

#include "distconv/error.h"

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
