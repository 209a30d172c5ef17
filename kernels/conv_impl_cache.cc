#include "kernels/conv_impl_cache.h"

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

constexpr const char* kMagic = "distconv conv-impl cache 1";

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

}  // namespace

std::optional<ConvImplCache::Entry> ConvImplCache::find(
    std::uint64_t problem) const {
  const auto it = entries_.find(problem);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void ConvImplCache::put(std::uint64_t problem, Entry entry) {
  auto [it, added] = entries_.emplace(problem, entry);
  if (added) return;
  const Entry& old = it->second;
  if (std::make_tuple(entry.ms, static_cast<int>(entry.impl)) <
      std::make_tuple(old.ms, static_cast<int>(old.impl))) {
    it->second = entry;
  }
}

std::string ConvImplCache::machine() {
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

void ConvImplCache::save(const std::string& path) const {
  // Sorted, so that equal caches give equal files.
  const std::map<std::uint64_t, Entry> sorted(entries_.begin(), entries_.end());
  std::string body;
  for (const auto& [key, e] : sorted) {
    std::ostringstream line;
    line << hex(key) << ' ' << to_string(e.impl) << ' ' << e.ms << '\n';
    body += line.str();
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kMagic << '\n'
        << "machine " << machine() << '\n'
        << "entries " << sorted.size() << '\n'
        << body << "end " << hex(problem_key(body)) << '\n';
    out.flush();
    require(static_cast<bool>(out), ErrorKind::kIo,
            "cannot write the kernel cache ", tmp);
  }
  require(std::rename(tmp.c_str(), path.c_str()) == 0, ErrorKind::kIo,
          "cannot rename ", tmp, " to ", path);
}

std::string ConvImplCache::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return path + ": cannot be opened";
  std::string line;
  if (!std::getline(in, line) || line != kMagic) {
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
  std::vector<std::pair<std::uint64_t, Entry>> read;
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::getline(in, line)) {
      return path + ": truncated (" + std::to_string(i) + " of " +
             std::to_string(count) + " entries)";
    }
    body += line + '\n';
    std::istringstream fields(line);
    std::string key, name;
    float ms = 0;
    if (!(fields >> key >> name >> ms) || key.size() != 16) {
      return path + ": corrupt entry " + std::to_string(i + 1);
    }
    Entry e;
    e.ms = ms;
    try {
      e.impl = conv_impl_named(name, "an entry's implementation");
      read.emplace_back(std::stoull(key, nullptr, 16), e);
    } catch (const std::exception&) {
      return path + ": corrupt entry " + std::to_string(i + 1);
    }
  }
  if (!std::getline(in, line) || line.rfind("end ", 0) != 0) {
    return path + ": truncated (no end line)";
  }
  if (line.substr(4) != hex(problem_key(body))) {
    return path + ": corrupt (the checksum does not match its entries)";
  }
  for (const auto& [key, e] : read) put(key, e);
  return "";
}

}  // namespace distconv
