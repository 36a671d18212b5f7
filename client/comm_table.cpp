#include "comm_table.h"

namespace zipper::client {

std::shared_ptr<Comm> CommTable::find(MPI_Comm h) const {
  const auto it = comms_.find(h);
  return it == comms_.end() ? nullptr : it->second;
}

void CommTable::add(MPI_Comm h, std::shared_ptr<Comm> c) { comms_[h] = std::move(c); }

bool CommTable::remove(MPI_Comm h) { return comms_.erase(h) > 0; }

}  // namespace zipper::client
