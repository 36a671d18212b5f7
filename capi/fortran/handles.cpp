// MMPI_Comm_c2f / f2c and friends: Fortran INTEGER handles for the handles
// libmmpi owns (communicators, groups, requests, messages). Predefined
// handles keep fixed values (Open MPI's for the null handles, sentinels for
// MMPI_COMM_WORLD / MMPI_COMM_SELF); all others live in a HandleTable.
#include "handles.h"

#include <mmpi.h>

#include "handle_table.h"

using zipper::capi::HandleTable;

namespace {

HandleTable<MPI_Comm>& comms() {
  static HandleTable<MPI_Comm> t;
  return t;
}
HandleTable<MPI_Group>& groups() {
  static HandleTable<MPI_Group> t;
  return t;
}
HandleTable<MPI_Request>& requests() {
  static HandleTable<MPI_Request> t;
  return t;
}
HandleTable<MPI_Message>& messages() {
  static HandleTable<MPI_Message> t;
  return t;
}

MPI_Comm comm_self() {
#ifdef MMPI_COMM_SELF
  return MMPI_COMM_SELF;
#else
  return MPI_COMM_NULL;  // no MMPI_COMM_SELF in this libmmpi
#endif
}

template <class H, class ToF>
MPI_Fint update(HandleTable<H>& t, MPI_Fint f, H before, H after, ToF to_f) {
  if (before == after) return f;
  t.release(f);
  return to_f(after);
}

}  // namespace

extern "C" {

MPI_Fint MMPI_Comm_c2f(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return MMPIF_COMM_NULL;
  if (comm == mmpi_comm_world) return MMPIF_COMM_WORLD;
  if (comm == comm_self()) return MMPIF_COMM_SELF;
  return comms().to_f(comm, MMPIF_COMM_NULL);
}

MPI_Comm MMPI_Comm_f2c(MPI_Fint comm) {
  if (comm == MMPIF_COMM_WORLD) return mmpi_comm_world;
  if (comm == MMPIF_COMM_SELF) return comm_self();
  return comms().to_c(comm, MPI_COMM_NULL);
}

MPI_Fint MMPI_Group_c2f(MPI_Group group) {
  if (group == MPI_GROUP_NULL) return MMPIF_GROUP_NULL;
  if (group == MPI_GROUP_EMPTY) return MMPIF_GROUP_EMPTY;
  return groups().to_f(group, MMPIF_GROUP_NULL);
}

MPI_Group MMPI_Group_f2c(MPI_Fint group) {
  if (group == MMPIF_GROUP_EMPTY) return MPI_GROUP_EMPTY;
  return groups().to_c(group, MPI_GROUP_NULL);
}

MPI_Fint MMPI_Request_c2f(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return MMPIF_REQUEST_NULL;
  return requests().to_f(request, MMPIF_REQUEST_NULL);
}

MPI_Request MMPI_Request_f2c(MPI_Fint request) {
  return requests().to_c(request, MPI_REQUEST_NULL);
}

MPI_Fint MMPI_Message_c2f(MPI_Message message) {
  if (message == MPI_MESSAGE_NULL) return MMPIF_MESSAGE_NULL;
  if (message == MPI_MESSAGE_NO_PROC) return MMPIF_MESSAGE_NO_PROC;
  return messages().to_f(message, MMPIF_MESSAGE_NULL);
}

MPI_Message MMPI_Message_f2c(MPI_Fint message) {
  if (message == MMPIF_MESSAGE_NO_PROC) return MPI_MESSAGE_NO_PROC;
  return messages().to_c(message, MPI_MESSAGE_NULL);
}

MPI_Fint mmpi_f_comm_update(MPI_Fint f, MPI_Comm before, MPI_Comm after) {
  return update(comms(), f, before, after, MMPI_Comm_c2f);
}
MPI_Fint mmpi_f_group_update(MPI_Fint f, MPI_Group before, MPI_Group after) {
  return update(groups(), f, before, after, MMPI_Group_c2f);
}
MPI_Fint mmpi_f_request_update(MPI_Fint f, MPI_Request before, MPI_Request after) {
  return update(requests(), f, before, after, MMPI_Request_c2f);
}
MPI_Fint mmpi_f_message_update(MPI_Fint f, MPI_Message before, MPI_Message after) {
  return update(messages(), f, before, after, MMPI_Message_c2f);
}

}  // extern "C"
