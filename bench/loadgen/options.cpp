#include "options.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#ifndef ZIPPER_VERSION
#define ZIPPER_VERSION "unknown"
#endif

namespace zipper::loadgen {

namespace {

constexpr const char* kDescription =
    R"(zipper-loadgen: virtual ranks through zipperd, every message checked.

Thousands of ranks of one or many jobs in a few processes, each an epoll loop
over libmmpi's own channel to zipperd (HELLO, CHALLENGE with the pinned host
key, AUTH with the job key, credits honoured). Steady jobs (--job) are admitted
first, then exchange their traffic while churn jobs (--churn) start, exchange
and end beside them. Every payload is checked at its receiver (sequence number
and pattern); any fault fails the run.

Measures: admission time per job, per-message one-way latency (p50/p99; send
and receive share the host's CLOCK_MONOTONIC), throughput, and, given pid= and
metrics= of each zipperd, its RSS and CPU from /proc, CPU per relayed frame,
and its counters against what was sent (frames, bytes, connections per side;
no protocol, auth or admission errors; every job and rank gone at the end).

Output: one JSON object (or CSV: a header and a row per group) on stdout.
Exit status: 0 every check passed, 1 a check failed (the faults on stderr and
in the output), 2 usage error.

A departure storm (--storm): 4096+4096 ranks vanish beside a 1+1 ping-pong:
  zipper-loadgen --zipperd ... --job layout=1+1,pattern=pingpong,messages=4000,rate=1000 \
      --storm layout=4096+4096,after=1

Example: two jobs of 128+128 ranks in a ring and churn beside them:
  zipper-loadgen --zipperd low=127.0.0.1:17600,high=127.0.0.1:17601,key=@/tmp/k/host_key.pub,pid=4242,metrics=127.0.0.1:17602 \
      --job count=2,layout=128+128,pattern=ring,messages=50 --churn jobs=6,layout=8+8,vanish=50%)";

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  CLI::App app(kDescription, "zipper-loadgen");
  std::vector<std::string> zipperds, jobs;
  std::string churn, storm;
  app.add_option("--zipperd", zipperds,
                 "low=ADDR,high=ADDR,key=HEX|@PATH[,pid=PID][,metrics=HOST:PORT]: one zipperd "
                 "(repeat for k bridge nodes); ADDR [tcp:]HOST:PORT of its listener for that "
                 "group, PATH its host_key.pub")
      ->required();
  app.add_option("--job", jobs,
                 "count=J,layout=X+Y,pattern=ring|neighbours|incast|alltoall|pingpong,degree=D,"
                 "size=BYTES,messages=M,rate=MSGS_PER_S[,name=N]: J steady jobs (repeatable; "
                 "messages per directed pair, pingpong: round trips; rate per sending rank, 0 "
                 "= as fast as credit allows). Default: count=1,layout=16+16,pattern=ring,"
                 "size=8,messages=100");
  app.add_option("--churn", churn,
                 "jobs=C,concurrent=K,layout=X+Y,pattern=P,size=B,messages=M,vanish=F: C jobs "
                 "that start, exchange, and end while the steady traffic runs, K at once; a "
                 "fraction F (0..1 or N%) leave without BYE (default jobs=4,layout=8+8,"
                 "messages=10,vanish=50%)");
  app.add_option("--storm", storm,
                 "layout=X+Y,after=S: a departure storm: a job of X+Y ranks admitted with the "
                 "steady jobs, sending nothing, whose ranks all vanish without BYE S seconds into "
                 "the traffic (default layout=1024+1024,after=1); the steady jobs' latency max "
                 "shows the stall it causes. With --procs >= 2 its ranks live in the last "
                 "worker, which should serve no steady rank (--procs above the steady jobs' "
                 "ranks, or a multiple of them plus one)");
  app.add_option("--procs", o.procs, "worker processes the ranks are spread over (1 to 256)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(1, 256).description(""));
  app.add_option("--timeout", o.timeout_s, "seconds the whole run may take (1 to 86400)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400).description(""));
  app.add_option("--connect-window", o.connect_window,
                 "connections between connect and admission at once, all workers (keep below "
                 "zipperd's listen backlog, 512, or connects wait for SYN retries)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536).description(""));
  app.add_option("--format", o.format, "json: one object; csv: a header and a row per group")
      ->type_name("json|csv")
      ->capture_default_str()
      ->check(CLI::IsMember({"json", "csv"}).description(""));
  app.set_version_flag("--version", std::string("zipper-loadgen ") + ZIPPER_VERSION);
  bool no_counters = false;
  app.add_flag("--no-check-counters", no_counters,
               "do not compare zipperd's counters with ours (zipperd serves other jobs)");
  try {
    app.parse(argc, argv);
    for (const auto& z : zipperds) o.zipperds.push_back(parse_zipperd_spec(z));
    if (o.zipperds.size() > 8) throw std::invalid_argument("--zipperd: at most 8 bridge nodes");
    for (const auto& j : jobs)
      o.jobs.push_back(parse_job_spec(j, "job" + std::to_string(o.jobs.size())));
    if (o.jobs.empty()) o.jobs.push_back(parse_job_spec("", "job0"));
    if (!churn.empty()) o.churn = parse_churn_spec(churn);
    if (!storm.empty()) o.jobs.push_back(parse_storm_spec(storm));
    std::uint64_t pairs = 0;
    const auto count = [&](const JobSpec& j, std::uint64_t n) {
      pairs += pair_count(j.pattern, j.layout.x, j.layout.y, j.degree) * n;
    };
    for (const auto& j : o.jobs) count(j, j.count);
    count(o.churn.job, o.churn.concurrent);
    if (pairs > kMaxPairs)
      throw std::invalid_argument(
          "--job, --churn: the jobs have " + std::to_string(pairs) +
          " directed pairs in all, more than the " + std::to_string(kMaxPairs) +
          " the generator keeps state for (a sequence number per pair): use smaller layouts, "
          "or a sparser pattern than alltoall");
    o.check_counters = !no_counters;
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help, or the fault
    std::exit(rc == 0 ? 0 : 2);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "zipper-loadgen: %s\n", e.what());
    std::exit(2);
  }
  return o;
}

}  // namespace zipper::loadgen
