// SharedInbox: one buffer per rank in an MPI-3 shared-memory window, so that
// ranks on the same node can write straight into each other's buffers. The
// shared-memory halo transport packs each message into the receiver's inbox
// (one copy) instead of handing it to MPI point-to-point (which copies again).
//
//   SharedInbox inbox(comm, MPI_COMM_NULL, bytes);   // collective over comm
//   if (inbox.shares_memory_with(peer)) {
//     std::memcpy(inbox.of(peer) + offset, data, n);
//     inbox.sync();      // then notify the peer, e.g. a zero-byte message
//   }
#ifndef DISTCONV_HALO_INTERNAL_SHARED_INBOX_H_
#define DISTCONV_HALO_INTERNAL_SHARED_INBOX_H_

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace distconv {

class SharedInbox {
 public:
  // Collective over `comm`. `group` lists ranks that may share memory (a
  // communicator whose members are all in `comm`); those of them on this
  // node do (MPI_COMM_TYPE_SHARED within `group`). MPI_COMM_NULL: the
  // ranks of `comm` on this node.
  SharedInbox(MPI_Comm comm, MPI_Comm group, std::size_t bytes);
  ~SharedInbox();  // collective over the shared group
  SharedInbox(const SharedInbox&) = delete;
  SharedInbox& operator=(const SharedInbox&) = delete;

  // Whether rank `peer` of `comm` shares this window (self included).
  bool shares_memory_with(int peer) const { return shared_with_[peer]; }
  char* mine() const { return mine_; }
  char* of(int peer) const { return base_[peer]; }  // needs shares_memory_with
  // Memory barrier for the window: after writing for a peer, before telling
  // it; and after being told, before reading.
  void sync() const;

 private:
  MPI_Comm shared_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  char* mine_ = nullptr;
  std::vector<char*> base_;        // per rank of comm
  std::vector<bool> shared_with_;  // per rank of comm
};

}  // namespace distconv

#endif  // DISTCONV_HALO_INTERNAL_SHARED_INBOX_H_
