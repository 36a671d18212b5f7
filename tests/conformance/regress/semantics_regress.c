/* Regression tests of the wrong results the MPICH test suite found,
 * unmodified MPI run through libmmpi_transparent across the clusters.
 * usage: semantics_regress TEST; prints "PASS TEST ..." when every check holds.
 *   status_error   single-completion calls leave status.MPI_ERROR as it was
 *   type_freed     a derived datatype freed while a receive using it is pending
 *   op_freed       a user MPI_Op freed before the MPI_Ireduce using it completes
 *   split_undef    MPI_Comm_split_type with MPI_UNDEFINED on some ranks
 *   create_disjoint MPI_Comm_create with disjoint groups (even / odd ranks)
 *   alltoallw_zeros zero-size types in Alltoallw / Alltoallv (also in place)
 *   attributes     attributes on MPI_COMM_SELF and MPI_COMM_WORLD read back as
 *                  set, copied by Comm_dup, deleted by Comm_free, MPI_COMM_SELF's
 *                  first at MPI_Finalize, a delete callback freeing a communicator
 *   unsupported    a function zipper refuses raises its error through the error
 *                  handler of its communicator (a user handler here)
 *   idup           MPI_Comm_idup does not block: rank 0 starts its idup only after
 *                  every other rank started theirs and Ssent to it; overlapped with
 *                  a blocking Comm_dup and a second idup of the same parent; also
 *                  on an inter-communicator; the duplicates work (Allreduce checked)
 *   idup_inter     five idups of an inter-communicator whose groups share a cluster
 *                  (even and odd world ranks), each behind an Ibarrier on it, and an
 *                  idup of the local group's communicator, all in flight at once
 *                  (MPICH comm/comm_idup_nb at 3+3 and 1+5: Open MPI 4.1 hangs on an
 *                  idup of its own inter-communicator overlapping other idups); every
 *                  duplicate's point-to-point and Allreduce checked
 *   progress_coll  a rank held in a collective (barrier, allreduce, bcast, allgather(v),
 *                  scatter, scan, alltoall(v), reduce_scatter_block) completes an Ssend
 *                  matched by a receive it posted before (MPICH pt2pt/rqstatus's pattern)
 *   cart_pair      neighbour alltoall on a periodic 2x2 torus, where both neighbours of a
 *                  dimension are one process: the block sent to the +1 neighbour arrives
 *                  in the -1 slot (MPICH coll/ring_neighbor_alltoall)
 *   partial_elem   a message shorter than one element of the receive type fills its
 *                  leading basic elements (MPICH datatype/getpartelm) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errors;

#define CHECK(cond, ...)                                           \
  do {                                                             \
    if (!(cond)) {                                                 \
      ++errors;                                                    \
      fprintf(stderr, "rank %d: check failed: %s: ", rank, #cond); \
      fprintf(stderr, __VA_ARGS__);                                \
      fprintf(stderr, "\n");                                       \
    }                                                              \
  } while (0)

/* ---- status_error ---- */
static void status_error(void) {
  const int peer = rank == 0 ? size - 1 : 0; /* rank 0 and the last rank: other clusters */
  if (rank != 0 && rank != size - 1) return;
  int v = 7, got = 0;
  MPI_Status st;
  MPI_Request req;
  MPI_Message msg;
  if (rank == 0) {
    for (int i = 0; i < 5; ++i) MPI_Send(&v, 1, MPI_INT, peer, i, MPI_COMM_WORLD);
  } else {
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Recv(&got, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Recv set MPI_ERROR to %d", st.MPI_ERROR);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Probe(peer, 1, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Probe set MPI_ERROR to %d", st.MPI_ERROR);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Mprobe(peer, 1, MPI_COMM_WORLD, &msg, &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Mprobe set MPI_ERROR to %d", st.MPI_ERROR);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Mrecv(&got, 1, MPI_INT, &msg, &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Mrecv set MPI_ERROR to %d", st.MPI_ERROR);
    MPI_Mprobe(peer, 2, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
    MPI_Imrecv(&got, 1, MPI_INT, &msg, &req);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Wait(&req, &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Wait (Imrecv) set MPI_ERROR to %d", st.MPI_ERROR);
    MPI_Irecv(&got, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &req);
    int flag = 0;
    while (!flag) {
      st.MPI_ERROR = MPI_ERR_DIMS;
      MPI_Test(&req, &flag, &st);
    }
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Test set MPI_ERROR to %d", st.MPI_ERROR);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Sendrecv(&v, 0, MPI_INT, MPI_PROC_NULL, 0, &got, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Sendrecv set MPI_ERROR to %d", st.MPI_ERROR);
    CHECK(got == 7, "received %d", got);
  }
}

/* ---- type_freed ---- */
static void type_freed(void) {
  enum { N = 64, STRIDE = 3 };
  if (rank != 0 && rank != size - 1) return;
  const int peer = rank == 0 ? size - 1 : 0;
  int buf[N * STRIDE];
  if (rank == size - 1) {
    for (int small = 0; small < 2; ++small) { /* eager, then rendezvous-sized */
      const int count = small ? 1 : 200;
      int* big = calloc((size_t)N * STRIDE * count, sizeof(int));
      MPI_Datatype vec;
      MPI_Type_vector(N * count, 1, STRIDE, MPI_INT, &vec);
      MPI_Type_commit(&vec);
      MPI_Request req;
      MPI_Irecv(big, 1, vec, peer, 10 + small, MPI_COMM_WORLD, &req);
      MPI_Type_free(&vec); /* legal: the receive keeps using the type */
      /* a new type that could reuse the freed one's slot */
      MPI_Datatype other;
      MPI_Type_contiguous(5, MPI_INT, &other);
      MPI_Type_commit(&other);
      MPI_Send(&rank, 0, MPI_INT, peer, 99, MPI_COMM_WORLD); /* now send */
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      MPI_Type_free(&other);
      for (int i = 0; i < N * count; ++i) {
        CHECK(big[i * STRIDE] == i + 1, "count %d: element %d is %d", count, i, big[i * STRIDE]);
        if (big[i * STRIDE] != i + 1) break;
        CHECK(big[i * STRIDE + 1] == 0, "gap %d written", i);
      }
      free(big);
    }
  } else {
    for (int small = 0; small < 2; ++small) {
      const int count = small ? 1 : 200;
      int* data = malloc((size_t)N * count * sizeof(int));
      for (int i = 0; i < N * count; ++i) data[i] = i + 1;
      MPI_Recv(NULL, 0, MPI_INT, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(data, N * count, MPI_INT, peer, 10 + small, MPI_COMM_WORLD);
      free(data);
    }
  }
  (void)buf;
}

/* ---- op_freed ---- */
static void my_max(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i)
    if (((int*)in)[i] > ((int*)inout)[i]) ((int*)inout)[i] = ((int*)in)[i];
}

static void op_freed(void) {
  enum { N = 1000 };
  int in[N], out[N];
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < N; ++i) in[i] = (rank * 7 + i * 13 + round) % (size * 5);
    MPI_Op op;
    MPI_Op_create(my_max, 1, &op);
    MPI_Request req;
    const int root = round % size;
    MPI_Ireduce(in, out, N, MPI_INT, op, root, MPI_COMM_WORLD, &req);
    MPI_Op_free(&op); /* legal: the reduction keeps using it */
    CHECK(op == MPI_OP_NULL, "Op_free left the handle set");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank == root)
      for (int i = 0; i < N; ++i) {
        int want = 0;
        for (int r = 0; r < size; ++r) {
          const int v = (r * 7 + i * 13 + round) % (size * 5);
          if (v > want) want = v;
        }
        CHECK(out[i] == want, "round %d: element %d is %d, want %d", round, i, out[i], want);
        if (out[i] != want) break;
      }
  }
}

/* ---- split_undef ---- */
static void split_undef(void) {
  MPI_Comm node = MPI_COMM_NULL;
  const int type = rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED;
  MPI_Comm_split_type(MPI_COMM_WORLD, type, rank, MPI_INFO_NULL, &node);
  if (rank % 2) {
    CHECK(node == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
  } else {
    CHECK(node != MPI_COMM_NULL, "MPI_COMM_TYPE_SHARED gave MPI_COMM_NULL");
    if (node != MPI_COMM_NULL) {
      int n = 0, sum = 0;
      MPI_Comm_size(node, &n);
      CHECK(n >= 1 && n <= (size + 1) / 2, "node communicator of %d ranks", n);
      MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, node);
      CHECK(sum % 2 == 0, "odd ranks in the node communicator (sum %d)", sum);
      MPI_Comm_free(&node);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- create_disjoint ---- */
static void create_disjoint(void) {
  MPI_Group world, mine;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int members[64], n = 0;
  for (int r = rank % 2; r < size; r += 2) members[n++] = r;
  MPI_Group_incl(world, n, members, &mine);
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_create(MPI_COMM_WORLD, mine, &c);
  CHECK(c != MPI_COMM_NULL, "no communicator");
  if (c != MPI_COMM_NULL) {
    int csize = 0, crank = -1, sum = 0, want = 0;
    MPI_Comm_size(c, &csize);
    MPI_Comm_rank(c, &crank);
    CHECK(csize == n, "size %d, want %d", csize, n);
    CHECK(crank == rank / 2, "rank %d, want %d", crank, rank / 2);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    for (int i = 0; i < n; ++i) want += members[i];
    CHECK(sum == want, "sum of world ranks %d, want %d", sum, want);
    MPI_Comm_free(&c);
  }
  MPI_Group_free(&mine);
  MPI_Group_free(&world);
}

/* ---- alltoallw_zeros ---- */
static void alltoallw_zeros(void) {
  int sendbuf = 0, recvbuf = 0;
  int* sc = calloc(size, sizeof(int));
  int* rc = calloc(size, sizeof(int));
  int* d = calloc(size, sizeof(int));
  MPI_Datatype* st = malloc(size * sizeof(MPI_Datatype));
  MPI_Datatype* rt = malloc(size * sizeof(MPI_Datatype));
  MPI_Datatype zero;
  MPI_Type_contiguous(0, MPI_INT, &zero);
  MPI_Type_commit(&zero);
  for (int i = 0; i < size; ++i) {
    st[i] = zero;
    sc[i] = 1;
    rt[i] = MPI_INT;
    rc[i] = 0;
  }
  MPI_Alltoallw(&sendbuf, sc, d, st, &recvbuf, rc, d, rt, MPI_COMM_WORLD);
  MPI_Alltoallw(&sendbuf, rc, d, rt, &recvbuf, sc, d, st, MPI_COMM_WORLD);
  MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, &recvbuf, rank % 2 ? rc : sc, d, rank % 2 ? rt : st,
                MPI_COMM_WORLD);
  MPI_Alltoallv(&sendbuf, sc, d, zero, &recvbuf, rc, d, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoallv(&sendbuf, rc, d, MPI_INT, &recvbuf, sc, d, zero, MPI_COMM_WORLD);
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, &recvbuf, rank % 2 ? rc : sc, d,
                rank % 2 ? MPI_INT : zero, MPI_COMM_WORLD);
  /* A real exchange afterwards: nothing of the above may be left in flight. */
  int* a = malloc(size * sizeof(int));
  int* b = malloc(size * sizeof(int));
  for (int i = 0; i < size; ++i) a[i] = rank * 100 + i;
  MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; ++i) CHECK(b[i] == i * 100 + rank, "b[%d] = %d", i, b[i]);
  MPI_Type_free(&zero);
  free(a), free(b), free(sc), free(rc), free(d), free(st), free(rt);
}

/* ---- attributes ---- */
static int order[16], norder;
static MPI_Comm victim = MPI_COMM_NULL;
static int copies;

static int copy_fn(MPI_Comm c, int k, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)k, (void)extra;
  ++copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_self(MPI_Comm c, int k, void* v, void* extra) {
  (void)c, (void)k, (void)extra;
  if (norder < 16) order[norder++] = (int)(size_t)v;
  return MPI_SUCCESS;
}
static int delete_frees(MPI_Comm c, int k, void* v, void* extra) {
  (void)c, (void)k, (void)extra;
  if (norder < 16) order[norder++] = (int)(size_t)v;
  if (victim != MPI_COMM_NULL) MPI_Comm_free(&victim); /* re-entrant: frees another one */
  return MPI_SUCCESS;
}

static int attributes_before_finalize(void) {
  int k_self, k_world, k_leak;
  MPI_Comm_create_keyval(copy_fn, delete_self, &k_self, NULL);
  MPI_Comm_create_keyval(copy_fn, delete_self, &k_world, NULL);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_frees, &k_leak, NULL);
  void* v = NULL;
  int flag = 0;
  MPI_Comm_set_attr(MPI_COMM_SELF, k_self, (void*)(size_t)1);
  MPI_Comm_get_attr(MPI_COMM_SELF, k_self, &v, &flag);
  CHECK(flag && v == (void*)(size_t)1, "MPI_COMM_SELF: flag %d value %p", flag, v);
  MPI_Comm_set_attr(MPI_COMM_WORLD, k_world, (void*)(size_t)2);
  MPI_Comm_get_attr(MPI_COMM_WORLD, k_world, &v, &flag);
  CHECK(flag && v == (void*)(size_t)2, "MPI_COMM_WORLD: flag %d value %p", flag, v);
  /* Comm_dup runs the copy callback; Comm_free the delete callback. */
  MPI_Comm d;
  copies = 0;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  CHECK(copies == 1, "Comm_dup ran %d copy callbacks", copies);
  MPI_Comm_get_attr(d, k_world, &v, &flag);
  CHECK(flag && v == (void*)(size_t)2, "dup: flag %d value %p", flag, v);
  MPI_Comm dself;
  MPI_Comm_dup(MPI_COMM_SELF, &dself);
  MPI_Comm_get_attr(dself, k_self, &v, &flag);
  CHECK(flag && v == (void*)(size_t)1, "dup of MPI_COMM_SELF: flag %d value %p", flag, v);
  norder = 0;
  MPI_Comm_free(&dself);
  MPI_Comm_free(&d);
  CHECK(norder == 2, "Comm_free ran %d delete callbacks", norder);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, k_world);
  /* Left to MPI_Finalize: MPI_COMM_SELF's attribute (value 1), and a
   * communicator never freed whose delete callback frees another one. */
  norder = 0;
  MPI_Comm leak;
  MPI_Comm_dup(MPI_COMM_WORLD, &leak);
  MPI_Comm_dup(MPI_COMM_WORLD, &victim);
  MPI_Comm_set_attr(leak, k_leak, (void*)(size_t)3);
  return 0;
}

/* ---- unsupported ---- */
static int handler_calls, handler_class;
static void count_errors(MPI_Comm* c, int* code, ...) {
  (void)c;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

static void unsupported(void) {
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(count_errors, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  /* Dynamic processes stay refused (the clusters are launched once). */
  char port[MPI_MAX_PORT_NAME] = "zipper-no-such-port";
  MPI_Comm inter = MPI_COMM_NULL;
  const int rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "Comm_accept returned class %d", cls);
  CHECK(handler_calls == 1 && handler_class == MPI_ERR_UNSUPPORTED_OPERATION,
        "the handler ran %d times (class %d)", handler_calls, handler_class);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
}

/* ---- idup ---- */
/* Sum of the ranks of `c` through an Allreduce on it, against n(n-1)/2. */
static void check_sum(MPI_Comm c, const char* what) {
  int r = 0, n = 0, sum = -1;
  MPI_Comm_rank(c, &r);
  MPI_Comm_size(c, &n);
  MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c);
  CHECK(sum == n * (n - 1) / 2, "%s: Allreduce gave %d, expected %d", what, sum, n * (n - 1) / 2);
}

static void idup(void) {
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL, d = MPI_COMM_NULL;
  MPI_Request req[2];
  int token = rank;
  /* Rank 0 is held in receives until everyone else started: a blocking
   * duplicate on the others would deadlock here. */
  if (rank == 0) {
    for (int i = 1; i < size; ++i)
      MPI_Recv(&token, 1, MPI_INT, i, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Comm_idup(MPI_COMM_WORLD, &a, &req[0]);
  } else {
    MPI_Comm_idup(MPI_COMM_WORLD, &a, &req[0]);
    MPI_Ssend(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  }
  /* A blocking constructor and a second idup while the first runs. */
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Comm_idup(MPI_COMM_WORLD, &b, &req[1]);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  int cmp = -1;
  MPI_Comm_compare(a, MPI_COMM_WORLD, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "idup compares %d with its parent", cmp);
  MPI_Comm_compare(a, b, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "two idups compare %d", cmp);
  check_sum(a, "first idup");
  check_sum(b, "second idup");
  check_sum(d, "dup");
  /* Traffic on the duplicates never matches traffic of the parent. */
  if (size > 1 && (rank == 0 || rank == size - 1)) {
    const int peer = rank == 0 ? size - 1 : 0;
    int x = 100 + rank, y = -1, z = -1;
    MPI_Request rr[2];
    MPI_Irecv(&y, 1, MPI_INT, peer, 7, a, &rr[0]);
    MPI_Irecv(&z, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &rr[1]);
    int w = 200 + rank;
    MPI_Send(&w, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
    MPI_Send(&x, 1, MPI_INT, peer, 7, a);
    MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
    CHECK(y == 100 + peer && z == 200 + peer, "idup traffic mixed: %d %d", y, z);
  }
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  MPI_Comm_free(&d);

  /* An inter-communicator between even and odd world ranks, duplicated
   * with the same stagger: local leaders receive before their idup. */
  if (size < 2) return;
  MPI_Comm local, ic, icd;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &ic);
  int lrank, rsize;
  MPI_Comm_rank(ic, &lrank);
  MPI_Comm_remote_size(ic, &rsize);
  if (lrank == 0) {
    for (int i = 1; i < rsize; ++i) MPI_Recv(&token, 1, MPI_INT, i, 6, ic, MPI_STATUS_IGNORE);
    MPI_Comm_idup(ic, &icd, &req[0]);
  } else {
    MPI_Comm_idup(ic, &icd, &req[0]);
    MPI_Ssend(&token, 1, MPI_INT, 0, 6, ic);
  }
  MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  int inter = 0, rs = -1, sum = -1;
  MPI_Comm_test_inter(icd, &inter);
  MPI_Comm_remote_size(icd, &rs);
  CHECK(inter && rs == rsize, "inter idup: inter %d, remote size %d of %d", inter, rs, rsize);
  /* Inter-communicator Allreduce: each side gets the other side's sum. */
  MPI_Allreduce(&lrank, &sum, 1, MPI_INT, MPI_SUM, icd);
  CHECK(sum == rsize * (rsize - 1) / 2, "inter idup Allreduce %d, expected %d", sum,
        rsize * (rsize - 1) / 2);
  MPI_Comm_free(&icd);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
}

/* ---- progress_coll ---- */
/* Round `c` of progress_coll: collective number c on MPI_COMM_WORLD, with
 * its results checked against values computed here. */
static void progress_coll_round(int c) {
  const int n = size;
  int one = 1, sum = -1;
  int *all = malloc(sizeof(int) * n), *counts = malloc(sizeof(int) * n),
      *displs = malloc(sizeof(int) * n), *mine = malloc(sizeof(int) * n);
  for (int i = 0; i < n; ++i) {
    all[i] = -1;
    counts[i] = 1;
    displs[i] = i;
    mine[i] = 100 * rank + i; /* what this rank sends to rank i (alltoall) */
  }
  switch (c) {
    case 0:
      MPI_Barrier(MPI_COMM_WORLD);
      break;
    case 1:
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      CHECK(sum == n, "Allreduce gave %d", sum);
      break;
    case 2:
      sum = rank == 0 ? 77 : -1;
      MPI_Bcast(&sum, 1, MPI_INT, 0, MPI_COMM_WORLD);
      CHECK(sum == 77, "Bcast gave %d", sum);
      break;
    case 3:
      MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
      for (int i = 0; i < n; ++i) CHECK(all[i] == i, "Allgather block %d is %d", i, all[i]);
      break;
    case 4:
      MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
      for (int i = 0; i < n; ++i) CHECK(all[i] == i, "Allgatherv block %d is %d", i, all[i]);
      break;
    case 5:
      MPI_Scatter(mine, 1, MPI_INT, &sum, 1, MPI_INT, 0, MPI_COMM_WORLD);
      CHECK(sum == rank, "Scatter gave %d", sum); /* rank 0's mine[rank] = rank */
      break;
    case 6:
      MPI_Scan(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      CHECK(sum == rank + 1, "Scan gave %d", sum);
      break;
    case 7:
      MPI_Alltoall(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
      for (int i = 0; i < n; ++i)
        CHECK(all[i] == 100 * i + rank, "Alltoall block %d is %d", i, all[i]);
      break;
    case 8:
      MPI_Alltoallv(mine, counts, displs, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
      for (int i = 0; i < n; ++i)
        CHECK(all[i] == 100 * i + rank, "Alltoallv block %d is %d", i, all[i]);
      break;
    case 9:
      MPI_Reduce_scatter_block(mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      /* sum over ranks r of 100 r + rank */
      CHECK(sum == 100 * n * (n - 1) / 2 + n * rank, "Reduce_scatter_block gave %d", sum);
      break;
  }
  free(all);
  free(counts);
  free(displs);
  free(mine);
}

static void progress_coll(void) {
  /* The last rank posts a receive and enters a collective; rank 0 (the other
   * cluster) Ssends to it before its own call. A rank held in any step of
   * the collective (a native one within its cluster too) must complete the
   * Ssend, else rank 0 never reaches the collective. One round per
   * collective: barrier, allreduce, bcast, allgather(v), scatter, scan,
   * alltoall(v), reduce_scatter_block. */
  const int last = size - 1;
  for (int c = 0; c < 10; ++c) {
    int v = 40 + c, got = -1;
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == last) MPI_Irecv(&got, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &req);
    if (rank == 0 && last != 0) MPI_Ssend(&v, 1, MPI_INT, last, 11, MPI_COMM_WORLD);
    progress_coll_round(c);
    if (rank == last) {
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      CHECK(got == 40 + c, "round %d received %d", c, got);
    }
  }
}

/* ---- cart_pair ---- */
static void cart_pair(void) {
  /* 2 x 2, periodic: both neighbours in each dimension are one process
   * (dimension 0 across the clusters at 2+2). Block k this rank sends is
   * 100 rank + k; receive slot 2d (from the -1 neighbour P) must hold what P
   * sent in the +1 direction (slot 2d+1), and slot 2d+1 what it sent in the
   * -1 direction. Blocking, non-blocking and the v form (natively, Open MPI
   * 4.1's non-blocking form gives the other order; its blocking forms and
   * MPICH give this one). */
  if (size != 4) return;
  int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int me, send[4], recv[4], counts[4] = {1, 1, 1, 1}, displs[4] = {0, 1, 2, 3};
  MPI_Comm_rank(cart, &me);
  for (int k = 0; k < 4; ++k) send[k] = 100 * me + k;
  for (int form = 0; form < 3; ++form) {
    for (int k = 0; k < 4; ++k) recv[k] = -1;
    if (form == 0) {
      MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, cart);
    } else if (form == 1) {
      MPI_Request r;
      MPI_Ineighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, cart, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      MPI_Neighbor_alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, cart);
    }
    for (int d = 0; d < 2; ++d) {
      int src, dst;
      MPI_Cart_shift(cart, d, 1, &src, &dst);
      CHECK(src == dst, "dimension %d: neighbours %d and %d", d, src, dst);
      CHECK(recv[2 * d] == 100 * src + 2 * d + 1, "form %d: slot %d holds %d, expected %d", form,
            2 * d, recv[2 * d], 100 * src + 2 * d + 1);
      CHECK(recv[2 * d + 1] == 100 * dst + 2 * d, "form %d: slot %d holds %d, expected %d", form,
            2 * d + 1, recv[2 * d + 1], 100 * dst + 2 * d);
    }
  }
  MPI_Comm_free(&cart);
}

/* ---- partial_elem ---- */
static void partial_elem(void) {
  /* Rank 0 sends {int n, n chars} to the last rank (the other cluster),
   * which receives one {int, 64 chars} element: the int and the n chars
   * arrive, the rest of the buffer is untouched, MPI_Get_elements gives
   * n + 1 and MPI_Get_count MPI_UNDEFINED. Receive types with the chars
   * right after the int (contiguous) and after a gap (not contiguous). */
  const int last = size - 1;
  for (int gap = 0; gap < 2; ++gap) {
    const MPI_Aint at = gap ? 8 : (MPI_Aint)sizeof(int);
    int n = 17 + gap;
    if (rank == 0) {
      char out[128];
      memcpy(out, &n, sizeof n);
      for (int i = 0; i < n; ++i) out[at + i] = (char)('a' + i);
      int lens[2] = {1, n};
      MPI_Aint displs[2] = {0, at};
      MPI_Datatype types[2] = {MPI_INT, MPI_CHAR}, t;
      MPI_Type_create_struct(2, lens, displs, types, &t);
      MPI_Type_commit(&t);
      MPI_Send(out, 1, t, last, 20 + gap, MPI_COMM_WORLD);
      MPI_Type_free(&t);
    } else if (rank == last) {
      char in[128];
      memset(in, 'z', sizeof in);
      int lens[2] = {1, 64}, got = 0, elems = 0, count = 0;
      MPI_Aint displs[2] = {0, at};
      MPI_Datatype types[2] = {MPI_INT, MPI_CHAR}, t;
      MPI_Type_create_struct(2, lens, displs, types, &t);
      MPI_Type_commit(&t);
      MPI_Status st;
      MPI_Recv(in, 1, t, 0, 20 + gap, MPI_COMM_WORLD, &st);
      memcpy(&got, in, sizeof got);
      CHECK(got == n, "gap %d: the int is %d, expected %d", gap, got, n);
      for (int i = 0; i < n; ++i)
        CHECK(in[at + i] == (char)('a' + i), "gap %d: char %d is %d", gap, i, in[at + i]);
      for (MPI_Aint i = at + n; i < (MPI_Aint)sizeof in; ++i)
        CHECK(in[i] == 'z', "gap %d: byte %ld beyond the message changed", gap, (long)i);
      MPI_Get_elements(&st, t, &elems);
      CHECK(elems == n + 1, "gap %d: Get_elements %d, expected %d", gap, elems, n + 1);
      MPI_Get_count(&st, t, &count);
      CHECK(count == MPI_UNDEFINED, "gap %d: Get_count %d", gap, count);
      MPI_Type_free(&t);
    }
  }
}

/* ---- idup_inter ---- */
enum { kInterDups = 5 };

static void idup_inter(void) {
  if (size < 2) return;
  MPI_Comm local, ic, dup[kInterDups], ldup;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 11, &ic);
  int lrank, lsize, rsize;
  MPI_Comm_rank(ic, &lrank);
  MPI_Comm_size(ic, &lsize);
  MPI_Comm_remote_size(ic, &rsize);
  MPI_Request req[2 * kInterDups + 1];
  for (int i = 0; i < kInterDups; ++i) {
    MPI_Ibarrier(ic, &req[i]);
    MPI_Comm_idup(ic, &dup[i], &req[kInterDups + i]);
  }
  MPI_Comm_idup(local, &ldup, &req[2 * kInterDups]);
  MPI_Waitall(2 * kInterDups + 1, req, MPI_STATUSES_IGNORE);
  check_sum(ldup, "idup of the local group");
  for (int i = 0; i < kInterDups; ++i) {
    int flag = 0, n = -1;
    MPI_Comm_test_inter(dup[i], &flag);
    MPI_Comm_remote_size(dup[i], &n);
    CHECK(flag && n == rsize, "dup %d: inter %d, remote size %d of %d", i, flag, n, rsize);
    /* Allreduce on an inter-communicator: each group gets the remote
     * group's sum (of world ranks here, known to every rank). */
    int w = rank, sum = -1, want = 0;
    for (int r = 0; r < size; ++r)
      if (r % 2 != rank % 2) want += r;
    MPI_Allreduce(&w, &sum, 1, MPI_INT, MPI_SUM, dup[i]);
    CHECK(sum == want, "dup %d: inter Allreduce gave %d, expected %d", i, sum, want);
    /* Each rank sends to remote rank (lrank % rsize) and receives from
     * every remote rank that picks it; sources and payloads checked, with a
     * message on the parent in between that must not match. */
    const int to = lrank % rsize;
    int expect = 0;
    for (int r = 0; r < rsize; ++r)
      if (r % lsize == lrank) ++expect;
    MPI_Request sr[2];
    int out = 1000 * (i + 1) + lrank, pout = -1;
    MPI_Isend(&out, 1, MPI_INT, to, i, dup[i], &sr[0]);
    MPI_Isend(&pout, 1, MPI_INT, to, i, ic, &sr[1]);
    for (int k = 0; k < expect; ++k) {
      int in = -1;
      MPI_Status st;
      MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, i, dup[i], &st);
      CHECK(in == 1000 * (i + 1) + st.MPI_SOURCE && st.MPI_SOURCE % lsize == lrank,
            "dup %d: got %d from remote rank %d", i, in, st.MPI_SOURCE);
    }
    for (int k = 0; k < expect; ++k) {
      int in = 0;
      MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, i, ic, MPI_STATUS_IGNORE);
      CHECK(in == -1, "dup %d: the parent got %d", i, in);
    }
    MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
    MPI_Comm_free(&dup[i]);
  }
  MPI_Comm_free(&ldup);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TEST\n", argv[0]);
    return 2;
  }
  const char* t = argv[1];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int attributes = 0;
  if (!strcmp(t, "status_error"))
    status_error();
  else if (!strcmp(t, "type_freed"))
    type_freed();
  else if (!strcmp(t, "op_freed"))
    op_freed();
  else if (!strcmp(t, "split_undef"))
    split_undef();
  else if (!strcmp(t, "create_disjoint"))
    create_disjoint();
  else if (!strcmp(t, "alltoallw_zeros"))
    alltoallw_zeros();
  else if (!strcmp(t, "attributes"))
    attributes = !attributes_before_finalize();
  else if (!strcmp(t, "unsupported"))
    unsupported();
  else if (!strcmp(t, "idup"))
    idup();
  else if (!strcmp(t, "idup_inter"))
    idup_inter();
  else if (!strcmp(t, "progress_coll"))
    progress_coll();
  else if (!strcmp(t, "cart_pair"))
    cart_pair();
  else if (!strcmp(t, "partial_elem"))
    partial_elem();
  else {
    fprintf(stderr, "unknown test %s\n", t);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int all = 0;
  MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (attributes) {
    /* MPI_COMM_SELF's attribute first (1); the leaked communicator's (3), if
     * deleted at all, after it. */
    CHECK(norder >= 1 && order[0] == 1, "finalize deleted %d attributes, first %d", norder,
          norder ? order[0] : -1);
    if (norder > 1) CHECK(order[1] == 3, "second deletion %d", order[1]);
    CHECK(victim == MPI_COMM_NULL || norder < 2, "the callback did not free the communicator");
    all += errors;
  }
  if (all == 0 && errors == 0) printf("PASS %s rank %d of %d\n", t, rank, size);
  return all || errors ? 1 : 0;
}
