/* An unmodified MPI program (plain mpi.h, never ported) that checks how
 * libmmpi_transparent translates MPI_COMM_WORLD wherever a communicator goes
 * in or comes out: the world spans both clusters, compares as itself and as
 * congruent to a dup, is named MPI_COMM_WORLD, has Open MPI's Fortran value
 * 0 both ways, and reaches attribute delete callbacks and error handlers as
 * MPI_COMM_WORLD. Run by run_itest.sh through the layer; usage:
 * transparent_comm_itest translation. Rank 0 prints "PASS translation ...". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1, checks;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    ++checks;                                              \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL translation rank %d: ", rank); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      MPI_Abort(MPI_COMM_WORLD, 1);                        \
    }                                                      \
  } while (0)

static MPI_Comm deleted_on = MPI_COMM_NULL;
static int delete_calls, delete_extra_ok;
static int delete_fn(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)keyval, (void)value;
  deleted_on = comm;
  ++delete_calls;
  delete_extra_ok = extra == (void*)&delete_calls;
  return MPI_SUCCESS;
}

static MPI_Comm handled_on = MPI_COMM_NULL;
static int handled_code;
static void handler(MPI_Comm* comm, int* code, ...) {
  handled_on = *comm;
  handled_code = *code;
}

int main(int argc, char** argv) {
  if (argc != 2 || strcmp(argv[1], "translation") != 0) {
    fprintf(stderr, "usage: transparent_comm_itest translation\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* x = getenv("MMPI_NP_LOW");
  const char* y = getenv("MMPI_NP_HIGH");
  CHECK(x && y && size == atoi(x) + atoi(y), "world size %d, launcher says %s+%s", size, x, y);

  int result = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result);
  CHECK(result == MPI_IDENT, "compare(world, world) = %d", result);
  MPI_Comm dup;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS, "dup of the world");
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
  CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
  int dup_size = 0;
  MPI_Comm_size(dup, &dup_size);
  CHECK(dup_size == size, "dup has %d ranks", dup_size);
  MPI_Comm_free(&dup);
  CHECK(dup == MPI_COMM_NULL, "freed dup not MPI_COMM_NULL");

  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world is named '%s'", name);
  MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
  CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self is named '%s'", name);

  CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == 0, "Comm_c2f(world) = %d",
        (int)MPI_Comm_c2f(MPI_COMM_WORLD));
  CHECK(MPI_Comm_f2c(0) == MPI_COMM_WORLD, "Comm_f2c(0) is not MPI_COMM_WORLD");
  CHECK(MPI_Comm_f2c(1) == MPI_COMM_SELF, "Comm_f2c(1) is not MPI_COMM_SELF");

  /* Attribute delete callback: called by Open MPI on the world's native
   * communicator; the program must see MPI_COMM_WORLD and its extra_state. */
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, &delete_calls);
  static int value = 42;
  MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &value);
  int* got = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
  CHECK(flag && got == &value, "attribute not found on the world");
  MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
  CHECK(delete_calls == 1 && deleted_on == MPI_COMM_WORLD && delete_extra_ok,
        "delete callback: %d calls, on the world: %d, extra_state kept: %d", delete_calls,
        deleted_on == MPI_COMM_WORLD, delete_extra_ok);
  MPI_Comm_free_keyval(&keyval);

  /* Error handler: called with MPI_COMM_WORLD, the code passed through. */
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
  CHECK(handled_on == MPI_COMM_WORLD && handled_code == MPI_ERR_OTHER,
        "error handler: on the world: %d, code %d", handled_on == MPI_COMM_WORLD, handled_code);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);

  /* A message across the cluster boundary on the world: 0 -> last rank. */
  int token = rank == 0 ? 12345 : -1;
  if (rank == 0) MPI_Send(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD);
  if (rank == size - 1) {
    MPI_Status st;
    MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
    CHECK(token == 12345 && st.MPI_SOURCE == 0, "token %d from %d", token, st.MPI_SOURCE);
  }
  int all = 0;
  MPI_Reduce(&checks, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("PASS translation %d checks on %d ranks\n", all, size);
  MPI_Finalize();
  return 0;
}
