#include "op_ref.h"

#include <map>

namespace zipper::client {

namespace {

struct Hold {
  int refs = 0;
  bool free_pending = false;
};

std::map<MPI_Op, Hold>& holds() {
  static std::map<MPI_Op, Hold> h;
  return h;
}

}  // namespace

OpRef::OpRef(MPI_Op op) : op_(op) {
  if (op_ != MPI_OP_NULL) ++holds()[op_].refs;
}

OpRef::~OpRef() {
  if (op_ == MPI_OP_NULL) return;
  auto it = holds().find(op_);
  if (it == holds().end() || --it->second.refs > 0) return;
  const bool free_now = it->second.free_pending;
  holds().erase(it);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (free_now && !finalized) MPI_Op_free(&op_);
}

bool free_when_released(MPI_Op op) {
  auto it = holds().find(op);
  if (it == holds().end()) return false;
  it->second.free_pending = true;
  return true;
}

}  // namespace zipper::client
