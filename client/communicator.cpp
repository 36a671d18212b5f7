#include "communicator.h"

namespace zipper::client {

NativeComm::~NativeComm() {
  if (comm_ == MPI_COMM_NULL || comm_ == MPI_COMM_WORLD || comm_ == MPI_COMM_SELF) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

NativeComm& NativeComm::operator=(NativeComm&& o) noexcept {
  if (this != &o) {
    NativeComm old(release());
    comm_ = o.release();
  }
  return *this;
}

Comm::Comm(RankMap map, int rank, std::uint32_t cid, NativeComm native, NativeComm native_coll)
    : map_(std::move(map)),
      rank_(rank),
      cid_(cid),
      native_(std::move(native)),
      native_coll_(std::move(native_coll)) {}

}  // namespace zipper::client
