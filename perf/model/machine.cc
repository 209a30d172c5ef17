#include "perf/model/machine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "distconv/error.h"

namespace distconv {
namespace model {
namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// The positive numbers of `text`, `count` of them exactly.
std::vector<double> numbers(const std::string& text, size_t count,
                            const std::string& where) {
  std::istringstream in(text);
  std::vector<double> v;
  std::string word;
  while (in >> word) {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require(used == word.size() && std::isfinite(x) && x > 0,
            ErrorKind::kInvalidArgument, where, ": '", word,
            "' is not a positive number");
    v.push_back(x);
  }
  require(v.size() == count, ErrorKind::kInvalidArgument, where, ": expected ",
          count, " number(s), got ", v.size());
  return v;
}

// The scalar keys: where each goes and the unit the file writes it in.
struct ScalarKey {
  const char* key;
  double scale;  // file value * scale = stored value
};

template <typename Fn>
void for_each_scalar(Machine& m, Fn fn) {
  fn(ScalarKey{"contention", 1.0}, m.contention);
  fn(ScalarKey{"intra_latency_us", 1e-6}, m.intra.latency_s);
  fn(ScalarKey{"intra_bandwidth_GBps", 1e9}, m.intra.bandwidth_Bps);
  fn(ScalarKey{"inter_latency_us", 1e-6}, m.inter.latency_s);
  fn(ScalarKey{"inter_bandwidth_GBps", 1e9}, m.inter.bandwidth_Bps);
  fn(ScalarKey{"call_overhead_us", 1e-6}, m.call_overhead_s);
  fn(ScalarKey{"batch_norm_ns", 1e-9}, m.batch_norm_s);
  fn(ScalarKey{"relu_ns", 1e-9}, m.relu_s);
  fn(ScalarKey{"pool_ns", 1e-9}, m.pool_s);
  fn(ScalarKey{"concat_ns", 1e-9}, m.concat_s);
  fn(ScalarKey{"loss_ns", 1e-9}, m.loss_s);
  fn(ScalarKey{"copy_ns", 1e-9}, m.copy_s);
}

double interpolate(const std::vector<ConvThroughput>& table, int pass,
                   double channels) {
  if (channels <= table.front().channels) return table.front().gflops[pass];
  if (channels >= table.back().channels) return table.back().gflops[pass];
  size_t i = 1;
  while (table[i].channels < channels) ++i;
  const ConvThroughput& a = table[i - 1];
  const ConvThroughput& b = table[i];
  const double t = std::log(channels / a.channels) /
                   std::log(b.channels / a.channels);
  return a.gflops[pass] + t * (b.gflops[pass] - a.gflops[pass]);
}

}  // namespace

double Machine::conv_flops(int spatial_dims, ConvPass pass, double in_channels,
                           double out_channels) const {
  require(spatial_dims == 2 || spatial_dims == 3, ErrorKind::kUnsupported,
          "the model has convolution throughput for 2D and 3D only, not ",
          spatial_dims, "D");
  const std::vector<ConvThroughput>& table = spatial_dims == 2 ? conv2d : conv3d;
  return 1e9 * interpolate(table, static_cast<int>(pass),
                           std::sqrt(in_channels * out_channels));
}

const LinkCost& Machine::link(int rank_a, int rank_b) const {
  return rank_a / ranks_per_node == rank_b / ranks_per_node ? intra : inter;
}

const LinkCost& Machine::slowest_link(int ranks) const {
  return ranks > ranks_per_node ? inter : intra;
}

double Machine::compute_slowdown(int ranks) const {
  const int on_node = std::min(ranks, ranks_per_node);
  const double shared = on_node > 1 ? contention : 1.0;
  if (cores_per_node <= 0) return shared;
  return shared * std::max(1.0, static_cast<double>(on_node) / cores_per_node);
}

Machine parse_machine(const std::string& text, const std::string& origin) {
  Machine m;
  std::map<std::string, std::string> seen;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::string where = origin + ":" + std::to_string(number);
    const size_t eq = line.find('=');
    require(eq != std::string::npos, ErrorKind::kInvalidArgument, where,
            ": expected 'key = value', got '", line, "'");
    const std::string key = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
    if (key == "conv2d" || key == "conv3d") {
      const std::vector<double> v = numbers(value, 4, where + " (" + key + ")");
      ConvThroughput t{v[0], {v[1], v[2], v[3]}};
      std::vector<ConvThroughput>& table = key == "conv2d" ? m.conv2d : m.conv3d;
      for (const ConvThroughput& o : table) {
        require(o.channels != t.channels, ErrorKind::kInvalidArgument, where,
                ": ", key, " at ", t.channels, " channels given twice");
      }
      table.push_back(t);
      continue;
    }
    require(seen.count(key) == 0, ErrorKind::kInvalidArgument, where, ": '",
            key, "' given twice");
    seen[key] = where;
    if (key == "name") {
      m.name = value;
    } else if (key == "ranks_per_node") {
      m.ranks_per_node = static_cast<int>(numbers(value, 1, where)[0]);
      require(m.ranks_per_node >= 1, ErrorKind::kInvalidArgument, where,
              ": ranks_per_node must be at least 1");
    } else if (key == "cores_per_node") {
      // 0 is allowed here: one core (or GPU) per rank.
      m.cores_per_node = value == "0"
                             ? 0
                             : static_cast<int>(numbers(value, 1, where)[0]);
    } else {
      bool known = false;
      for_each_scalar(m, [&](const ScalarKey& k, double& slot) {
        if (key != k.key) return;
        slot = numbers(value, 1, where)[0] * k.scale;
        known = true;
      });
      require(known, ErrorKind::kInvalidArgument, where, ": unknown key '",
              key, "'");
    }
  }
  std::vector<std::string> required = {"name", "ranks_per_node",
                                       "cores_per_node"};
  for_each_scalar(m, [&](const ScalarKey& k, double&) {
    required.push_back(k.key);
  });
  for (const std::string& k : required) {
    require(seen.count(k) == 1, ErrorKind::kInvalidArgument, origin,
            ": missing '", k, "'");
  }
  require(m.contention >= 1, ErrorKind::kInvalidArgument, origin,
          ": contention must be at least 1, got ", m.contention);
  require(!m.conv2d.empty() && !m.conv3d.empty(), ErrorKind::kInvalidArgument,
          origin, ": needs at least one 'conv2d' and one 'conv3d' line");
  for (auto* table : {&m.conv2d, &m.conv3d}) {
    std::sort(table->begin(), table->end(),
              [](const ConvThroughput& a, const ConvThroughput& b) {
                return a.channels < b.channels;
              });
  }
  return m;
}

Machine load_machine(const std::string& path) {
  std::ifstream in(path);
  require(static_cast<bool>(in), ErrorKind::kInvalidArgument,
          "cannot read the machine file '", path, "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_machine(text.str(), path);
}

std::string format_machine(const Machine& m) {
  std::ostringstream out;
  out.precision(4);
  out << "name = " << m.name << "\n"
      << "ranks_per_node = " << m.ranks_per_node << "\n"
      << "cores_per_node = " << m.cores_per_node << "\n";
  Machine copy = m;
  for_each_scalar(copy, [&](const ScalarKey& k, double& v) {
    out << k.key << " = " << v / k.scale << "\n";
  });
  for (int dims : {2, 3}) {
    for (const ConvThroughput& t : dims == 2 ? m.conv2d : m.conv3d) {
      out << "conv" << dims << "d = " << t.channels << " " << t.gflops[0]
          << " " << t.gflops[1] << " " << t.gflops[2] << "\n";
    }
  }
  return out.str();
}

}  // namespace model
}  // namespace distconv
