// The cache of measured choices: the faster of two entries stays, for
// convolutions and poolings alike and apart; a file written and read back
// gives the same entries; a file from another machine or an earlier
// format, a truncated or corrupt one, or none, is refused with a reason
// and leaves the cache as it was; a failed write leaves the old file whole.
#include "kernels/kernel_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "distconv/error.h"

namespace distconv {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "." + std::to_string(getpid());
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

KernelCache three_entries() {
  KernelCache c;
  c.put(1, {ConvImpl::kChannelsLast, 2.5f});
  c.put(0xfedcba9876543210ull, {ConvImpl::kAdjointForward, 1.25f});
  c.put(42, {ConvImpl::kBlocked16, 7.0f});
  c.put(42, {PoolImpl::kOneCall, 0.5f});
  c.put(9, {PoolImpl::kSlabs, 3.25f});
  return c;
}

TEST(KernelCache, KeepsTheFasterChoice) {
  KernelCache c;
  c.put(7, {ConvImpl::kChannelsLast, 3.0f});
  c.put(7, {ConvImpl::kBlocked16, 2.0f});
  c.put(7, {ConvImpl::kAdjointForward, 2.5f});
  ASSERT_TRUE(c.find_conv(7).has_value());
  EXPECT_EQ(c.find_conv(7)->impl, ConvImpl::kBlocked16);
  EXPECT_FALSE(c.find_conv(8).has_value());
  EXPECT_EQ(c.size(), 1u);
  // A pooling's choices are kept apart from a convolution's of the same
  // key, by the same rule.
  EXPECT_FALSE(c.find_pool(7).has_value());
  c.put(7, {PoolImpl::kOneCall, 1.0f});
  c.put(7, {PoolImpl::kSlabs, 1.0f});  // a tie: the earlier in the list
  c.put(7, {PoolImpl::kReference, 4.0f});
  ASSERT_TRUE(c.find_pool(7).has_value());
  EXPECT_EQ(c.find_pool(7)->impl, PoolImpl::kSlabs);
  EXPECT_EQ(c.find_conv(7)->impl, ConvImpl::kBlocked16);
  EXPECT_EQ(c.size(), 2u);
}

TEST(KernelCache, FileRoundTrip) {
  const std::string path = temp_path("round_trip.cache");
  three_entries().save(path);
  KernelCache back;
  EXPECT_EQ(back.load(path), "");
  EXPECT_EQ(back.size(), 5u);
  ASSERT_TRUE(back.find_conv(0xfedcba9876543210ull).has_value());
  EXPECT_EQ(back.find_conv(0xfedcba9876543210ull)->impl,
            ConvImpl::kAdjointForward);
  EXPECT_EQ(back.find_conv(0xfedcba9876543210ull)->ms, 1.25f);
  EXPECT_EQ(back.find_conv(42)->impl, ConvImpl::kBlocked16);
  ASSERT_TRUE(back.find_pool(42).has_value());
  EXPECT_EQ(back.find_pool(42)->impl, PoolImpl::kOneCall);
  EXPECT_EQ(back.find_pool(9)->impl, PoolImpl::kSlabs);
  EXPECT_EQ(back.find_pool(9)->ms, 3.25f);
  EXPECT_FALSE(back.find_pool(1).has_value());
  // Equal caches give equal files.
  const std::string again = temp_path("round_trip_again.cache");
  back.save(again);
  EXPECT_EQ(read(again), read(path));
  std::remove(again.c_str());
  // The file names this machine.
  EXPECT_NE(read(path).find(KernelCache::machine()), std::string::npos);
  std::remove(path.c_str());
}

// Each damaged file: refused with a message naming the fault; the cache
// keeps what it held.
TEST(KernelCache, RefusesFilesItCannotTrust) {
  const std::string path = temp_path("good.cache");
  three_entries().save(path);
  const std::string good = read(path);
  const std::string machine_line = "machine " + KernelCache::machine();
  std::string other_cpu = good;
  other_cpu.replace(other_cpu.find(machine_line), machine_line.size(),
                    "machine Some Other CPU | avx2 | oneDNN 9.9.9");
  std::string corrupt = good;
  corrupt[corrupt.find(" channels_last ") + 1] = 'C';  // no such name
  std::string pool_as_conv = good;  // a pooling's name as a convolution's
  pool_as_conv.replace(pool_as_conv.find("pool "), 5, "conv ");
  std::string unknown_kind = good;
  unknown_kind.replace(unknown_kind.find("pool "), 5, "norm ");
  std::string older = good;
  older.replace(0, older.find('\n'), "distconv conv-impl cache 1");
  std::string flipped = good;
  const std::size_t ms = flipped.find(" 2.5\n");
  flipped[ms + 1] = '3';  // a plausible value, but not the one written
  const struct {
    const char* name;
    std::string text;
    const char* says;
  } cases[] = {
      {"another CPU", other_cpu, "another machine"},
      {"truncated after one entry",
       good.substr(
           0, good.find('\n', good.find('\n', good.find("entries ")) + 1) + 1),
       "truncated"},
      {"cut inside an entry",
       good.substr(0, good.find('\n', good.find("entries ")) + 20),
       "corrupt entry 1"},
      {"no end line", good.substr(0, good.rfind("end ")), "truncated"},
      {"a bad name", corrupt, "corrupt"},
      {"a pooling's implementation as a convolution's", pool_as_conv,
       "corrupt entry"},
      {"an unknown kind", unknown_kind, "corrupt entry"},
      {"the earlier format", older, "earlier distconv"},
      {"a changed value", flipped, "checksum"},
      {"not a cache", "hello\n", "not a distconv kernel cache"},
      {"empty", "", "not a distconv kernel cache"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string bad = temp_path("bad.cache");
    write(bad, c.text);
    KernelCache cache;
    cache.put(5, {ConvImpl::kReference, 9.0f});
    const std::string why = cache.load(bad);
    EXPECT_NE(why.find(c.says), std::string::npos) << why;
    EXPECT_NE(why.find(bad), std::string::npos) << why;
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_EQ(cache.find_conv(5)->impl, ConvImpl::kReference);
    EXPECT_FALSE(cache.find_pool(9).has_value());
    std::remove(bad.c_str());
  }
  KernelCache cache;
  EXPECT_NE(cache.load(temp_path("missing.cache")).find("cannot be opened"),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(KernelCache, AFailedSaveLeavesTheOldFileWhole) {
  const std::string path = temp_path("kept.cache");
  three_entries().save(path);
  const std::string before = read(path);
  // A directory where the temporary file would go: the write fails.
  const std::string blocker = path + ".tmp";
  ASSERT_EQ(mkdir(blocker.c_str(), 0700), 0);
  KernelCache other;
  other.put(3, {ConvImpl::kReference, 1.0f});
  try {
    other.save(path);
    ADD_FAILURE() << "save into a blocked path did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
  }
  EXPECT_EQ(read(path), before);
  rmdir(blocker.c_str());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace distconv
