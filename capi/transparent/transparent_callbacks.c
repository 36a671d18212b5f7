/* The MPI functions whose callbacks receive a communicator: Open MPI calls
 * them with the native handle, which for the zipper world is not
 * MPI_COMM_WORLD; each callback goes through a trampoline that translates it
 * (mmpit_comm_out) before calling the program's function. */
#include <pthread.h>
#include <stdlib.h>

#include "transparent.h"

/* Attribute callbacks: the trampoline finds the program's functions and
 * extra_state in the block Open MPI hands back as extra_state. One block per
 * keyval, kept for the life of the process (keyvals are few). */
struct keyval_fns {
  MPI_Comm_copy_attr_function* copy;
  MPI_Comm_delete_attr_function* del;
  void* extra;
};

static int copy_trampoline(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  const struct keyval_fns* k = extra;
  return k->copy(mmpit_comm_out(comm), keyval, k->extra, in, out, flag);
}

static int delete_trampoline(MPI_Comm comm, int keyval, void* value, void* extra) {
  const struct keyval_fns* k = extra;
  return k->del(mmpit_comm_out(comm), keyval, value, k->extra);
}

static int create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del,
                         int* keyval, void* extra, int deprecated) {
  struct keyval_fns* k = malloc(sizeof *k);
  if (k == NULL) return MPI_ERR_NO_MEM;
  *k = (struct keyval_fns){copy, del, extra};
  MPI_Comm_copy_attr_function* c = copy == MPI_COMM_NULL_COPY_FN ? copy : copy_trampoline;
  MPI_Comm_delete_attr_function* d = del == MPI_COMM_NULL_DELETE_FN ? del : delete_trampoline;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const int rc =
      deprecated ? MMPI_Keyval_create(c, d, keyval, k) : MMPI_Comm_create_keyval(c, d, keyval, k);
#pragma GCC diagnostic pop
  if (rc != MPI_SUCCESS) free(k);
  return rc;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                           void* extra_state) {
  return create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state, 0);
}

/* MPI_Copy_function / MPI_Delete_function have the same shapes. */
int MPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                      void* extra_state) {
  return create_keyval(copy_fn, delete_fn, keyval, extra_state, 1);
}

/* Error handlers: the trampoline asks Open MPI which handler the
 * communicator has and finds the program's function in a table. */
enum { kMaxErrhandlers = 256 };
static struct {
  MPI_Errhandler handle;
  MPI_Comm_errhandler_function* fn;
} errhandlers[kMaxErrhandlers];
static int n_errhandlers;
static pthread_mutex_t errhandlers_lock = PTHREAD_MUTEX_INITIALIZER;

static MPI_Comm_errhandler_function* errhandler_fn(MPI_Errhandler h) {
  MPI_Comm_errhandler_function* fn = NULL;
  pthread_mutex_lock(&errhandlers_lock);
  for (int i = 0; i < n_errhandlers && fn == NULL; ++i)
    if (errhandlers[i].handle == h) fn = errhandlers[i].fn;
  pthread_mutex_unlock(&errhandlers_lock);
  return fn;
}

static void errhandler_trampoline(MPI_Comm* comm, int* code, ...) {
  MPI_Errhandler h = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(*comm, &h) != MPI_SUCCESS) return;
  MPI_Comm_errhandler_function* fn = errhandler_fn(h);
  PMPI_Errhandler_free(&h);
  if (fn == NULL) return;
  MPI_Comm c = mmpit_comm_out(*comm);
  fn(&c, code);
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* comm_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  pthread_mutex_lock(&errhandlers_lock);
  int rc = MMPI_Comm_create_errhandler(errhandler_trampoline, errhandler);
  if (rc == MPI_SUCCESS) {
    /* A freed handler's handle may come back: its slot is reused. */
    int i = 0;
    while (i < n_errhandlers && errhandlers[i].handle != *errhandler) ++i;
    if (i == kMaxErrhandlers) {
      PMPI_Errhandler_free(errhandler); /* the program made 256 error handlers */
      rc = MPI_ERR_NO_MEM;
    } else {
      errhandlers[i].handle = *errhandler;
      errhandlers[i].fn = comm_errhandler_fn;
      if (i == n_errhandlers) ++n_errhandlers;
    }
  }
  pthread_mutex_unlock(&errhandlers_lock);
  return rc;
}
