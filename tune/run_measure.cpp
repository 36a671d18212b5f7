// Step 1 of a zipper-tune run: measure (run_measure.h).
#include "run_measure.h"

#include <mmpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "measure.h"
#include "plan.h"
#include "report_json.h"

namespace zipper::tune {

using nlohmann::json;

namespace {

std::uint64_t env_u64(const char* var, std::uint64_t def) {
  const char* v = std::getenv(var);
  return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

}  // namespace

Measurement measure_network(const Options& o, int rank, int x, int y, int forwarders) {
  PrttPlan plan;
  plan.sizes = o.quick
                   ? std::vector<std::uint64_t>{1, 64, 1024, 16384, 65536, 262144, 1048576, 4194304}
                   : geometric(1, std::min<std::uint64_t>(o.max_bytes, 4u << 20), 2);
  plan.n = 8;
  plan.repeats = o.quick ? 3 : 5;
  Measurement m;
  Network& net = m.net;
  auto measure_class = [&](int a, int b, std::vector<Threshold>* th) {
    const auto samples = measure_prtt(a, b, plan);
    LinkParams p = derive(samples, plan.n);
    *th = detect_thresholds(p.points);
    return p;
  };
  net.forwarded = measure_class(0, x, &m.th_fwd);
  net.low = x >= 2 ? measure_class(0, 1, &m.th_low) : net.forwarded;
  net.high = y >= 2 ? measure_class(x, x + 1, &m.th_high) : net.forwarded;
  const int smax = m.smax = std::min(x, y);
  net.senders_measured = smax;
  {
    // Measured through every forwarder the ranks reach.
    net.forwarders_measured = std::max(forwarders, 1);
    net.forwarders = net.forwarders_measured;
  }
  for (std::uint64_t b : contention_sizes(o.quick))
    net.fwd_contention.push_back(measure_forwarded_contention(x, smax, b, b <= 65536 ? 32 : 8));
  // G under load: every rank streaming inside its cluster at once.
  {
    const std::uint64_t big = o.quick ? 262144 : 1048576;
    const auto [low, high] = intra_stream_gaps(x, big, 8);
    if (x >= 2) net.low.G_load = low / static_cast<double>(big);
    if (y >= 2) net.high.G_load = high / static_cast<double>(big);
  }
  // Under load: a native barrier in both clusters at once gives the
  // latency of a step when every rank waits (loggp.h L_load); the
  // forwarded class gets the intra classes' mean excess over their quiet L
  // (its receiver waits the same way).
  {
    double t[2] = {0, 0}, out[2] = {0, 0};
    t[rank < x ? 0 : 1] = time_native_barrier(50);
    MMPI_Allreduce(t, out, 2, MPI_DOUBLE, MPI_MAX, MMPI_COMM_WORLD);
    set_load_from_barrier(net.low, x, out[0]);
    set_load_from_barrier(net.high, y, out[1]);
    double excess = 0;
    int classes = 0;
    for (const LinkParams* p : {&net.low, &net.high})
      if (p->L_load >= 0) {
        excess += p->L_load - p->L;
        ++classes;
      }
    if (classes > 0) net.forwarded.L_load = net.forwarded.L + excess / classes;
    m.native_barrier_us[0] = out[0];
    m.native_barrier_us[1] = out[1];
  }
  {
    // [BM] γ: native all-to-all at 64 KiB blocks against the flat model.
    const std::uint64_t blk = 65536;
    const double t = time_native_alltoall(blk, 10);
    const LinkParams& mine = rank < x ? net.low : net.high;
    const int P = rank < x ? x : y;
    double gamma = 1;
    if (P > 1 && mine.g(blk) > 0) gamma = std::max(1.0, (t - mine.lat()) / ((P - 1) * mine.g(blk)));
    double out = 1;
    MMPI_Allreduce(&gamma, &out, 1, MPI_DOUBLE, MPI_MAX, MMPI_COMM_WORLD);
    net.gamma_alltoall = out;
  }
  net.op_us_per_byte = time_reduce_op();
  // One host for every rank, with fewer cores than ranks (the emulated
  // clusters)? Then steps that separate nodes run at once take turns on the
  // cores (Network::shared_cores). Ranks share a kernel when they share its
  // boot id, whatever their network namespace or host name.
  const long cores = m.cores = sysconf(_SC_NPROCESSORS_ONLN);
  bool& one_host = m.one_host;
  {
    std::string boot;
    if (std::ifstream f("/proc/sys/kernel/random/boot_id"); f) std::getline(f, boot);
    const std::uint64_t h = boot.empty() ? 0 : std::hash<std::string>{}(boot);
    std::uint64_t lo = 0, hi = 0;
    MMPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MMPI_COMM_WORLD);
    MMPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MMPI_COMM_WORLD);
    one_host = lo != 0 && lo == hi;
  }
  net.shared_cores = one_host && cores > 0 && x + y > cores;
  return m;
}

json measurement_report(const Measurement& m, const Options& o, int x, int y, double seconds) {
  const Network& net = m.net;
  json report;
  report["layout"] = {{"x", x}, {"y", y}};
  report["mode"] = o.quick ? "quick" : "full";
  report["links"] = {{"intra_low", link_json(net.low, m.th_low)},
                     {"intra_high", link_json(net.high, m.th_high)},
                     {"forwarded", link_json(net.forwarded, m.th_fwd)}};
  report["contention"] = contention_json(net);
  report["host"] = {{"one_host", m.one_host},
                    {"cores", m.cores},
                    {"ranks", x + y},
                    {"shared_cores", net.shared_cores}};
  report["native_barrier_us"] = {{"low", m.native_barrier_us[0]}, {"high", m.native_barrier_us[1]}};
  report["configured_thresholds_bytes"] = {
      {"zipper_eager_limit", env_u64("MMPI_EAGER_LIMIT", 16384)},
      {"zipper_chunk_size", env_u64("MMPI_CHUNK_SIZE", 131072)},
      {"openmpi_btl_tcp_eager_limit", env_u64("OMPI_MCA_btl_tcp_eager_limit", 65536)}};
  report["measure_seconds"] = seconds;
  return report;
}

void print_measurement(const Measurement& m, int x, int y, double seconds) {
  const Network& net = m.net;
  auto line = [](const char* what, const LinkParams& p, const std::vector<Threshold>& th) {
    std::printf(
        "zipper-tune: %-10s L=%.1f us  g=%.1f us  G=%.5f us/B (%.0f Mbit/s)  under load: L "
        "%.1f us, G %.0f Mbit/s",
        what, p.L, p.g0, p.G, p.G > 0 ? 8.0 / p.G : 0.0, p.L_load,
        p.G_load > 0 ? 8.0 / p.G_load : 0.0);
    for (const auto& t : th)
      std::printf("  step %llu..%llu B (+%.0f us)", (unsigned long long)t.below,
                  (unsigned long long)t.above, t.jump_us);
    std::printf("\n");
  };
  line("intra-A", net.low, m.th_low);
  line("intra-B", net.high, m.th_high);
  line("forwarded", net.forwarded, m.th_fwd);
  std::printf("zipper-tune: gamma alltoall %.2f; forwarded stream gaps, %d streams:",
              net.gamma_alltoall, m.smax);
  for (const auto& c : net.fwd_contention)
    std::printf("  %llu B: alone %.1f a->b %.1f b->a %.1f exchange %.1f (1 pair %.1f) us",
                (unsigned long long)c.bytes, c.alone, c.low_to_high, c.high_to_low, c.exchange,
                c.exchange1);
  std::printf("; measuring took %.1f s\n", seconds);
  std::printf("zipper-tune: host: %s, %ld cores for %d ranks: %s\n",
              m.one_host ? "every rank on one host" : "ranks on several hosts", m.cores, x + y,
              net.shared_cores ? "steps that run at once share the cores (their times add)"
                               : "steps that run at once overlap");
  std::fflush(stdout);
}

}  // namespace zipper::tune
