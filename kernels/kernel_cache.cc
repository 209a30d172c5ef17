#include "kernels/kernel_cache.h"

#include <cstdio>
#include <dnnl.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "distconv/error.h"
#include "kernels/gpu_algo_cache.h"

namespace distconv {
namespace {

constexpr const char* kMagic = "distconv kernel cache 2";
// What earlier versions wrote first (convolution choices only).
constexpr const char* kOlderMagic = "distconv conv-impl cache";

// The instruction-set flags that change which kernels oneDNN has.
bool counts(const std::string& flag) {
  for (const char* prefix : {"avx", "amx", "fma", "f16c"}) {
    if (flag.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

template <typename Impl>
std::optional<KernelChoice<Impl>> find_in(
    const std::unordered_map<std::uint64_t, KernelChoice<Impl>>& entries,
    std::uint64_t problem) {
  const auto it = entries.find(problem);
  if (it == entries.end()) return std::nullopt;
  return it->second;
}

template <typename Impl>
void put_in(std::unordered_map<std::uint64_t, KernelChoice<Impl>>& entries,
            std::uint64_t problem, KernelChoice<Impl> choice) {
  auto [it, added] = entries.emplace(problem, choice);
  if (added) return;
  const KernelChoice<Impl>& old = it->second;
  if (std::make_tuple(choice.ms, static_cast<int>(choice.impl)) <
      std::make_tuple(old.ms, static_cast<int>(old.impl))) {
    it->second = choice;
  }
}

// One file line per entry: the kind, the problem, the implementation, the
// time; sorted, so that equal caches give equal files.
template <typename Impl>
void write_lines(
    const char* kind,
    const std::unordered_map<std::uint64_t, KernelChoice<Impl>>& entries,
    std::string& body) {
  const std::map<std::uint64_t, KernelChoice<Impl>> sorted(entries.begin(),
                                                           entries.end());
  for (const auto& [key, e] : sorted) {
    std::ostringstream line;
    line << kind << ' ' << hex(key) << ' ' << to_string(e.impl) << ' ' << e.ms
         << '\n';
    body += line.str();
  }
}

}  // namespace

std::optional<ConvChoice> KernelCache::find_conv(std::uint64_t problem) const {
  return find_in(conv_, problem);
}

std::optional<PoolChoice> KernelCache::find_pool(std::uint64_t problem) const {
  return find_in(pool_, problem);
}

void KernelCache::put(std::uint64_t problem, ConvChoice choice) {
  put_in(conv_, problem, choice);
}

void KernelCache::put(std::uint64_t problem, PoolChoice choice) {
  put_in(pool_, problem, choice);
}

std::string KernelCache::machine() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  std::set<std::string> flags;
  bool have_model = false, have_flags = false;
  while ((!have_model || !have_flags) && std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_first_of(" \t"));
    const std::string value =
        colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model" && line.rfind("model name", 0) == 0 && !have_model) {
      model = value;
      have_model = true;
    } else if (key == "flags" && !have_flags) {
      std::istringstream in(value);
      for (std::string f; in >> f;) {
        if (counts(f)) flags.insert(f);
      }
      have_flags = true;
    }
  }
  const dnnl_version_t* v = dnnl_version();
  std::string out = model + " |";
  for (const std::string& f : flags) out += " " + f;
  return out + " | oneDNN " + std::to_string(v->major) + "." +
         std::to_string(v->minor) + "." + std::to_string(v->patch);
}

void KernelCache::save(const std::string& path) const {
  std::string body;
  write_lines("conv", conv_, body);
  write_lines("pool", pool_, body);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kMagic << '\n'
        << "machine " << machine() << '\n'
        << "entries " << size() << '\n'
        << body << "end " << hex(problem_key(body)) << '\n';
    out.flush();
    require(static_cast<bool>(out), ErrorKind::kIo,
            "cannot write the kernel cache ", tmp);
  }
  require(std::rename(tmp.c_str(), path.c_str()) == 0, ErrorKind::kIo,
          "cannot rename ", tmp, " to ", path);
}

std::string KernelCache::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return path + ": cannot be opened";
  std::string line;
  if (!std::getline(in, line) || line != kMagic) {
    if (line.rfind(kOlderMagic, 0) == 0) {
      return path + ": written by an earlier distconv in another format (" +
             line + ")";
    }
    return path + ": not a distconv kernel cache (or another format)";
  }
  const std::string here = machine();
  if (!std::getline(in, line) || line.rfind("machine ", 0) != 0) {
    return path + ": truncated (no machine line)";
  }
  if (line.substr(8) != here) {
    return path + ": made on another machine or oneDNN (" + line.substr(8) +
           "), this one is " + here;
  }
  std::size_t count = 0;
  if (!std::getline(in, line) ||
      std::sscanf(line.c_str(), "entries %zu", &count) != 1) {
    return path + ": truncated or corrupt (no entry count)";
  }
  std::string body;
  std::vector<std::pair<std::uint64_t, ConvChoice>> convs;
  std::vector<std::pair<std::uint64_t, PoolChoice>> pools;
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::getline(in, line)) {
      return path + ": truncated (" + std::to_string(i) + " of " +
             std::to_string(count) + " entries)";
    }
    body += line + '\n';
    std::istringstream fields(line);
    std::string kind, key, name;
    float ms = 0;
    const std::string corrupt =
        path + ": corrupt entry " + std::to_string(i + 1);
    if (!(fields >> kind >> key >> name >> ms) || key.size() != 16) {
      return corrupt;
    }
    try {
      const std::uint64_t problem = std::stoull(key, nullptr, 16);
      if (kind == "conv") {
        convs.emplace_back(problem,
                           ConvChoice{conv_impl_named(name, "an entry"), ms});
      } else if (kind == "pool") {
        pools.emplace_back(problem,
                           PoolChoice{pool_impl_named(name, "an entry"), ms});
      } else {
        return corrupt;
      }
    } catch (const std::exception&) {
      return corrupt;
    }
  }
  if (!std::getline(in, line) || line.rfind("end ", 0) != 0) {
    return path + ": truncated (no end line)";
  }
  if (line.substr(4) != hex(problem_key(body))) {
    return path + ": corrupt (the checksum does not match its entries)";
  }
  for (const auto& [key, e] : convs) put(key, e);
  for (const auto& [key, e] : pools) put(key, e);
  return "";
}

}  // namespace distconv
