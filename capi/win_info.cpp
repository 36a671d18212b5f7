// MPI_Win_get_info for MMPI windows: the hints in effect
// (MPI-3.1 11.2.7: "the current setting of all hints actually used by the
// system"). zipper's protocol uses none of the user's promises, so the
// values are what it provides whatever the window was created with:
//   - accumulate_ordering "rar,raw,war,waw": the target applies each
//     origin's requests in order (docs/rma.md), the strongest ordering;
//   - accumulate_ops "same_op_no_op", no_locks "false", same_size "false":
//     the defaults, under which zipper works (it relies on no promise, so a
//     program that gave one is served as if it had not);
//   - alloc_shared_noncontig: for MPI_Win_allocate_shared, Open MPI's shared
//     window's own answer (the hint is passed to it); otherwise "false".
// Keys zipper does not know are not used, so not returned. MPI_Win_set_info
// passes through to the handle (capi/win_table.h) and changes none of these.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <string_view>

#include "win_table.h"

using namespace zipper::capi;

extern "C" {

int mmpi_impl_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (info_used == nullptr) return MPI_ERR_ARG;
  MPI_Info out = MPI_INFO_NULL;
  if (MPI_Info_create(&out) != MPI_SUCCESS) return MPI_ERR_INTERN;
  char noncontig[16] = "false";
  if (e->native_shared != MPI_WIN_NULL) {
    MPI_Info nat = MPI_INFO_NULL;
    int flag = 0;
    if (MPI_Win_get_info(e->native_shared, &nat) == MPI_SUCCESS && nat != MPI_INFO_NULL) {
      char v[16] = {};
      MPI_Info_get(nat, "alloc_shared_noncontig", sizeof v - 1, v, &flag);
      if (flag && std::string_view(v) == "true") std::string_view("true").copy(noncontig, 5);
      MPI_Info_free(&nat);
    }
  }
  const char* const kv[][2] = {{"no_locks", "false"},
                               {"accumulate_ordering", "rar,raw,war,waw"},
                               {"accumulate_ops", "same_op_no_op"},
                               {"same_size", "false"},
                               {"alloc_shared_noncontig", noncontig}};
  for (const auto& p : kv) {
    if (MPI_Info_set(out, p[0], p[1]) != MPI_SUCCESS) {
      MPI_Info_free(&out);
      return MPI_ERR_INTERN;
    }
  }
  *info_used = out;
  return MPI_SUCCESS;
}

}  // extern "C"
