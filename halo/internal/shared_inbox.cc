#include "halo/internal/shared_inbox.h"

#include <numeric>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv {

using internal::check_mpi;

SharedInbox::SharedInbox(MPI_Comm comm, MPI_Comm group, std::size_t bytes) {
  // The ranks of `group` (or of comm) on this node: a group spanning nodes
  // shares memory within each node only.
  check_mpi(MPI_Comm_split_type(group == MPI_COMM_NULL ? comm : group,
                                MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                &shared_),
            "MPI_Comm_split_type");
  check_mpi(MPI_Comm_set_errhandler(shared_, MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
  check_mpi(MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1,
                                    MPI_INFO_NULL, shared_, &mine_, &window_),
            "MPI_Win_allocate_shared");
  check_mpi(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN),
            "MPI_Win_set_errhandler");
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");

  // Which ranks of comm are in the shared group, and where their inboxes are.
  int size = 0, shared_size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_size(shared_, &shared_size), "MPI_Comm_size");
  MPI_Group comm_group, shared_group;
  check_mpi(MPI_Comm_group(comm, &comm_group), "MPI_Comm_group");
  check_mpi(MPI_Comm_group(shared_, &shared_group), "MPI_Comm_group");
  std::vector<int> ranks(size), in_shared(size);
  std::iota(ranks.begin(), ranks.end(), 0);
  check_mpi(MPI_Group_translate_ranks(comm_group, size, ranks.data(),
                                      shared_group, in_shared.data()),
            "MPI_Group_translate_ranks");
  MPI_Group_free(&comm_group);
  MPI_Group_free(&shared_group);
  base_.assign(size, nullptr);
  shared_with_.assign(size, false);
  for (int r = 0; r < size; ++r) {
    if (in_shared[r] == MPI_UNDEFINED) continue;
    MPI_Aint peer_bytes = 0;
    int unit = 0;
    char* base = nullptr;
    check_mpi(MPI_Win_shared_query(window_, in_shared[r], &peer_bytes, &unit,
                                   &base),
              "MPI_Win_shared_query");
    base_[r] = base;
    shared_with_[r] = true;
  }
}

SharedInbox::~SharedInbox() {
  if (window_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
  }
  if (shared_ != MPI_COMM_NULL) MPI_Comm_free(&shared_);
}

void SharedInbox::sync() const { check_mpi(MPI_Win_sync(window_), "MPI_Win_sync"); }

}  // namespace distconv
