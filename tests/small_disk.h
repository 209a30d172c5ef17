// A small file system for tests of a full disk: a tmpfs of a given size
// that rank 0 mounts at a directory where this machine allows it (root,
// or a process with CAP_SYS_ADMIN), unmounted on destruction, and filled
// to leave a given number of bytes free.
//
//   SmallDisk disk("small_disk", 512 << 10);   // collective
//   if (!disk.mounted()) GTEST_SKIP() << disk.why_not();
//   disk.leave_free(40 << 10);                 // collective
#ifndef DISTCONV_TESTS_SMALL_DISK_H_
#define DISTCONV_TESTS_SMALL_DISK_H_

#include <string>

namespace distconv::testing {

class SmallDisk {
 public:
  // Collective over MPI_COMM_WORLD; `name` inside the test's scratch
  // directory (temp_path).
  SmallDisk(const std::string& name, long long bytes);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  bool mounted() const { return mounted_; }
  // Why it could not be mounted, for the test's SKIPPED line.
  std::string why_not() const;
  const std::string& dir() const { return dir_; }
  // Collective: rank 0 sizes a filler file so that `bytes` stay free (as
  // far as whole pages allow; nothing when fewer are free already).
  void leave_free(long long bytes);

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_SMALL_DISK_H_
