// A communicator in libmmpi's engine: its members (a RankMap onto virtual
// world ranks), its context id, and the native Open MPI communicators over
// its members in this process's cluster.
//
// Context ids: each communicator gets one id `cid`, agreed over its parent
// (the MAX of every member's next free id, so no member uses it yet). Its
// point-to-point traffic travels with context 2*cid and the collectives'
// internal traffic with 2*cid+1; frames carry the context, and matching is
// per (context, source, tag), so traffic of two communicators never matches,
// also when it is already in flight through zipperd.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cart.h"
#include "graph_topo.h"
#include "intercomm.h"
#include "rank_map.h"

namespace zipper::client {

inline constexpr std::uint32_t kWorldCid = 0;
inline constexpr std::uint32_t kSelfCid = 1;
inline constexpr std::uint32_t kFirstFreeCid = 2;

/// Owns one native communicator (freed on destruction, unless MPI is
/// already finalized). MPI_COMM_WORLD / MPI_COMM_SELF are never freed.
class NativeComm {
 public:
  NativeComm() = default;
  explicit NativeComm(MPI_Comm c) : comm_(c) {}
  ~NativeComm();
  NativeComm(NativeComm&& o) noexcept : comm_(o.release()) {}
  NativeComm& operator=(NativeComm&& o) noexcept;
  NativeComm(const NativeComm&) = delete;
  NativeComm& operator=(const NativeComm&) = delete;
  MPI_Comm get() const { return comm_; }
  MPI_Comm release() { return std::exchange(comm_, MPI_COMM_NULL); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class Comm {
 public:
  /// `native`: this cluster's members in communicator order (native rank i
  /// = local member i); `native_coll` a duplicate of it for collectives.
  Comm(RankMap map, int rank, std::uint32_t cid, NativeComm native, NativeComm native_coll);

  int rank() const { return rank_; }
  int size() const { return map_.size(); }
  const RankMap& map() const { return map_; }
  std::uint32_t cid() const { return cid_; }
  std::uint32_t p2p_context() const { return 2 * cid_; }
  std::uint32_t coll_context() const { return 2 * cid_ + 1; }
  MPI_Comm native() const { return native_.get(); }
  MPI_Comm native_coll() const { return native_coll_.get(); }
  /// Rank `r`'s rank in native() (r local), and back. They differ only on an
  /// inter-communicator, whose native communicator is an intra-communicator
  /// over this cluster's members of both groups (client/intercomm.h): the
  /// remote group's members sit there from `native_base` on.
  int native_rank(int r) const { return native_base + map_.index_in_cluster(r); }
  int rank_of_native(int n) const {
    return map_.local_members()[static_cast<std::size_t>(n - native_base)];
  }
  /// True when every member is in this cluster: Open MPI alone serves it.
  bool intra_cluster() const { return map_.remote_members().empty(); }

  std::string name;
  std::optional<Cart> cart;                 // set by MMPI_Cart_create / Cart_sub
  std::optional<GraphTopo> graph;           // MMPI_Graph_create
  std::optional<DistGraphTopo> dist_graph;  // MMPI_Dist_graph_create(_adjacent)
  /// Set on inter-communicators (client/intercomm.h): then map() is the
  /// remote group and rank() the rank in the local group.
  std::shared_ptr<const InterInfo> inter;
  /// native_rank()'s offset: 0 but on an inter-communicator whose local
  /// group comes first in the native communicator.
  int native_base = 0;
  /// Non-blocking collectives started on this communicator. MPI has every
  /// member start them in the same order, so the count names the same
  /// operation on every rank (capi/nbc.cpp derives its tag from it).
  mutable std::uint32_t nbc_started = 0;
  /// MPI error handler (capi/errhandler.h applies it). A user handler is
  /// also set on `errhandler_keeper`, a private MPI_COMM_SELF duplicate,
  /// which keeps it alive after the program frees its own handle.
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  NativeComm errhandler_keeper;
  /// Keyvals with an attribute set through MMPI_Comm_set_attr, in the order
  /// first set (the attributes live on the handle's native communicator).
  /// MMPI_Finalize deletes MMPI_COMM_SELF's in the reverse order first.
  std::vector<int> attr_keyvals;

 private:
  RankMap map_;
  int rank_ = 0;
  std::uint32_t cid_ = 0;
  NativeComm native_, native_coll_;
};

using CommPtr = std::shared_ptr<const Comm>;

}  // namespace zipper::client
