// Placing a job's world ranks on sites so that the traffic that crosses
// between sites costs the least modelled time (LogGP: a message of m bytes
// over the link of sites a and b costs L_ab + m·G_ab µs; traffic inside a
// site is free in the model). Each site holds a fixed number of ranks.
//
// Mapping by graph partitioning as LibTopoMap (Hoefler and Snir, ICS'11 §4):
// METIS (Karypis and Kumar 1998) cuts the traffic graph into parts of the
// sites' sizes, the parts are made exact in size, then Kernighan–Lin pair
// swaps (1970) refine under the exact model, which also prices unequal links
// between more than two sites. Few enough assignments are searched
// exhaustively (branch and bound). The start layout (block order, the
// launcher's default, unless given) is always a candidate, so a placement
// never models slower than it.
//
// Pure computation, no MPI; deterministic (METIS runs with a fixed seed), so
// every rank of a communicator computes the same answer (reorder = 1 in the
// topology constructors, client/topo_map.h, uses it too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zipper::place {

/// What world rank `src` sent to world rank `dst` over one run.
struct Traffic {
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;     // payload bytes
  std::uint64_t messages = 0;  // messages (each pays the link's latency)
};

/// LogGP cost of the link between two sites: L + m·G µs for m bytes.
struct LinkCost {
  double L_us = 0;           // latency per message, µs
  double G_us_per_byte = 0;  // gap per byte, µs/byte (1 / bandwidth)
};

/// The sites' sizes and the links between them. Sites are numbered 0..n-1;
/// in block order site 0 holds world ranks 0..site_ranks[0]-1, and so on.
class Machine {
 public:
  /// Throws std::invalid_argument for no site, a site of < 1 rank, or a
  /// negative or non-finite cost.
  Machine(std::vector<int> site_ranks, LinkCost every_pair);

  /// Sets the cost of the link between sites a != b (both directions).
  /// Throws std::invalid_argument for a site out of range, a == b, or a
  /// negative or non-finite cost.
  void set_link(int a, int b, LinkCost cost);

  int sites() const { return static_cast<int>(site_ranks_.size()); }
  int ranks() const { return ranks_; }
  int site_ranks(int s) const { return site_ranks_[static_cast<std::size_t>(s)]; }
  const LinkCost& link(int a, int b) const {
    return links_[static_cast<std::size_t>(a * sites() + b)];
  }
  /// Time of `bytes` in `messages` between sites a and b, µs (0 when a == b).
  double cost(int a, int b, std::uint64_t bytes, std::uint64_t messages) const;
  /// site_of[r] of block order.
  std::vector<int> block_order() const;

 private:
  std::vector<int> site_ranks_;
  int ranks_ = 0;
  std::vector<LinkCost> links_;  // sites × sites, diagonal unused
};

/// What a placement sends across sites, by the model.
struct Figures {
  std::uint64_t crossing_bytes = 0;
  std::uint64_t crossing_messages = 0;
  double time_us = 0;  // Σ over crossing traffic of messages·L + bytes·G, µs
};

/// The figures of `site_of` (site of each world rank). Throws
/// std::invalid_argument if `site_of` or a traffic entry names a rank or
/// site out of range.
Figures evaluate(const Machine& machine, const std::vector<Traffic>& traffic,
                 const std::vector<int>& site_of);

struct PlaceOptions {
  /// Search every assignment when there are at most this many
  /// (ranks! / Π site_ranks!) and at most 64 ranks.
  std::int64_t exhaustive_limit = 200000;
  /// Pair-swap refinement is quadratic per pass: above this many ranks the
  /// METIS cut is used as it comes (made exact in size).
  int refine_limit = 2048;
  /// The layout to improve on (site of each world rank, each site holding
  /// its number of ranks); empty: block order. It is kept unless a
  /// candidate models strictly less time.
  std::vector<int> start;
};

struct Placement {
  std::vector<int> site_of;  // site of each world rank
  Figures block;             // block order's figures
  Figures placed;            // this placement's (never more time than the start's)
  std::string method;        // "start" (kept), "exhaustive" or "metis+swaps"
};

/// The placement of least modelled time found. Throws std::invalid_argument
/// for traffic naming a rank outside 0..ranks-1, or a start layout that
/// does not give each site its number of ranks.
Placement place(const Machine& machine, const std::vector<Traffic>& traffic,
                const PlaceOptions& options = {});

}  // namespace zipper::place
