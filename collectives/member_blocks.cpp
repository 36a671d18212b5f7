#include "member_blocks.h"

namespace zipper::coll {

MemberBlocks::MemberBlocks(const Topology& t, bool local, void* buf, int count, MPI_Datatype type)
    : ranks_(local ? t.comm->map().local_members() : t.comm->map().remote_members()),
      buf_(buf),
      count_(count),
      type_(type) {
  if (buf == nullptr || ranks_.empty()) return;
  for (std::size_t i = 1; i < ranks_.size(); ++i)
    if (ranks_[i] != ranks_[i - 1] + 1) in_place_ = false;
  if (in_place_)
    first_ = elem(buf, MPI_Aint{ranks_.front()} * count, type);
  else
    staged_ = TypedBuffer(MPI_Aint{members()} * count, type);
}

int MemberBlocks::stage() {
  if (in_place_ || buf_ == nullptr) return MPI_SUCCESS;
  for (int i = 0; i < members(); ++i)
    if (int rc = copy_typed(elem(buf_, MPI_Aint{ranks_[i]} * count_, type_),
                            elem(staged_.data(), MPI_Aint{i} * count_, type_), count_, type_))
      return rc;
  return MPI_SUCCESS;
}

int MemberBlocks::unstage() {
  if (in_place_ || buf_ == nullptr) return MPI_SUCCESS;
  for (int i = 0; i < members(); ++i)
    if (int rc = copy_typed(elem(staged_.data(), MPI_Aint{i} * count_, type_),
                            elem(buf_, MPI_Aint{ranks_[i]} * count_, type_), count_, type_))
      return rc;
  return MPI_SUCCESS;
}

}  // namespace zipper::coll
