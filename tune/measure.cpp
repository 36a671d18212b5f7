#include "measure.h"

#include <mmpi.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>

namespace zipper::tune {
namespace {

constexpr int kTag = 7100;  // user tag of the ping-pongs

// A failed call leaves the peer waiting for a message that never comes: stop
// the job with the reason rather than hang.
void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr, "zipper-tune: %s failed: %s; aborting the job\n", what, text);
  MMPI_Abort(MMPI_COMM_WORLD, 1);
}

int my_rank() {
  int r = 0;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &r);
  return r;
}

void spin_us(double us) {
  const double until = MMPI_Wtime() + us * 1e-6;
  while (MMPI_Wtime() < until) {
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// Client side of one PRTT(n, d, s), µs: n messages, d µs apart, one reply.
double client_round(std::vector<char>& buf, int peer, std::uint64_t s, int n, double d) {
  const int count = static_cast<int>(s);
  const double t0 = MMPI_Wtime();
  for (int j = 0; j < n; ++j) {
    if (j > 0 && d > 0) spin_us(d);
    check(MMPI_Send(buf.data(), count, MPI_BYTE, peer, kTag, MMPI_COMM_WORLD), "PRTT send");
  }
  check(MMPI_Recv(buf.data(), count, MPI_BYTE, peer, kTag, MMPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "PRTT receive");
  return (MMPI_Wtime() - t0) * 1e6;
}

void server_round(std::vector<char>& buf, int peer, std::uint64_t s, int n) {
  const int count = static_cast<int>(s);
  for (int j = 0; j < n; ++j)
    check(MMPI_Recv(buf.data(), count, MPI_BYTE, peer, kTag, MMPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "PRTT receive");
  check(MMPI_Send(buf.data(), count, MPI_BYTE, peer, kTag, MMPI_COMM_WORLD), "PRTT send");
}

// Waits for every rank without polling hard: ranks not taking part in a
// measurement sleep here, so that on a host with fewer cores than ranks
// their busy waits (Open MPI's progress loop with sched_yield) do not take
// the CPU from the two ranks and the zipperd being measured. Returns when
// all ranks have arrived; aborts the job after kQuietTimeoutS.
constexpr double kQuietTimeoutS = 900;
void quiet_wait() {
  MPI_Request req = MPI_REQUEST_NULL;
  check(MMPI_Ibarrier(MMPI_COMM_WORLD, &req), "barrier");
  const double until = MMPI_Wtime() + kQuietTimeoutS;
  for (int done = 0;;) {
    check(MMPI_Test(&req, &done, MPI_STATUS_IGNORE), "barrier");
    if (done) return;
    if (MMPI_Wtime() > until) check(MPI_ERR_OTHER, "waiting for the measured ranks (timeout)");
    const timespec nap{0, 500000};  // 0.5 ms: the wake-up adds at most this once
    nanosleep(&nap, nullptr);
  }
}

// Sums v over all ranks (each slot is written by one rank only, so the sum
// is that rank's value on every rank).
void share(std::vector<double>& v) {
  std::vector<double> out(v.size());
  check(MMPI_Allreduce(v.data(), out.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM,
                       MMPI_COMM_WORLD),
        "sharing the measurements");
  v.swap(out);
}

double agree_max(double v) {
  double out = 0;
  check(MMPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MMPI_COMM_WORLD), "agreeing on a time");
  return out;
}

// PRTT samples of several (client, server) pairs running the plan at once,
// per pair; a rank is in at most one pair.
std::vector<std::vector<PrttSample>> measure_prtt_pairs(
    const std::vector<std::pair<int, int>>& pairs, const PrttPlan& plan) {
  const int me = my_rank();
  const std::size_t k = plan.sizes.size();
  // 4 values per size and pair; each written by the pair's client or server.
  std::vector<double> all(4 * k * pairs.size(), 0.0);
  int client = -1, server = -1;
  double* vals = nullptr;
  for (std::size_t q = 0; q < pairs.size(); ++q)
    if (me == pairs[q].first || me == pairs[q].second) {
      client = pairs[q].first;
      server = pairs[q].second;
      vals = all.data() + 4 * k * q;
    }
  std::vector<char> buf(plan.sizes.empty() ? 1 : std::max<std::uint64_t>(1, plan.sizes.back()), 1);
  // Warm-up: connections, rendezvous paths and pools are set up by the first
  // messages; none of that belongs in a sample.
  if (me == client || me == server) {
    const std::uint64_t warm = std::min<std::uint64_t>(65536, buf.size());
    for (std::uint64_t s : {std::uint64_t{1}, warm})
      for (int r = 0; r < 3; ++r) {
        if (me == client)
          client_round(buf, server, s, plan.n, 0);
        else
          server_round(buf, client, s, plan.n);
      }
  }
  for (std::size_t i = 0; i < k && (me == client || me == server); ++i) {
    const std::uint64_t s = plan.sizes[i];
    const int peer = me == client ? server : client;
    if (me == client) {
      std::vector<double> r1, rn, rd;
      client_round(buf, peer, s, 1, 0);  // warm-up (connections, registrations)
      for (int r = 0; r < plan.repeats; ++r) r1.push_back(client_round(buf, peer, s, 1, 0));
      for (int r = 0; r < plan.repeats; ++r) rn.push_back(client_round(buf, peer, s, plan.n, 0));
      const double d = median(r1);
      for (int r = 0; r < plan.repeats; ++r) rd.push_back(client_round(buf, peer, s, plan.n, d));
      vals[4 * i] = d;
      vals[4 * i + 1] = median(rn);
      vals[4 * i + 2] = median(rd);
      // o_r: the server waits d before receiving, so the message is there.
      check(MMPI_Send(&d, 1, MPI_DOUBLE, peer, kTag, MMPI_COMM_WORLD), "PRTT delay");
      for (int r = 0; r < plan.repeats; ++r) client_round(buf, peer, s, 1, 0);
    } else {
      server_round(buf, peer, s, 1);
      for (int r = 0; r < plan.repeats; ++r) server_round(buf, peer, s, 1);
      for (int r = 0; r < plan.repeats; ++r) server_round(buf, peer, s, plan.n);
      for (int r = 0; r < plan.repeats; ++r) server_round(buf, peer, s, plan.n);
      double d = 0;
      check(MMPI_Recv(&d, 1, MPI_DOUBLE, peer, kTag, MMPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "PRTT delay");
      std::vector<double> orr;
      for (int r = 0; r < plan.repeats; ++r) {
        spin_us(d);
        const double t0 = MMPI_Wtime();
        check(MMPI_Recv(buf.data(), static_cast<int>(s), MPI_BYTE, peer, kTag, MMPI_COMM_WORLD,
                        MPI_STATUS_IGNORE),
              "PRTT receive");
        orr.push_back((MMPI_Wtime() - t0) * 1e6);
        check(MMPI_Send(buf.data(), static_cast<int>(s), MPI_BYTE, peer, kTag, MMPI_COMM_WORLD),
              "PRTT send");
      }
      vals[4 * i + 3] = median(orr);
    }
  }
  quiet_wait();
  share(all);
  std::vector<std::vector<PrttSample>> out(pairs.size(), std::vector<PrttSample>(k));
  for (std::size_t q = 0; q < pairs.size(); ++q)
    for (std::size_t i = 0; i < k; ++i) {
      const double* v = all.data() + 4 * k * q + 4 * i;
      out[q][i] = {plan.sizes[i], v[0], v[1], v[2], v[0], v[3]};
    }
  return out;
}

}  // namespace

std::vector<PrttSample> measure_prtt(int client, int server, const PrttPlan& plan) {
  return measure_prtt_pairs({{client, server}}, plan).front();
}

namespace {

// Per-message gap of bursts of n non-blocking messages of `bytes`, every
// rank with a peer (>= 0) at once: g = (T(n) - T(1)) / (n - 1) from the
// receivers' times (T: µs from the common start to the last message in),
// medians over 4 repeats after a warm-up. Ranks without a peer sleep
// meanwhile. Returns each receiving rank's gap in its slot (0 elsewhere).
std::vector<double> burst_gaps(int peer, bool sends, bool receives, std::uint64_t bytes, int n) {
  const int me = my_rank();
  const int count = static_cast<int>(bytes);
  std::vector<char> out(std::max<std::uint64_t>(1, bytes), 1);
  std::vector<char> in(receives ? std::size_t(n) * out.size() : 1);
  std::vector<MPI_Request> reqs;
  auto burst = [&](int k) {
    reqs.clear();
    for (int j = 0; receives && j < k; ++j) {
      reqs.emplace_back(MPI_REQUEST_NULL);
      check(MMPI_Irecv(in.data() + std::size_t(j) * out.size(), count, MPI_BYTE, peer, kTag,
                       MMPI_COMM_WORLD, &reqs.back()),
            "stream receive");
    }
    const double t0 = MMPI_Wtime();
    for (int j = 0; sends && j < k; ++j) {
      reqs.emplace_back(MPI_REQUEST_NULL);
      check(MMPI_Isend(out.data(), count, MPI_BYTE, peer, kTag, MMPI_COMM_WORLD, &reqs.back()),
            "stream send");
    }
    check(MMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE),
          "stream wait");
    return (MMPI_Wtime() - t0) * 1e6;
  };
  std::vector<double> t1, tn;
  for (int r = 0; r < 5; ++r)
    for (int k : {1, n}) {
      check(MMPI_Barrier(MMPI_COMM_WORLD), "barrier");  // the streams start together
      if (peer >= 0) {
        const double t = burst(k);
        if (r > 0) (k == 1 ? t1 : tn).push_back(t);  // round 0 warms up
      }
      quiet_wait();
    }
  int size = 1;
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  std::vector<double> gaps(size, 0.0);
  if (peer >= 0 && receives) gaps[me] = std::max(0.0, (median(tn) - median(t1)) / (n - 1));
  share(gaps);
  return gaps;
}

}  // namespace

double forwarded_stream_gap(int x, int pairs, Flow flow, std::uint64_t bytes, int n) {
  const int me = my_rank();
  const bool low = me < pairs, high = me >= x && me < x + pairs;
  const int peer = low ? x + me : high ? me - x : -1;
  const bool sends = (low && flow != Flow::kHighToLow) || (high && flow != Flow::kLowToHigh);
  const bool receives = (low && flow != Flow::kLowToHigh) || (high && flow != Flow::kHighToLow);
  const std::vector<double> gaps = burst_gaps(peer, sends, receives, bytes, n);
  std::vector<double> mine;
  for (int r = 0; r < static_cast<int>(gaps.size()); ++r) {
    const bool rl = r < pairs, rh = r >= x && r < x + pairs;
    if ((rl && flow != Flow::kLowToHigh) || (rh && flow != Flow::kHighToLow))
      mine.push_back(gaps[r]);
  }
  return median(mine);
}

std::pair<double, double> intra_stream_gaps(int x, std::uint64_t bytes, int n) {
  const int me = my_rank();
  int size = 1;
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  // Pairs (0,1), (2,3), ... in the low cluster and (x,x+1), ... in the high
  // one; the first of a pair sends. An odd rank out sleeps.
  const int first = me < x ? 0 : x, last = me < x ? x : size, i = me - first;
  const int peer = (i % 2 == 0) ? (me + 1 < last ? me + 1 : -1) : me - 1;
  const std::vector<double> gaps = burst_gaps(peer, i % 2 == 0, i % 2 == 1, bytes, n);
  std::vector<double> low, high;
  for (int r = 0; r < size; ++r) {
    const int j = r < x ? r : r - x;
    if (j % 2 == 1) (r < x ? low : high).push_back(gaps[r]);
  }
  return {low.empty() ? 0 : median(low), high.empty() ? 0 : median(high)};
}

FwdContention measure_forwarded_contention(int x, int pairs, std::uint64_t bytes, int n) {
  FwdContention c;
  c.bytes = bytes;
  c.alone = forwarded_stream_gap(x, 1, Flow::kLowToHigh, bytes, n);
  c.exchange1 = forwarded_stream_gap(x, 1, Flow::kExchange, bytes, n);
  c.low_to_high = forwarded_stream_gap(x, pairs, Flow::kLowToHigh, bytes, n);
  c.high_to_low = forwarded_stream_gap(x, pairs, Flow::kHighToLow, bytes, n);
  c.exchange = forwarded_stream_gap(x, pairs, Flow::kExchange, bytes, n);
  return c;
}

double time_collective(coll::Collective c, const Config& config, bool automatic,
                       std::uint64_t bytes, double budget_us, int max_iters) {
  const std::string name(coll::name_of(c));
  if (automatic) {
    check(MMPIX_Coll_set(name.c_str(), "", 0), "MMPIX_Coll_set");
    check(MMPIX_Coll_set_segment(name.c_str(), -1), "MMPIX_Coll_set_segment");
  } else {
    check(MMPIX_Coll_set(name.c_str(), std::string(coll::name_of(config.algorithm)).c_str(),
                         config.n),
          "MMPIX_Coll_set");
    check(MMPIX_Coll_set_segment(name.c_str(), static_cast<MPI_Aint>(config.segment)),
          "MMPIX_Coll_set_segment");
  }
  int size = 1;
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  const int m = static_cast<int>(bytes);
  const int doubles = std::max(1, m / 8);
  std::vector<char> a, b;
  std::vector<int> counts, displs;
  switch (c) {
    case coll::Collective::kBcast:
      a.assign(std::max(1, m), 1);
      break;
    case coll::Collective::kReduce:
    case coll::Collective::kAllreduce:
      a.assign(8 * static_cast<std::size_t>(doubles), 0);
      b.assign(a.size(), 0);
      break;
    case coll::Collective::kAlltoall:
    case coll::Collective::kAlltoallv:
      a.assign(std::max<std::size_t>(1, std::size_t(m) * size), 1);
      b.assign(a.size(), 0);
      counts.assign(size, m);
      for (int i = 0; i < size; ++i) displs.push_back(i * m);
      break;
    default:
      break;
  }
  auto call = [&]() -> int {
    switch (c) {
      case coll::Collective::kBarrier:
        return MMPI_Barrier(MMPI_COMM_WORLD);
      case coll::Collective::kBcast:
        return MMPI_Bcast(a.data(), m, MPI_BYTE, 0, MMPI_COMM_WORLD);
      case coll::Collective::kReduce:
        return MMPI_Reduce(a.data(), b.data(), doubles, MPI_DOUBLE, MPI_SUM, 0, MMPI_COMM_WORLD);
      case coll::Collective::kAllreduce:
        return MMPI_Allreduce(a.data(), b.data(), doubles, MPI_DOUBLE, MPI_SUM, MMPI_COMM_WORLD);
      case coll::Collective::kAlltoall:
        return MMPI_Alltoall(a.data(), m, MPI_BYTE, b.data(), m, MPI_BYTE, MMPI_COMM_WORLD);
      case coll::Collective::kAlltoallv:
        return MMPI_Alltoallv(a.data(), counts.data(), displs.data(), MPI_BYTE, b.data(),
                              counts.data(), displs.data(), MPI_BYTE, MMPI_COMM_WORLD);
      default:
        return MPI_ERR_ARG;
    }
  };
  // Every call starts together after a barrier and counts until the last
  // rank is done (the largest time of any rank): the latency of one call,
  // which is what the models predict. Back-to-back calls would measure
  // throughput instead: a root returns from a bcast before the leaves have
  // the data, and the next call overlaps. The median over the calls: a rank
  // the scheduler leaves out for a time slice now and then would set a mean.
  const auto timed = [&](int iters) {
    std::vector<double> mine(iters), all(iters);
    for (int i = 0; i < iters; ++i) {
      check(MMPI_Barrier(MMPI_COMM_WORLD), "barrier");
      const double t0 = MMPI_Wtime();
      check(call(), name.c_str());
      mine[i] = (MMPI_Wtime() - t0) * 1e6;
    }
    check(MMPI_Allreduce(mine.data(), all.data(), iters, MPI_DOUBLE, MPI_MAX, MMPI_COMM_WORLD),
          "agreeing on a time");
    return all;
  };
  const double warm = timed(1).front();
  const int iters = std::clamp(static_cast<int>(budget_us / std::max(warm, 1.0)), 3, max_iters);
  return median(timed(iters));
}

double time_native_alltoall(std::uint64_t bytes, int iters) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> a(std::size_t(bytes) * size + 1, 1), b(a.size());
  const int m = static_cast<int>(bytes);
  MPI_Alltoall(a.data(), m, MPI_BYTE, b.data(), m, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i)
    MPI_Alltoall(a.data(), m, MPI_BYTE, b.data(), m, MPI_BYTE, MPI_COMM_WORLD);
  double mine = (MPI_Wtime() - t0) * 1e6 / iters, out = 0;
  MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

double time_native_barrier(int iters) {
  // The median call, not the mean: a rank the scheduler leaves out for a
  // whole time slice (ms) now and then would set the mean.
  std::vector<double> t;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters; ++i) {
    const double t0 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    t.push_back((MPI_Wtime() - t0) * 1e6);
  }
  double mine = median(t), out = 0;
  MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

double time_reduce_op() {
  const int n = 131072;  // 1 MiB of doubles
  std::vector<double> in(n, 1.0), inout(n, 2.0);
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const double t0 = MPI_Wtime();
    MPI_Reduce_local(in.data(), inout.data(), n, MPI_DOUBLE, MPI_SUM);
    best = std::min(best, (MPI_Wtime() - t0) * 1e6);
  }
  return agree_max(best / (8.0 * n));
}

}  // namespace zipper::tune
