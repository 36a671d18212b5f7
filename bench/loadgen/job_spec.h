// What zipper-loadgen runs: groups of steady jobs (--job), which are
// admitted together and then exchange their traffic while zipperd is
// measured, and churn (--churn), jobs that start, exchange, and end (with
// BYE, or by vanishing without it) while the steady traffic flows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "spec_text.h"
#include "traffic_pattern.h"

namespace zipper::loadgen {

/// --job count=J,layout=X+Y,pattern=P,degree=D,size=B,messages=M,rate=R,name=N
struct JobSpec {
  std::string name;
  std::uint32_t count = 1;  // jobs of this kind
  Layout layout{16, 16};
  Pattern pattern = Pattern::kRing;
  std::uint32_t degree = 4;      // neighbours: destinations per rank
  std::uint32_t size = 8;        // payload bytes per message
  std::uint64_t messages = 100;  // per directed pair (pingpong: round trips)
  double rate = 0;               // messages per second per sending rank (0: as credit allows)
  // A storm job (--storm): admitted with the steady jobs, sends nothing, and
  // all its ranks vanish without BYE this many seconds into the traffic
  // (< 0: an ordinary job).
  double vanish_after_s = -1;
};

/// --churn jobs=C,concurrent=K,layout=X+Y,pattern=P,size=B,messages=M,vanish=F
struct ChurnSpec {
  std::uint32_t jobs = 0;        // churn jobs in all (0: no churn)
  std::uint32_t concurrent = 1;  // at once
  JobSpec job;                   // each churn job's traffic (count and rate unused)
  double vanish = 0.5;           // fraction whose ranks all disconnect without BYE
};

/// Throw std::invalid_argument with a message naming the option and the fault.
JobSpec parse_job_spec(std::string_view text, std::string default_name);
ChurnSpec parse_churn_spec(std::string_view text);
/// --storm layout=X+Y,after=S: the storm job (named "storm", no messages).
JobSpec parse_storm_spec(std::string_view text);

/// Most directed pairs of all jobs of a run together: the generator keeps
/// a sequence number per pair at the receiver (8 B) and the pattern's
/// tables in every worker.
inline constexpr std::uint64_t kMaxPairs = std::uint64_t{1} << 26;

/// Most payload bytes a message may have (zipperd's default --max-frame is
/// 1 MiB; a smaller --max-frame is found at admission).
inline constexpr std::uint32_t kMaxMessageSize = 1u << 20;

}  // namespace zipper::loadgen
