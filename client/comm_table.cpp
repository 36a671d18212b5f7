#include "comm_table.h"

namespace zipper::client {

std::shared_ptr<Comm> CommTable::find(MPI_Comm h) const {
  const auto it = comms_.find(h);
  return it == comms_.end() ? nullptr : it->second;
}

void CommTable::add(MPI_Comm h, std::shared_ptr<Comm> c) {
  comms_[h] = std::move(c);
  created_.push_back(h);
}

// The communicator may be destroyed here (its native communicator freed),
// which runs attribute delete callbacks, and a callback may free another
// communicator: the entry leaves the map before anything is destroyed.
bool CommTable::remove(MPI_Comm h) {
  const auto it = comms_.find(h);
  if (it == comms_.end()) return false;
  std::shared_ptr<Comm> gone = std::move(it->second);
  comms_.erase(it);
  gone.reset();
  return true;
}

void CommTable::clear() {
  // One at a time: each destruction may re-enter remove() from a delete
  // callback. A handle may have been freed and reused since it was added.
  const std::vector<MPI_Comm> order = std::move(created_);
  created_.clear();
  for (int pass = 0; pass < 2; ++pass) {
    for (MPI_Comm h : order) {
      const auto it = comms_.find(h);
      if (it == comms_.end()) continue;
      const bool predefined = it->second->cid() == kWorldCid || it->second->cid() == kSelfCid;
      if (predefined == (pass == 1)) remove(h);
    }
  }
  comms_.clear();
}
}  // namespace zipper::client
