#include "measure.h"

#include <mmpi.h>

#include <algorithm>
#include <cstdio>
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

}  // namespace

std::vector<PrttSample> measure_prtt(int client, int server, const PrttPlan& plan) {
  const int me = my_rank();
  const std::size_t k = plan.sizes.size();
  std::vector<double> vals(4 * k, 0.0);
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
  share(vals);
  std::vector<PrttSample> out(k);
  for (std::size_t i = 0; i < k; ++i)
    out[i] = {plan.sizes[i],   vals[4 * i], vals[4 * i + 1],
              vals[4 * i + 2], vals[4 * i], vals[4 * i + 3]};
  return out;
}

double measure_forwarded_contention(int x, int pairs, std::uint64_t bytes, int n) {
  const int me = my_rank();
  std::vector<char> buf(std::max<std::uint64_t>(1, bytes), 1);
  // Per-stream gap of `active` streams at once: every round starts at a
  // barrier, so the streams overlap; PRTT(n) - PRTT(1) over n - 1 as in
  // Hoefler et al.
  auto gap = [&](int active) {
    std::vector<double> r1, rn;
    for (int r = 0; r < 4; ++r)
      for (int k : {1, n}) {
        check(MMPI_Barrier(MMPI_COMM_WORLD), "barrier");
        if (me < active) {
          const double t = client_round(buf, x + me, bytes, k, 0);
          if (r > 0) (k == 1 ? r1 : rn).push_back(t);  // round 0 warms up
        } else if (me >= x && me < x + active) {
          server_round(buf, me - x, bytes, k);
        }
      }
    std::vector<double> gaps(pairs, 0.0);
    if (me < active) gaps[me] = std::max(0.0, (median(rn) - median(r1)) / (n - 1));
    share(gaps);
    gaps.resize(active);
    return median(gaps);
  };
  const double alone = gap(1), together = gap(pairs);
  return alone > 0 ? std::max(1.0, together / alone) : 1.0;
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
  check(MMPI_Barrier(MMPI_COMM_WORLD), "barrier");
  double t0 = MMPI_Wtime();
  check(call(), name.c_str());
  const double warm = agree_max((MMPI_Wtime() - t0) * 1e6);
  const int iters = std::clamp(static_cast<int>(budget_us / std::max(warm, 1.0)), 2, max_iters);
  check(MMPI_Barrier(MMPI_COMM_WORLD), "barrier");
  t0 = MMPI_Wtime();
  for (int i = 0; i < iters; ++i) check(call(), name.c_str());
  return agree_max((MMPI_Wtime() - t0) * 1e6 / iters);
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
