// Errors on MMPI windows. The handler lives on the window's
// Open MPI handle (capi/win_table.h), so MPI_Win_set_errhandler,
// _get_errhandler, _create_errhandler and _call_errhandler pass through;
// raising one from a failed MMPI_ call is done here.
#include <mmpi.h>

#include <cstdio>

#include "../client/runtime.h"
#include "errhandler.h"
#include "win_table.h"

using zipper::client::Runtime;

extern "C" int mmpi_win_err_raise(MPI_Win win, int rc, const char* fn) {
  Runtime* rt = Runtime::get();
  if (rc == MPI_SUCCESS || rt == nullptr) return rc;
  if (zipper::capi::find_win(win) == nullptr) return mmpi_err_raise(mmpi_err_of_world(), rc, fn);
  MPI_Errhandler h = MPI_ERRHANDLER_NULL;
  MPI_Win_get_errhandler(win, &h);
  if (h == MPI_ERRORS_ARE_FATAL) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "%d", rc);
    std::fprintf(stderr,
                 "mmpi[rank %d]: %s on a window failed: %s; MPI_ERRORS_ARE_FATAL: aborting the "
                 "job\n",
                 rt->rank(), fn, text);
    std::fflush(stderr);
    MMPI_Abort(MPI_COMM_WORLD, rc);  // ends both clusters
  } else if (h != MPI_ERRORS_RETURN) {
    MPI_Win_call_errhandler(win, rc);  // the user's function, with this handle
  }
  if (h != MPI_ERRHANDLER_NULL && h != MPI_ERRORS_ARE_FATAL && h != MPI_ERRORS_RETURN)
    MPI_Errhandler_free(&h);
  return rc;
}
