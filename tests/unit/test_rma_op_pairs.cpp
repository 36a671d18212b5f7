// Which predefined op an RMA accumulate may apply to which element type
// (rma::op_defined): exactly the pairs Open MPI's own reduction accepts, so
// that the origin refuses what native MPI refuses (MPI_ERR_OP) and the
// target never hands Open MPI a pair its MPI_Reduce_local would raise on
// MPI_COMM_WORLD's (fatal) error handler.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <string>

#include "client/rma_types.h"

namespace rma = zipper::client::rma;

namespace {

// Open MPI's verdict on (type, op): MPI_Reduce_local of one element, with
// errors returned instead of fatal.
bool open_mpi_accepts(MPI_Datatype t, MPI_Op op) {
  alignas(64) unsigned char in[64], inout[64];
  std::memset(in, 0, sizeof in);
  std::memset(inout, 0, sizeof inout);
  return MPI_Reduce_local(in, inout, 1, t, op) == MPI_SUCCESS;
}

}  // namespace

TEST(RmaOpPairs, MatchOpenMpiForEveryPredefinedPair) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int checked = 0, refused = 0;
  std::string differ;
  for (int e = 0; rma::elem_type(e) != MPI_DATATYPE_NULL; ++e) {
    for (int o = 0; rma::op_of(o) != MPI_OP_NULL; ++o) {
      const MPI_Op op = rma::op_of(o);
      if (op == MPI_REPLACE || op == MPI_NO_OP) {
        EXPECT_TRUE(rma::op_defined(e, o)) << "element " << e << " op " << o;
        continue;
      }
      const bool ours = rma::op_defined(e, o);
      const bool theirs = open_mpi_accepts(rma::elem_type(e), op);
      ++checked;
      refused += ours ? 0 : 1;
      if (ours != theirs) {
        char name[MPI_MAX_OBJECT_NAME] = {};
        int len = 0;
        MPI_Type_get_name(rma::elem_type(e), name, &len);
        differ += std::string(" ") + name + "/op" + std::to_string(o) +
                  (theirs ? "(Open MPI accepts)" : "(Open MPI refuses)");
      }
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  EXPECT_TRUE(differ.empty()) << "pairs that differ:" << differ;
  EXPECT_GT(checked, 500);  // 57 element types x 12 reducing ops
  EXPECT_GT(refused, 100);  // the table refuses something real
}

TEST(RmaOpPairs, HostileIndexesAreRefused) {
  const int sum = rma::op_index(MPI_SUM);
  const int fl = rma::elem_index(MPI_FLOAT);
  EXPECT_TRUE(rma::op_defined(fl, sum));
  EXPECT_FALSE(rma::op_defined(fl, rma::op_index(MPI_BAND)));
  EXPECT_FALSE(rma::op_defined(-1, sum));
  EXPECT_FALSE(rma::op_defined(1 << 14, sum));
  EXPECT_FALSE(rma::op_defined(fl, -1));
  EXPECT_FALSE(rma::op_defined(fl, 255));
}
