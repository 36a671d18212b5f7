/* MPI error handlers at libmmpi's API boundary. Every MMPI_ entry point that
 * can fail is generated (capi/gen/gen_c.py) as a thin wrapper around its
 * hand-written mmpi_impl_ twin: on an error code it names the communicator
 * the error belongs to (an argument, the communicator of a request or a
 * matched message, else MMPI_COMM_WORLD) and hands the code to
 * mmpi_err_raise, which applies that communicator's handler:
 *   MPI_ERRORS_ARE_FATAL (the default, inherited by derived communicators):
 *     one line on stderr, then MMPI_Abort with the code: this cluster
 *     aborts, and zipperd relays the abort to the other cluster at once;
 *   MPI_ERRORS_RETURN: the code is returned;
 *   a user handler (MMPI_Comm_create_errhandler): called with the MMPI
 *     communicator handle and the code, then the code is returned.
 * Calls inside libmmpi use the mmpi_impl_ functions, so a handler runs once
 * per failed user call. */
#ifndef MMPI_CAPI_ERRHANDLER_H
#define MMPI_CAPI_ERRHANDLER_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The communicator an error is raised on: an MMPI handle, or MPI_COMM_NULL
 * for MMPI_COMM_WORLD. Plain data, so that a wrapper can take it before the
 * call frees a request. */
typedef struct {
  MPI_Comm comm;
  int given; /* the call was passed `comm` (messages name it, even when invalid) */
} mmpi_err_target;

#define MMPI_ERR_HIDDEN __attribute__((visibility("hidden")))

/* `comm` itself (MMPI_COMM_WORLD's handler when it is no MMPI communicator). */
MMPI_ERR_HIDDEN mmpi_err_target mmpi_err_of_comm(MPI_Comm comm);
/* The communicator of an MMPI request (MMPI_COMM_WORLD for MPI_REQUEST_NULL). */
MMPI_ERR_HIDDEN mmpi_err_target mmpi_err_of_request(MPI_Request request);
/* The communicator of the first non-null request of `requests`. */
MMPI_ERR_HIDDEN mmpi_err_target mmpi_err_of_requests(int count, const MPI_Request requests[]);
/* The communicator of a matched message (MMPI_COMM_WORLD for a null one). */
MMPI_ERR_HIDDEN mmpi_err_target mmpi_err_of_message(MPI_Message message);
/* MMPI_COMM_WORLD: errors that belong to no communicator. */
MMPI_ERR_HIDDEN mmpi_err_target mmpi_err_of_world(void);

/* Applies the target's handler to error code `rc` of the call `fn` (an
 * "MMPI_Xxx" name); returns rc (unless the handler aborted the job). Before
 * MMPI_Init and after MMPI_Finalize it only returns rc. */
MMPI_ERR_HIDDEN int mmpi_err_raise(mmpi_err_target target, int rc, const char* fn);

/* The same for calls on an MMPI window (capi/win_errhandler.cpp): the
 * window's own handler decides (MPI-3.1 8.3.2); a handle that is no MMPI
 * window raises on MMPI_COMM_WORLD. */
MMPI_ERR_HIDDEN int mmpi_win_err_raise(MPI_Win win, int rc, const char* fn);

#ifdef __cplusplus
}
#endif

#endif /* MMPI_CAPI_ERRHANDLER_H */

#ifdef __cplusplus
#include "../client/communicator.h"

namespace zipper::capi {

/// Sets `c`'s handler to `h` (predefined or created by
/// MMPI_Comm_create_errhandler); a user handler is retained until replaced
/// or the communicator is freed. Returns an MPI error code.
int set_errhandler(client::Comm& c, MPI_Errhandler h);
/// A new communicator takes its parent's handler (MPI-3.1 section 8.3).
void inherit_errhandler(const client::Comm& parent, client::Comm& child);

}  // namespace zipper::capi
#endif
