#include "byte_type.h"

#include <climits>

namespace zipper::coll {

ByteType::ByteType(MPI_Count bytes, MPI_Datatype unit) : type_(unit) {
  if (bytes < 0) {
    status_ = MPI_ERR_COUNT;
    return;
  }
  if (bytes <= INT_MAX) {
    count_ = static_cast<int>(bytes);
    return;
  }
  // chunks x 1 GiB, then the rest: both counts fit an int up to 2^61 bytes.
  const MPI_Count chunks = bytes / kBytePiece, rest = bytes % kBytePiece;
  MPI_Datatype chunk = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL, whole = MPI_DATATYPE_NULL;
  int rc = MPI_Type_contiguous(static_cast<int>(kBytePiece), unit, &chunk);
  if (rc == MPI_SUCCESS) rc = MPI_Type_contiguous(static_cast<int>(chunks), chunk, &body);
  if (rc == MPI_SUCCESS && rest == 0) {
    rc = MPI_Type_dup(body, &whole);
  } else if (rc == MPI_SUCCESS) {
    const int lengths[2] = {1, static_cast<int>(rest)};
    const MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(chunks * kBytePiece)};
    const MPI_Datatype types[2] = {body, unit};
    rc = MPI_Type_create_struct(2, lengths, displs, types, &whole);
  }
  if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&whole);
  if (chunk != MPI_DATATYPE_NULL) MPI_Type_free(&chunk);
  if (body != MPI_DATATYPE_NULL) MPI_Type_free(&body);
  if (rc != MPI_SUCCESS) {
    if (whole != MPI_DATATYPE_NULL) MPI_Type_free(&whole);
    status_ = rc;
    type_ = MPI_DATATYPE_NULL;
    return;
  }
  type_ = whole;
  owned_ = true;
  count_ = 1;
}

ByteType::~ByteType() {
  if (owned_) MPI_Type_free(&type_);
}

}  // namespace zipper::coll
