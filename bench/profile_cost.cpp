// profile_cost: what zipper-run --profile adds per counted message (ns), the
// figure behind docs/placement.md's overhead bound (cost per count × counts
// per rank ÷ run time). Google Benchmark; one process, MPI initialised alone.
//   engine_count         TrafficProfile::sent: a point-to-point message (the
//                        engine's lock is held by its caller anyway)
//   native_count/N       a native collective over N members: lock_native and
//                        N sent_natively
//   native_lookup        the native hook's steady-state table lookup: a mutex
//                        and PMPI_Comm_get_attr
//   type_size            MPI_Type_size, which a native message's count needs
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <mutex>

#include "client/traffic_profile.h"

namespace {

using zipper::client::TrafficProfile;

void engine_count(benchmark::State& s) {
  TrafficProfile p(4096, 0);
  int v = 1;
  for (auto _ : s) {
    p.sent(v, 8);
    v = v % 4095 + 1;
  }
  benchmark::DoNotOptimize(p.rows());
}
BENCHMARK(engine_count);

void native_count(benchmark::State& s) {
  TrafficProfile p(4096, 0);
  const int members = static_cast<int>(s.range(0));
  for (auto _ : s) {
    auto lk = p.lock_native();
    for (int m = 1; m <= members; ++m) p.sent_natively(m, 8);
  }
  benchmark::DoNotOptimize(p.rows());
}
BENCHMARK(native_count)->Arg(4)->Arg(64);

void native_lookup(benchmark::State& s) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, nullptr);
  static int table = 0;
  MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &table);
  std::mutex mu;
  for (auto _ : s) {
    std::lock_guard<std::mutex> g(mu);
    void* v = nullptr;
    int flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &v, &flag);
    benchmark::DoNotOptimize(v);
  }
  MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
  MPI_Comm_free_keyval(&keyval);
}
BENCHMARK(native_lookup);

void type_size(benchmark::State& s) {
  int size = 0;
  for (auto _ : s) {
    MPI_Type_size(MPI_DOUBLE, &size);
    benchmark::DoNotOptimize(size);
  }
}
BENCHMARK(type_size);

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
