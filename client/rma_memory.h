// The memory one window exposes at its target: the block of
// MPI_Win_create/_allocate/_allocate_shared, or the regions attached to a
// dynamic window (MPI_Win_attach), whose displacements are addresses.
// A request touches memory only through resolve(): a window never exposes
// memory outside itself.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rma_typemap.h"

namespace zipper::client::rma {

class Memory {
 public:
  /// `base`/`size` (bytes)/`disp_unit` (bytes): this process's memory;
  /// `flavor`: an MPI_WIN_FLAVOR_* value (MPI_WIN_FLAVOR_DYNAMIC: attached
  /// regions only, displacements are addresses).
  Memory(void* base, std::uint64_t size, int disp_unit, int flavor)
      : base_(static_cast<std::byte*>(base)), size_(size), disp_unit_(disp_unit), flavor_(flavor) {}

  void* base() const { return base_; }
  std::uint64_t size() const { return size_; }
  int disp_unit() const { return disp_unit_; }
  int flavor() const { return flavor_; }
  bool dynamic() const { return flavor_ == MPI_WIN_FLAVOR_DYNAMIC; }

  /// Returns MPI_ERR_RMA_ATTACH when [base, base+size) overlaps an attached region.
  int attach(void* base, std::uint64_t size);
  /// Returns MPI_ERR_RMA_ATTACH when `base` starts no attached region.
  int detach(const void* base);

  /// The address of block `b` at displacement `disp` (disp units; an
  /// address for a dynamic window), or null when any byte of it lies
  /// outside the memory.
  std::byte* resolve(std::int64_t disp, const Block& b) const;

 private:
  struct Region {
    std::byte* base;
    std::uint64_t size;
  };
  std::byte* base_;
  std::uint64_t size_;
  int disp_unit_;
  int flavor_;
  std::vector<Region> regions_;  // dynamic windows
};

}  // namespace zipper::client::rma
