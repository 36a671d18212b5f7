// The communicators this process belongs to, by handle. An MMPI
// communicator handle is an MPI_Comm value: the communicator's native Open
// MPI communicator (its own duplicate, over the members in this cluster), or
// MPI_COMM_SELF for MMPI_COMM_SELF. A handle not in the table is not an MMPI
// communicator (MPI_ERR_COMM).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "communicator.h"

namespace zipper::client {

class CommTable {
 public:
  /// The communicator behind `h`, or null.
  std::shared_ptr<Comm> find(MPI_Comm h) const;
  /// Registers `c` under `h` (its native communicator, or MPI_COMM_SELF).
  void add(MPI_Comm h, std::shared_ptr<Comm> c);
  /// Unregisters `h`; the communicator lives on while requests hold it.
  bool remove(MPI_Comm h);
  /// Unregisters every communicator, in the order they were created and
  /// MMPI_COMM_WORLD and MMPI_COMM_SELF last (an attribute's delete callback
  /// on one may free a communicator made after it: PETSc's inner
  /// communicators, mpi4py's); re-entrant.
  void clear();

  /// Context ids: the next id no communicator of this process uses; after
  /// the members agreed on `cid` (MAX of their next_cid()), `take(cid)`.
  /// Taking never lowers next_cid(): an MMPI_Comm_idup may take an id it
  /// reserved before other communicators were made (capi/comm_idup.cpp).
  std::uint32_t next_cid() const { return next_cid_; }
  void take(std::uint32_t cid) { next_cid_ = std::max(next_cid_, cid + 1); }

 private:
  std::map<MPI_Comm, std::shared_ptr<Comm>> comms_;
  std::vector<MPI_Comm> created_;  // handles in the order added (clear() frees in it)
  std::uint32_t next_cid_ = kFirstFreeCid;
};

}  // namespace zipper::client
