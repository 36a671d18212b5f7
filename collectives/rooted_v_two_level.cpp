#include "rooted_v_two_level.h"

#include <climits>
#include <vector>

#include "packed_blocks.h"
#include "pending.h"
#include "tags.h"
#include "typed_buffer.h"

namespace zipper::coll {

namespace {

// The root's side: the far blocks in one packed message with the far leader
// (or each with its far rank past 2 GiB), the root's cluster natively.
int at_root_cluster(Direction dir, const Topology& t, Pending& p, void* own, int own_count,
                    MPI_Datatype own_type, void* all, const int counts[], const int displs[],
                    MPI_Datatype all_type, int root, int tag) {
  const bool to_root = dir == Direction::kToRoot, am_root = t.rank == root;
  std::vector<int> far_ranks, local_counts, local_displs;
  std::vector<char> far;
  bool packed_far = false;  // far blocks travel packed with the far leader
  if (am_root) {
    for (int j = 0; j < t.remote_size; ++j) far_ranks.push_back(t.remote_member(j));
    std::int64_t sum = 0;
    for (int r : far_ranks) sum += packed_size(counts[r], all_type);
    if (sum > INT_MAX) {
      // The far cluster's blocks total 2 GiB or more: each far rank
      // exchanges its own with the root, in place (the far side takes the
      // same decision from the same sum).
      for (int r : far_ranks)
        if (packed_size(counts[r], all_type) > 0) {
          void* block = elem(all, displs[r], all_type);
          if (to_root)
            p.irecv(block, counts[r], all_type, r, tag);
          else
            p.isend(block, counts[r], all_type, r, tag);
        }
    } else {
      packed_far = true;
      if (to_root) {
        far.resize(static_cast<std::size_t>(sum));
        if (!t.standalone())
          p.irecv(far.data(), static_cast<int>(sum), MPI_BYTE, t.remote_member(0), tag);
      } else {
        if (int rc = pack_blocks(all, counts, displs, all_type, far_ranks, &far)) return rc;
        if (!t.standalone())
          p.isend(far.data(), static_cast<int>(sum), MPI_BYTE, t.remote_member(0), tag);
      }
    }
    for (int i = 0; i < t.local_size; ++i) {
      local_counts.push_back(counts[t.local_member(i)]);
      local_displs.push_back(displs[t.local_member(i)]);
    }
  }
  MPI_Request req = MPI_REQUEST_NULL;
  const int native_root = t.index_in_cluster(root);
  p.add(to_root ? MPI_Igatherv(own, own_count, own_type, all, local_counts.data(),
                               local_displs.data(), all_type, native_root, t.local, &req)
                : MPI_Iscatterv(all, local_counts.data(), local_displs.data(), all_type, own,
                                own_count, own_type, native_root, t.local, &req),
        &req);
  if (int rc = p.wait()) return rc;
  return to_root && packed_far ? unpack_blocks(far, all, counts, displs, all_type, far_ranks)
                               : MPI_SUCCESS;
}

// The far cluster's side, once the path is the packed one (`cb`: its
// members' packed sizes, summing below 2 GiB): a native gather of the packed
// blocks to the leader, which sends them to the root; or the leader receives
// them from the root and scatters them natively.
int at_far_cluster(Direction dir, const Topology& t, Pending& p, void* own, int own_count,
                   MPI_Datatype own_type, std::int64_t mine, const ClusterBlocks& cb, int root,
                   int tag) {
  const bool leader = t.local_rank == 0;
  const int total = static_cast<int>(cb.sum);
  const int one = own_count, zero = 0;
  // Native steps wait through wait_native (pending.h): progress meanwhile.
  MPI_Request r = MPI_REQUEST_NULL;
  std::vector<char> packed, block(leader ? total : 0);
  if (dir == Direction::kToRoot) {
    if (int rc = pack_blocks(own, &one, &zero, own_type, {0}, &packed)) return rc;
    if (int rc =
            wait_native(t,
                        MPI_Igatherv(packed.data(), static_cast<int>(mine), MPI_BYTE, block.data(),
                                     cb.counts.data(), cb.offsets.data(), MPI_BYTE, 0, t.local, &r),
                        &r))
      return rc;
    if (!leader) return MPI_SUCCESS;
    p.isend(block.data(), total, MPI_BYTE, root, tag);
    return p.wait();
  }
  packed.resize(static_cast<std::size_t>(mine));
  if (leader) {
    p.irecv(block.data(), total, MPI_BYTE, root, tag);
    if (int rc = p.wait()) return rc;
  }
  if (int rc = wait_native(
          t,
          MPI_Iscatterv(block.data(), cb.counts.data(), cb.offsets.data(), MPI_BYTE, packed.data(),
                        static_cast<int>(mine), MPI_BYTE, 0, t.local, &r),
          &r))
    return rc;
  return unpack_blocks(packed, own, &one, &zero, own_type, {0});
}

}  // namespace

int rooted_v_two_level(Direction dir, const Topology& t, void* own, int own_count,
                       MPI_Datatype own_type, void* all, const int counts[], const int displs[],
                       MPI_Datatype all_type, int root) {
  const int tag = dir == Direction::kToRoot ? kTagGatherv : kTagScatterv;
  Pending p(t);
  if (t.is_local(root))
    return at_root_cluster(dir, t, p, own, own_count, own_type, all, counts, displs, all_type, root,
                           tag);
  // Far cluster: its members' sizes are known only to themselves; all of
  // them learn the sum, which decides the path.
  const std::int64_t mine = packed_size(own_count, own_type);
  ClusterBlocks cb;
  if (int rc = cluster_blocks(t, mine, &cb)) return rc;
  if (cb.sum > INT_MAX) {
    if (mine > 0) {
      if (dir == Direction::kToRoot)
        p.isend(own, own_count, own_type, root, tag);
      else
        p.irecv(own, own_count, own_type, root, tag);
    }
    return p.wait();
  }
  return at_far_cluster(dir, t, p, own, own_count, own_type, mine, cb, root, tag);
}

}  // namespace zipper::coll
