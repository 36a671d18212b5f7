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

  /// Context ids, in two disjoint spaces. Blocking constructors (one at a
  /// time in a process) use the even ids: the next one no communicator of
  /// this process uses is next_cid(); after the members agreed on `cid` (MAX
  /// of their next_cid()), `take(cid)`. MMPI_Comm_idup (capi/comm_idup.cpp)
  /// uses the odd ids, next_idup_cid() and take_idup(): it reserves and
  /// confirms ids while blocking constructors run, and a blocking agreement
  /// could otherwise settle on an id an idup of one of its members took
  /// meanwhile (the MAX is above that member's proposal). Taking never lowers
  /// either next id.
  std::uint32_t next_cid() const { return next_even_; }
  void take(std::uint32_t cid) { next_even_ = std::max(next_even_, (cid + 2) & ~1u); }
  std::uint32_t next_idup_cid() const { return next_odd_; }
  void take_idup(std::uint32_t cid) { next_odd_ = std::max(next_odd_, (cid + 1) | 1u); }

 private:
  std::map<MPI_Comm, std::shared_ptr<Comm>> comms_;
  std::vector<MPI_Comm> created_;                // handles in the order added (clear() frees in it)
  std::uint32_t next_even_ = kFirstFreeCid;      // blocking constructors
  std::uint32_t next_odd_ = kFirstFreeCid | 1u;  // MMPI_Comm_idup
};

}  // namespace zipper::client
