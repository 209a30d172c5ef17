// The cache of measured choices: the faster of two entries stays; a file
// written and read back gives the same entries; a file from another
// machine, a truncated or corrupt one, or none, is refused with a reason
// and leaves the cache as it was; a failed write leaves the old file whole.
#include "kernels/conv_impl_cache.h"

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

ConvImplCache three_entries() {
  ConvImplCache c;
  c.put(1, {ConvImpl::kChannelsLast, 2.5f});
  c.put(0xfedcba9876543210ull, {ConvImpl::kAdjointForward, 1.25f});
  c.put(42, {ConvImpl::kBlocked16, 7.0f});
  return c;
}

TEST(ConvImplCache, KeepsTheFasterChoice) {
  ConvImplCache c;
  c.put(7, {ConvImpl::kChannelsLast, 3.0f});
  c.put(7, {ConvImpl::kBlocked16, 2.0f});
  c.put(7, {ConvImpl::kAdjointForward, 2.5f});
  ASSERT_TRUE(c.find(7).has_value());
  EXPECT_EQ(c.find(7)->impl, ConvImpl::kBlocked16);
  EXPECT_FALSE(c.find(8).has_value());
  EXPECT_EQ(c.size(), 1u);
}

TEST(ConvImplCache, FileRoundTrip) {
  const std::string path = temp_path("round_trip.cache");
  three_entries().save(path);
  ConvImplCache back;
  EXPECT_EQ(back.load(path), "");
  EXPECT_EQ(back.size(), 3u);
  ASSERT_TRUE(back.find(0xfedcba9876543210ull).has_value());
  EXPECT_EQ(back.find(0xfedcba9876543210ull)->impl, ConvImpl::kAdjointForward);
  EXPECT_EQ(back.find(0xfedcba9876543210ull)->ms, 1.25f);
  EXPECT_EQ(back.find(42)->impl, ConvImpl::kBlocked16);
  // The file names this machine.
  EXPECT_NE(read(path).find(ConvImplCache::machine()), std::string::npos);
  std::remove(path.c_str());
}

// Each damaged file: refused with a message naming the fault; the cache
// keeps what it held.
TEST(ConvImplCache, RefusesFilesItCannotTrust) {
  const std::string path = temp_path("good.cache");
  three_entries().save(path);
  const std::string good = read(path);
  const std::string machine_line = "machine " + ConvImplCache::machine();
  std::string other_cpu = good;
  other_cpu.replace(other_cpu.find(machine_line), machine_line.size(),
                    "machine Some Other CPU | avx2 | oneDNN 9.9.9");
  std::string corrupt = good;
  corrupt[corrupt.find(" channels_last ") + 1] = 'C';  // no such name
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
      {"a changed value", flipped, "checksum"},
      {"not a cache", "hello\n", "not a distconv kernel cache"},
      {"empty", "", "not a distconv kernel cache"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string bad = temp_path("bad.cache");
    write(bad, c.text);
    ConvImplCache cache;
    cache.put(5, {ConvImpl::kReference, 9.0f});
    const std::string why = cache.load(bad);
    EXPECT_NE(why.find(c.says), std::string::npos) << why;
    EXPECT_NE(why.find(bad), std::string::npos) << why;
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_EQ(cache.find(5)->impl, ConvImpl::kReference);
    std::remove(bad.c_str());
  }
  ConvImplCache cache;
  EXPECT_NE(cache.load(temp_path("missing.cache")).find("cannot be opened"),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(ConvImplCache, AFailedSaveLeavesTheOldFileWhole) {
  const std::string path = temp_path("kept.cache");
  three_entries().save(path);
  const std::string before = read(path);
  // A directory where the temporary file would go: the write fails.
  const std::string blocker = path + ".tmp";
  ASSERT_EQ(mkdir(blocker.c_str(), 0700), 0);
  ConvImplCache other;
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
