#include "handles.h"

#include <set>

namespace zipper::capi {

namespace {
// Live groups: a handle not in here is rejected instead of dereferenced.
std::set<const client::Group*>& groups() {
  static std::set<const client::Group*> live;
  return live;
}
const client::Group kEmptyGroup;
}  // namespace

int lookup(MPI_Comm h, client::Runtime** rt, std::shared_ptr<client::Comm>* c) {
  *rt = client::Runtime::get();
  if (*rt == nullptr) return MPI_ERR_OTHER;
  if (h == MPI_COMM_NULL) return MPI_ERR_COMM;
  *c = (*rt)->comms().find(h);
  return *c ? MPI_SUCCESS : MPI_ERR_COMM;
}

MPI_Group new_group(client::Group g) {
  auto* p = new client::Group(std::move(g));
  groups().insert(p);
  return GroupHandles::encode(p);
}

const client::Group* find_group(MPI_Group h) {
  if (h == MPI_GROUP_EMPTY) return &kEmptyGroup;
  auto* p = GroupHandles::decode(h);
  return p != nullptr && groups().count(p) ? p : nullptr;
}

bool free_group(MPI_Group h) {
  auto* p = GroupHandles::decode(h);
  if (p == nullptr || groups().erase(p) == 0) return false;
  GroupHandles::release(h);
  delete p;
  return true;
}

}  // namespace zipper::capi
