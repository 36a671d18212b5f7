// The narrow point-to-point interface the collectives (and the C API's
// request-based calls) are built on: start a send or a receive on a
// communicator, test a request, wait for a condition while progressing.
// Ranks are ranks of the given communicator. The engine (engine.h)
// implements it; algorithms never see the channel to zipperd or the matching.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>

#include "communicator.h"
#include "request.h"

namespace zipper::client {

/// Which of a communicator's two contexts a message travels in.
enum class Traffic : std::uint8_t {
  kPointToPoint,  // the user's messages (wildcards allowed)
  kCollective,    // collectives' internal messages (no wildcards; native part on native_coll())
};

enum class SendMode : std::uint8_t {
  kStandard,
  kSynchronous,  // completes only once the receiver matched it (MPI_Ssend)
};

class PointToPoint {
 public:
  virtual ~PointToPoint() = default;
  /// Starts a send of `count` elements of `type` to rank `dest` of `c`.
  /// `*out` always receives a request (complete at once with the error on
  /// failure). Returns MPI_SUCCESS, MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_TYPE,
  /// MPI_ERR_COUNT, or MPI_ERR_OTHER (no link to zipperd, peer gone).
  virtual int isend(const CommPtr& c, Traffic tr, const void* buf, int count, MPI_Datatype type,
                    int dest, int tag, RequestPtr* out, SendMode mode) = 0;
  /// Starts a receive from rank `source` of `c` (MPI_ANY_SOURCE / MPI_ANY_TAG
  /// only for kPointToPoint: MPI_ERR_INTERN otherwise). Same errors as isend.
  virtual int irecv(const CommPtr& c, Traffic tr, void* buf, int count, MPI_Datatype type,
                    int source, int tag, RequestPtr* out) = 0;
  /// Progresses and reports whether `r` completed (r.error holds its result).
  virtual bool test(Request& r) = 0;
  /// Progresses until `pred()` is true. `native_active`: the caller also
  /// waits on native Open MPI requests (no file descriptor to sleep on).
  virtual void wait_until(const std::function<bool()>& pred, bool native_active) = 0;
};

}  // namespace zipper::client
