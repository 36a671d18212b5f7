// A libmmpi request: one point-to-point operation of the engine. Requests
// are owned through RequestPtr; the C API turns one into an MPI_Request
// handle (Open MPI's MPI_Request is a pointer type) and back
// (capi/handles.h), so exactly one owner frees it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "communicator.h"
#include "datatype.h"
#include "send_stream.h"

namespace zipper::client {

enum class RequestKind : std::uint8_t {
  kNative,        // wraps a native Open MPI request (intra-cluster, or a matched held message)
  kSend,          // inter-cluster send through zipperd
  kRecv,          // receive handled by libmmpi's matching engine
  kCompleted,     // completed at creation (MPI_PROC_NULL, errors)
  kProgressable,  // owned above the engine (Progressable)
};

struct Request;

// A request whose work is owned above the engine (a non-blocking
// collective's schedule, a persistent request). Engine::test polls it.
struct Progressable {
  virtual ~Progressable() = default;
  /// Advances if needed; once finished, sets outer.error and outer's status
  /// fields and returns true.
  virtual bool poll(Request& outer) = 0;
  /// The application collects the completion (Wait/Test): returns true if
  /// the request stays allocated and becomes inactive (persistent requests),
  /// false if it is to be freed.
  virtual bool retire(Request& outer) {
    (void)outer;
    return false;
  }
  /// An inactive persistent request, which Waitany/Testany/Waitsome skip.
  virtual bool inactive() const { return false; }
};

struct Request {
  RequestKind kind = RequestKind::kCompleted;
  bool complete = false;
  bool cancelled = false;
  int error = MPI_SUCCESS;
  MPI_Request native = MPI_REQUEST_NULL;
  CommPtr comm;  // keeps the communicator alive while the operation runs

  // Completion status, source as a rank of `comm`.
  int status_source = MPI_ANY_SOURCE;
  int status_tag = MPI_ANY_TAG;
  std::uint64_t status_bytes = 0;

  // Receive side.
  void* buf = nullptr;
  int count = 0;
  TypeRef type;                     // the receive's datatype, valid until the request completes
  Layout layout;                    // capacity = layout.bytes
  std::vector<std::byte> staging;   // packed bytes for non-contiguous receives
  std::uint64_t rndv_expected = 0;  // bytes the sender will stream (after truncation)
  std::uint64_t rndv_received = 0;
  std::uint64_t msg_len = 0;     // full message length as sent
  int peer = -1;                 // matched (recv) or destination (send) world rank
  bool native_eligible = false;  // posted, and a native message could match it
  std::uint64_t seq = 0;

  // Send side.
  std::vector<std::byte> send_pack;  // packed bytes for non-contiguous sends
  std::byte* send_data = nullptr;
  std::uint64_t send_bytes = 0;
  SendStream stream;  // a rendezvous send, as the delivery layer streams it

  std::unique_ptr<Progressable> progressable;  // kProgressable only

  /// Where received bytes land.
  std::byte* recv_dest() { return layout.contiguous ? layout.base : staging.data(); }
};

using RequestPtr = std::unique_ptr<Request>;

}  // namespace zipper::client
