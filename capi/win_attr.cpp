// Attributes of MMPI windows: the predefined ones (MPI-3.1
// 11.2.6) come from the window; user keyvals live on the window's Open MPI
// handle (capi/win_table.h), where MPI_Win_set_attr / _delete_attr put them.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <cstring>

#include "win_table.h"

using namespace zipper::capi;

extern "C" {

int mmpi_impl_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (attribute_val == nullptr || flag == nullptr) return MPI_ERR_ARG;
  void* v = nullptr;
  if (win_keyval == MPI_WIN_BASE)
    v = e->win->base();
  else if (win_keyval == MPI_WIN_SIZE)
    v = &e->attr_size;
  else if (win_keyval == MPI_WIN_DISP_UNIT)
    v = &e->attr_disp_unit;
  else if (win_keyval == MPI_WIN_CREATE_FLAVOR)
    v = &e->attr_flavor;
  else if (win_keyval == MPI_WIN_MODEL)
    v = &e->attr_model;
  else
    return MPI_Win_get_attr(win, win_keyval, attribute_val, flag);
  std::memcpy(attribute_val, &v, sizeof v);
  *flag = 1;
  return MPI_SUCCESS;
}

}  // extern "C"

#include "comm_create.h"

extern "C" {

int MMPIX_Win_comm(MPI_Win win, MPI_Comm* comm) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  *comm = handle_of(*e->comm);
  return MPI_SUCCESS;
}

int MMPIX_Win_refused(MPI_Win win, MPI_Count* refused) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  *refused = static_cast<MPI_Count>(e->win->refused());
  return MPI_SUCCESS;
}

}  // extern "C"
