// The non-blocking collectives' schedules (collectives/nbc_*.h), run for
// every rank of simulated layouts (x low + y high ranks, every root) against
// each other without the engine: sends are delivered in order per (source,
// destination) pair, a round starts when the previous one's receives have
// matched, local steps run for real (copies, MPI_Reduce_local). Checks the
// results against references computed here, that nothing deadlocks or is
// left unmatched, and how many messages cross between the clusters.
// Own main: MPI_Init as a singleton, for datatypes and MPI_Reduce_local.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "collectives/nbc_barrier_dissemination.h"
#include "collectives/nbc_bcast_binomial.h"
#include "collectives/nbc_direct.h"
#include "collectives/nbc_reduce_binomial.h"
#include "collectives/nbc_scan_doubling.h"
#include "collectives/schedule.h"

namespace zipper::coll {
namespace {

// The simulation delivers messages itself: schedules never reach the engine.
class NoEngine final : public client::PointToPoint {
 public:
  int isend(const client::CommPtr&, client::Traffic, const void*, int, MPI_Datatype, int, int,
            client::RequestPtr*, client::SendMode) override {
    ADD_FAILURE() << "schedule sent through the engine";
    return MPI_ERR_INTERN;
  }
  int irecv(const client::CommPtr&, client::Traffic, void*, int, MPI_Datatype, int, int,
            client::RequestPtr*) override {
    ADD_FAILURE() << "schedule received through the engine";
    return MPI_ERR_INTERN;
  }
  bool test(client::Request&) override { return true; }
  void wait_until(const std::function<bool()>&, bool) override {}
};

// Rank r's view of a world communicator over sites of `ranks` ranks each.
Topology layout_of(const std::vector<int>& ranks, int r) {
  static NoEngine engine;
  std::vector<std::uint64_t> table;
  std::vector<int> world;
  int site = 0;
  for (std::size_t s = 0; s < ranks.size(); ++s) {
    table.push_back(static_cast<std::uint64_t>(ranks[s]));
    for (int i = 0; i < ranks[s]; ++i) {
      if (static_cast<int>(world.size()) == r) site = static_cast<int>(s);
      world.push_back(static_cast<int>(world.size()));
    }
  }
  std::string why;
  const auto sites = client::SiteMap::make(table, site, &why);
  auto comm = std::make_shared<client::Comm>(client::RankMap(world, *sites), r, client::kWorldCid,
                                             client::NativeComm(), client::NativeComm());
  return Topology::of(engine, comm);
}

// Rank r's view of a world communicator with x low and y high ranks (y = 0:
// one site).
Topology layout(int x, int y, int r) { return y == 0 ? layout_of({x}, r) : layout_of({x, y}, r); }

struct Result {
  bool deadlock = false;
  int inter_cluster_sends = 0;
  int max_rounds = 0;
};

// Runs all ranks' schedules to completion; messages between ranks of
// different sites (site_of) are counted.
Result simulate_sites(std::vector<std::unique_ptr<Schedule>>& s, const std::vector<int>& site_of) {
  const int p = static_cast<int>(s.size());
  struct State {
    std::size_t round = 0;
    bool started = false;
    std::vector<Schedule::Step> recvs;  // posted, unmatched, in order
  };
  std::vector<State> st(p);
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> wire;  // (src, dst)
  Result res;
  for (auto& sch : s) {
    int nonempty = 0;  // end_round() after the last step leaves an empty round
    for (const auto& round : sch->steps()) nonempty += !round.empty();
    res.max_rounds = std::max(res.max_rounds, nonempty);
  }
  for (;;) {
    bool progress = false, all_done = true;
    for (int r = 0; r < p; ++r) {
      const auto& rounds = s[r]->steps();
      State& me = st[r];
      if (me.round >= rounds.size()) continue;
      all_done = false;
      if (!me.started) {
        for (const Schedule::Step& step : rounds[me.round]) {
          if (step.kind == Schedule::Step::Kind::kLocal) {
            EXPECT_EQ(step.fn(), MPI_SUCCESS);
          } else if (step.kind == Schedule::Step::Kind::kSend) {
            int tsize = 0;
            MPI_Type_size(step.type, &tsize);
            const auto* b = static_cast<const char*>(step.buf);
            wire[{r, step.peer}].emplace_back(b, b + std::size_t(tsize) * step.count);
            res.inter_cluster_sends += site_of[static_cast<std::size_t>(r)] !=
                                       site_of[static_cast<std::size_t>(step.peer)];
          } else {
            me.recvs.push_back(step);
          }
        }
        me.started = progress = true;
      }
      // Match each peer's first posted receive with that peer's first message.
      for (std::size_t i = 0; i < me.recvs.size();) {
        const Schedule::Step& rv = me.recvs[i];
        bool earlier_same_peer = false;
        for (std::size_t j = 0; j < i; ++j) earlier_same_peer |= me.recvs[j].peer == rv.peer;
        auto& q = wire[{rv.peer, r}];
        if (earlier_same_peer || q.empty()) {
          ++i;
          continue;
        }
        int tsize = 0;
        MPI_Type_size(rv.type, &tsize);
        EXPECT_EQ(q.front().size(), std::size_t(tsize) * rv.count) << "rank " << r;
        if (!q.front().empty()) std::memcpy(rv.buf, q.front().data(), q.front().size());
        q.pop_front();
        me.recvs.erase(me.recvs.begin() + static_cast<long>(i));
        progress = true;
      }
      if (me.recvs.empty()) {
        ++me.round;
        me.started = false;
        progress = true;
      }
    }
    if (all_done) break;
    if (!progress) {
      res.deadlock = true;
      break;
    }
  }
  for (const auto& [pair, q] : wire)
    EXPECT_TRUE(q.empty()) << "unreceived message " << pair.first << " -> " << pair.second;
  return res;
}

// The same with x low ranks (site 0) and the rest high (site 1).
Result simulate(std::vector<std::unique_ptr<Schedule>>& s, int x) {
  std::vector<int> site_of(s.size());
  for (std::size_t r = 0; r < s.size(); ++r) site_of[r] = static_cast<int>(r) < x ? 0 : 1;
  return simulate_sites(s, site_of);
}

// Affine maps f(v) = a v + b mod 2^32; (f op g) = f after g: not commutative.
struct Affine {
  unsigned a, b;
};
void compose(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* f = static_cast<Affine*>(in);
  auto* g = static_cast<Affine*>(inout);
  for (int i = 0; i < *len; ++i) g[i] = Affine{f[i].a * g[i].a, f[i].a * g[i].b + f[i].b};
}
MPI_Datatype g_affine;
MPI_Op g_compose;

Affine input(int rank, int i) {
  return Affine{unsigned(rank * 7 + i * 3) * 2 + 1, unsigned(rank * 1000 + i)};
}
// acc (op) x for the reference, written out independently of MPI.
Affine then(Affine acc, Affine x) { return Affine{acc.a * x.a, acc.a * x.b + acc.b}; }
bool operator==(Affine l, Affine r) { return l.a == r.a && l.b == r.b; }

const std::vector<std::pair<int, int>> kLayouts = {{1, 0}, {3, 0}, {1, 1}, {2, 2}, {1, 4},
                                                   {4, 1}, {3, 5}, {5, 3}, {4, 4}, {2, 7}};

TEST(Schedule, BcastReachesEveryRankWithOneInterClusterMessage) {
  for (auto [x, y] : kLayouts)
    for (int root = 0; root < x + y; ++root) {
      const int p = x + y, n = 5;
      std::vector<std::vector<int>> buf(p, std::vector<int>(n, -1));
      for (int i = 0; i < n; ++i) buf[root][i] = 100 * root + i;
      std::vector<std::unique_ptr<Schedule>> s;
      for (int r = 0; r < p; ++r) {
        s.push_back(std::make_unique<Schedule>(layout(x, y, r), 0));
        nbc_bcast_binomial(*s.back(), buf[r].data(), n, MPI_INT, root);
      }
      const Result res = simulate(s, x);
      ASSERT_FALSE(res.deadlock) << x << "+" << y << " root " << root;
      EXPECT_EQ(res.inter_cluster_sends, y > 0 ? 1 : 0) << x << "+" << y << " root " << root;
      for (int r = 0; r < p; ++r) EXPECT_EQ(buf[r], buf[root]) << "rank " << r;
    }
}

TEST(Schedule, ReduceAndAllreduceCombineInRankOrder) {
  for (auto [x, y] : kLayouts)
    for (int root = 0; root < x + y; ++root) {
      const int p = x + y, n = 3;
      std::vector<std::vector<Affine>> in(p), out(p, std::vector<Affine>(n, Affine{0, 0}));
      std::vector<Affine> want(n);
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) {
          in[r].push_back(input(r, i));
          want[i] = r == 0 ? in[r][i] : then(want[i], in[r][i]);
        }
      // Ireduce to `root`.
      std::vector<std::unique_ptr<Schedule>> s;
      for (int r = 0; r < p; ++r) {
        s.push_back(std::make_unique<Schedule>(layout(x, y, r), 0));
        nbc_reduce_binomial(*s.back(), in[r].data(), out[r].data(), n, g_affine, g_compose, root);
      }
      ASSERT_FALSE(simulate(s, x).deadlock);
      for (int i = 0; i < n; ++i) EXPECT_TRUE(out[root][i] == want[i]) << x << "+" << y << " " << i;
      // Iallreduce, as capi/nbc.cpp composes it.
      if (root != 0) continue;
      s.clear();
      for (int r = 0; r < p; ++r) {
        out[r].assign(n, Affine{0, 0});
        s.push_back(std::make_unique<Schedule>(layout(x, y, r), 0));
        nbc_reduce_binomial(*s.back(), in[r].data(), out[r].data(), n, g_affine, g_compose, 0);
        s.back()->end_round();
        nbc_bcast_binomial(*s.back(), out[r].data(), n, g_affine, 0);
      }
      ASSERT_FALSE(simulate(s, x).deadlock);
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) EXPECT_TRUE(out[r][i] == want[i]) << "rank " << r;
    }
}

TEST(Schedule, ScanAndExscanArePrefixesInRankOrder) {
  for (auto [x, y] : kLayouts)
    for (bool exclusive : {false, true}) {
      const int p = x + y, n = 2;
      std::vector<std::vector<Affine>> in(p), out(p, std::vector<Affine>(n, Affine{9, 9}));
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) in[r].push_back(input(r, i));
      std::vector<std::unique_ptr<Schedule>> s;
      for (int r = 0; r < p; ++r) {
        s.push_back(std::make_unique<Schedule>(layout(x, y, r), 0));
        nbc_scan_doubling(*s.back(), in[r].data(), out[r].data(), n, g_affine, g_compose,
                          exclusive);
      }
      ASSERT_FALSE(simulate(s, x).deadlock);
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) {
          const int last = exclusive ? r - 1 : r;
          Affine want{9, 9};  // exscan: rank 0 untouched
          for (int q = 0; q <= last; ++q) want = q == 0 ? in[0][i] : then(want, in[q][i]);
          EXPECT_TRUE(out[r][i] == want) << x << "+" << y << " rank " << r << " ex " << exclusive;
        }
    }
}

TEST(Schedule, BarrierCompletesInLogRounds) {
  for (int p = 1; p <= 12; ++p) {
    std::vector<std::unique_ptr<Schedule>> s;
    for (int r = 0; r < p; ++r) {
      s.push_back(std::make_unique<Schedule>(layout((p + 1) / 2, p / 2, r), 0));
      nbc_barrier_dissemination(*s.back());
    }
    const Result res = simulate(s, (p + 1) / 2);
    ASSERT_FALSE(res.deadlock) << p;
    int rounds = 0;
    while ((1 << rounds) < p) ++rounds;
    EXPECT_EQ(res.max_rounds, rounds) << p;
  }
}

TEST(Schedule, DirectExchangeDeliversEveryBlock) {
  for (auto [x, y] : kLayouts) {
    const int p = x + y;
    std::vector<std::vector<int>> send(p, std::vector<int>(p)), recv(p, std::vector<int>(p, -1));
    std::vector<std::unique_ptr<Schedule>> s;
    for (int r = 0; r < p; ++r) {
      std::vector<Block> sb(p), rb(p);
      for (int q = 0; q < p; ++q) {
        send[r][q] = 1000 * r + q;
        sb[q] = Block{&send[r][q], 1, MPI_INT, true};
        rb[q] = Block{&recv[r][q], 1, MPI_INT, true};
      }
      s.push_back(std::make_unique<Schedule>(layout(x, y, r), 0));
      nbc_direct(*s.back(), sb, rb);
    }
    ASSERT_FALSE(simulate(s, x).deadlock);
    for (int r = 0; r < p; ++r)
      for (int q = 0; q < p; ++q) EXPECT_EQ(recv[r][q], 1000 * q + r);
  }
}

// More than two sites: the blocking collectives run these schedules there
// (capi/many_sites.h). Every schedule completes with the reference result;
// a broadcast crosses to each other site once.
TEST(Schedule, EveryScheduleAtThreeAndFourSites) {
  const std::vector<std::vector<int>> layouts = {{2, 2, 2}, {1, 3, 2}, {4, 1, 1}, {3, 1, 1, 2}};
  for (const auto& sites : layouts) {
    std::vector<int> site_of;
    for (std::size_t s = 0; s < sites.size(); ++s) site_of.insert(site_of.end(), sites[s], int(s));
    const int p = static_cast<int>(site_of.size());
    const auto build = [&](const std::function<void(Schedule&, int)>& add) {
      std::vector<std::unique_ptr<Schedule>> s;
      for (int r = 0; r < p; ++r) {
        s.push_back(std::make_unique<Schedule>(layout_of(sites, r), 0));
        add(*s.back(), r);
      }
      return s;
    };
    for (int root = 0; root < p; ++root) {
      std::vector<std::vector<int>> buf(p, std::vector<int>(4, -1));
      for (int i = 0; i < 4; ++i) buf[root][i] = 100 * root + i;
      auto s = build(
          [&](Schedule& sc, int r) { nbc_bcast_binomial(sc, buf[r].data(), 4, MPI_INT, root); });
      const Result res = simulate_sites(s, site_of);
      ASSERT_FALSE(res.deadlock) << "root " << root;
      EXPECT_EQ(res.inter_cluster_sends, static_cast<int>(sites.size()) - 1) << "root " << root;
      for (int r = 0; r < p; ++r) EXPECT_EQ(buf[r], buf[root]) << "rank " << r;
    }
    // Allreduce as capi/nbc.cpp composes it, with a non-commutative operation.
    std::vector<std::vector<Affine>> in(p), out(p, std::vector<Affine>(3, Affine{0, 0}));
    std::vector<Affine> want(3);
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < 3; ++i) {
        in[r].push_back(input(r, i));
        want[i] = r == 0 ? in[r][i] : then(want[i], in[r][i]);
      }
    auto s = build([&](Schedule& sc, int r) {
      nbc_reduce_binomial(sc, in[r].data(), out[r].data(), 3, g_affine, g_compose, 0);
      sc.end_round();
      nbc_bcast_binomial(sc, out[r].data(), 3, g_affine, 0);
    });
    ASSERT_FALSE(simulate_sites(s, site_of).deadlock);
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < 3; ++i) EXPECT_TRUE(out[r][i] == want[i]) << "rank " << r;
    // Scan.
    std::vector<std::vector<Affine>> scanned(p, std::vector<Affine>(3, Affine{9, 9}));
    s = build([&](Schedule& sc, int r) {
      nbc_scan_doubling(sc, in[r].data(), scanned[r].data(), 3, g_affine, g_compose, false);
    });
    ASSERT_FALSE(simulate_sites(s, site_of).deadlock);
    for (int r = 0; r < p; ++r) {
      Affine w = in[0][1];
      for (int q = 1; q <= r; ++q) w = then(w, in[q][1]);
      EXPECT_TRUE(scanned[r][1] == w) << "rank " << r;
    }
    // Barrier and the direct exchange (alltoall).
    s = build([&](Schedule& sc, int) { nbc_barrier_dissemination(sc); });
    ASSERT_FALSE(simulate_sites(s, site_of).deadlock);
    std::vector<std::vector<int>> send(p, std::vector<int>(p)), recv(p, std::vector<int>(p, -1));
    s = build([&](Schedule& sc, int r) {
      std::vector<Block> sb(p), rb(p);
      for (int q = 0; q < p; ++q) {
        send[r][q] = 1000 * r + q;
        sb[q] = Block{&send[r][q], 1, MPI_INT, true};
        rb[q] = Block{&recv[r][q], 1, MPI_INT, true};
      }
      nbc_direct(sc, sb, rb);
    });
    ASSERT_FALSE(simulate_sites(s, site_of).deadlock);
    for (int r = 0; r < p; ++r)
      for (int q = 0; q < p; ++q) EXPECT_EQ(recv[r][q], 1000 * q + r);
  }
}

}  // namespace
}  // namespace zipper::coll

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  MPI_Type_contiguous(2, MPI_UNSIGNED, &zipper::coll::g_affine);
  MPI_Type_commit(&zipper::coll::g_affine);
  MPI_Op_create(zipper::coll::compose, 0, &zipper::coll::g_compose);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
