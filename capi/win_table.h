// MMPI window handles. An MMPI_Win is a real Open MPI window: a
// dynamic window over MPI_COMM_SELF with nothing attached, which carries
// what MPI keeps on a window handle (name, info, user attributes, error
// handler, Fortran handle) so that those calls pass through to Open MPI.
// The window itself, the memory and the one-sided protocol, is a
// client::rma::Window looked up here by that handle.
#pragma once

#include <mpi.h>

#include <memory>

#include "../client/rma_window.h"

namespace zipper::capi {

/// Everything behind one MMPI window handle.
struct WinEntry {
  std::unique_ptr<client::rma::Window> win;
  std::shared_ptr<client::Comm> comm;    // the window's private communicator
  std::unique_ptr<std::byte[]> owned;    // MPI_Win_allocate's memory
  MPI_Win native_shared = MPI_WIN_NULL;  // MPI_Win_allocate_shared: Open MPI's shared window
  // Values MPI_Win_get_attr hands out by address (MPI-3.1 11.2.6).
  MPI_Aint attr_size = 0;
  int attr_disp_unit = 1;
  int attr_flavor = MPI_WIN_FLAVOR_CREATE;
  int attr_model = MPI_WIN_SEPARATE;
};

/// The entry of window handle `w`, or null (MPI_ERR_WIN) when it is none.
WinEntry* find_win(MPI_Win w);
/// Registers `e` under `w`.
void add_win(MPI_Win w, std::unique_ptr<WinEntry> e);
/// Removes and returns the entry of `w` (null when none).
std::unique_ptr<WinEntry> remove_win(MPI_Win w);

}  // namespace zipper::capi
