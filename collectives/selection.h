// Which algorithm, and how many concurrent inter-cluster senders n, a
// collective call uses. Selection is data: an ordered rule table per
// collective (first match wins) keyed by message size and layout. Sources,
// strongest first:
//   1. MMPIX_Coll_set (per process, at run time);
//   2. MMPI_<COLLECTIVE>_ALGORITHM, MMPI_INTER_SENDERS and MMPI_SEGMENT_BYTES
//      (environment);
//   3. the tuning file named by MMPI_TUNING_FILE (TOML, docs/collectives.md):
//      a fixed choice or its own rule table per collective;
//   4. the built-in rule table (selection.cpp).
// Every input is the same on every rank (arguments MPI requires to match, the
// layout, the environment zipper-run passes), so every rank chooses alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zipper::client {
class Environment;  // client/environment.h
}

namespace zipper::coll {

enum class Collective : std::uint8_t {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kAlltoall,
  kAlltoallv,
  kGather,
  kScatter,
  kAllgather,
  kReduceScatterBlock,
};
inline constexpr int kNumCollectives = 10;

enum class Algorithm : std::uint8_t {
  kTwoLevel,      // barrier, gather, scatter, allgather
  kFarfirst,      // bcast
  kVanDeGeijn,    // bcast, takes n
  kLeaders,       // reduce
  kTwoTier,       // allreduce
  kRabenseifner,  // allreduce, takes n
  kDirect,        // alltoall(v)
  kAggregated,    // alltoall(v), takes n
  kViaAllreduce,  // reduce_scatter_block
};

std::string_view name_of(Collective c);
std::string_view name_of(Algorithm a);
std::optional<Collective> collective_named(std::string_view name);
/// The algorithm called `name` if it implements `c`.
std::optional<Algorithm> algorithm_named(Collective c, std::string_view name);
/// Names of the algorithms implementing `c`, comma-separated (for errors).
std::string algorithms_of(Collective c);

/// What an algorithm takes besides the buffers: the one table that tools
/// (zipper-tune, zipper-bench through MMPIX_Coll_algorithm) read, so that no
/// list of algorithms is ever copied.
struct AlgorithmTraits {
  Algorithm algorithm;
  std::string_view name;
  bool takes_senders;  // n, the concurrent inter-cluster senders
  bool takes_segment;  // segment size (pipelining or chunked inter-cluster step)
};
/// The algorithms implementing `c`, in table order (the first is the fallback).
std::vector<AlgorithmTraits> algorithms_for(Collective c);

/// Segment sizes a Choice may hold, bytes: 0 (unsegmented) or
/// kMinSegmentBytes..kMaxSegmentBytes. Below 1 KiB the per-message overhead
/// dominates and the message count explodes.
inline constexpr std::uint64_t kMinSegmentBytes = 1024;
inline constexpr std::uint64_t kMaxSegmentBytes = std::uint64_t{1} << 40;

struct Choice {
  Algorithm algorithm = Algorithm::kTwoLevel;
  int inter_senders = 0;      // n; 0 = Topology::max_senders()
  std::uint64_t segment = 0;  // bytes per segment; 0 = unsegmented (one message per step)
};

/// One row of a rule table: applies when every given condition holds.
struct Rule {
  std::uint64_t min_bytes = 0;           // message size (see Selection::choose), bytes
  std::uint64_t max_bytes = UINT64_MAX;  // inclusive
  // Exact members in the first / second site (the tuning file's np_low and
  // np_high: the two-site shape); 0 = any. A rule that sets either applies
  // to communicators of at most two sites only.
  int np_low = 0, np_high = 0;
  Choice choice;

  /// Whether this rule's shape condition holds for a communicator with
  /// `site_members[s]` members in site s (Topology::site_members).
  bool fits(const std::vector<int>& site_members) const;
};

class Selection {
 public:
  /// Built-in rules only.
  Selection();

  /// Takes the collectives' settings from `env` (client/settings.h) and, if
  /// MMPI_TUNING_FILE is set, the tuning file. Returns false and sets *why
  /// (naming the variable, file, line or key) on any invalid input.
  bool load(const client::Environment& env, std::string* why);
  /// load(client::Environment::capture(), why).
  bool load(std::string* why);
  /// Parses a tuning file's text (`origin` names it in errors).
  bool load_tuning(std::string_view toml_text, const std::string& origin, std::string* why);
  /// MMPIX_Coll_set: fixes `c` to `a` with n (0 = rule's choice); nullopt
  /// returns `c` to automatic selection.
  void set_override(Collective c, std::optional<Algorithm> a, int inter_senders);
  /// MMPIX_Coll_set_segment: fixes the segment size of `c` (bytes; 0 =
  /// unsegmented); nullopt returns it to the rules. Independent of the
  /// algorithm override; ignored by algorithms that take no segment.
  void set_segment_override(Collective c, std::optional<std::uint64_t> segment_bytes);

  /// The choice for one call. `bytes`: bcast, reduce, allreduce: count x type
  /// size; alltoall: one block (sendcount x type size); reduce_scatter_block:
  /// the whole vector; others: 0. site_members: the communicator's members
  /// in each site of the job (Topology::site_members).
  Choice choose(Collective c, std::uint64_t bytes, const std::vector<int>& site_members) const;
  /// Whether choose(c, bytes, site_members) can differ between two values
  /// of `bytes` (some rule for this layout ends before the full size
  /// range). alltoallv uses it to skip agreeing on the largest block when
  /// the size decides nothing.
  bool depends_on_size(Collective c, const std::vector<int>& site_members) const;

 private:
  struct PerCollective {
    std::optional<Choice> fixed;  // override, environment or file
    std::vector<Rule> rules;      // from the tuning file; tried before the built-in rules
    std::vector<Rule> builtin;
  };
  PerCollective& at(Collective c) { return per_[static_cast<int>(c)]; }
  const PerCollective& at(Collective c) const { return per_[static_cast<int>(c)]; }

  PerCollective per_[kNumCollectives];
  std::optional<Choice> runtime_[kNumCollectives];                 // MMPIX_Coll_set
  std::optional<std::uint64_t> runtime_segment_[kNumCollectives];  // MMPIX_Coll_set_segment
  int env_senders_ = 0;                       // MMPI_INTER_SENDERS (overrides every rule's n)
  int file_senders_ = 0;                      // tuning file's top-level inter_senders (default n)
  std::optional<std::uint64_t> env_segment_;  // MMPI_SEGMENT_BYTES (overrides every rule's)
  std::uint64_t file_segment_ = 0;            // tuning file's top-level segment_bytes
};

}  // namespace zipper::coll
