#include "runtime.h"

#include <algorithm>
#include <cstdio>

#include "native_traffic.h"
#include "world_placement.h"

namespace zipper::client {

std::unique_ptr<Runtime> Runtime::instance_;

void Runtime::report(const std::string& msg) const {
  std::fprintf(stderr, "mmpi[rank %d]: %s\n", rank_, msg.c_str());
  std::fflush(stderr);
}

namespace {

// A duplicate of `c` that returns errors as codes, as the MMPI API documents.
NativeComm dup_returning_errors(MPI_Comm c) {
  MPI_Comm d = MPI_COMM_NULL;
  MPI_Comm_dup(c, &d);
  MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
  return NativeComm(d);
}

}  // namespace

int Runtime::init(int* argc, char*** argv, int required, int* provided) {
  if (instance_) return MPI_ERR_OTHER;  // MPI forbids a second init
  std::unique_ptr<Runtime> rt(new Runtime);
  int inited = 0;
  MPI_Initialized(&inited);
  // The application gets SERIALIZED at most (its MMPI calls are not
  // thread-safe). Open MPI itself is asked for MULTIPLE when the RMA progress
  // thread may run (rma_progress.h): that thread and the application's
  // native calls (collectives inside a cluster) then meet in Open MPI.
  const int want = std::min(required, static_cast<int>(MPI_THREAD_SERIALIZED));
  // The environment is read here, once (settings.h); everything below gets
  // its part. RMA's part comes first: it decides the thread level.
  rt->settings_.env = Environment::capture();
  std::string why;
  const auto rma = rma_settings_from(rt->settings_.env, &why);
  const int ask = (!rma || rma->progress_thread) ? static_cast<int>(MPI_THREAD_MULTIPLE) : want;
  int got = ask;
  if (!inited) {
    int rc = MPI_Init_thread(argc, argv, std::max(ask, want), &got);
    if (rc != MPI_SUCCESS) return rc;
    rt->we_initialized_mpi_ = true;
  } else {
    MPI_Query_thread(&got);
  }
  rt->thread_level_ = std::min(got, want);
  if (provided) *provided = rt->thread_level_;
  if (!rma) {
    rt->report("bad environment: " + why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  rt->settings_.rma = *rma;
  rt->rma_thread_allowed_ = rma->progress_thread && got == MPI_THREAD_MULTIPLE;
  int local_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &local_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &rt->local_size_);
  rt->rank_ = local_rank;
  rt->size_ = rt->local_size_;

  auto client = config_from(rt->settings_.env, &why);
  if (!client) {
    rt->report("bad environment: " + why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  rt->settings_.client = std::move(*client);
  auto calls = call_settings_from(rt->settings_.env, &why);
  if (!calls) {
    rt->report("bad environment: " + why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  rt->settings_.calls = *calls;
  rt->settings_.env.forget("MMPI_JOB_SECRET");
  const ClientConfig* cfg = &rt->settings_.client;
  auto made = sites_from(*cfg, rt->local_size_, &why);
  if (!made) {
    rt->report(why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  rt->sites_ = std::make_unique<const SiteMap>(std::move(*made));
  rt->offset_ = rt->sites_->local_ranks().first;
  rt->size_ = rt->sites_->world_size();
  rt->rank_ += rt->offset_;
  const SiteMap& sites = *rt->sites_;

  // MMPI_COMM_WORLD rank w runs as virtual rank vrank_of[w]: block order,
  // or where zipper-run's rank map placed it.
  const char* placed = rt->settings_.env.get("MMPI_RANK_MAP");
  auto vrank_of = world_placement_from(placed ? placed : "", sites, &why);
  if (!vrank_of) {
    rt->report("bad environment: " + why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  const int world_rank = static_cast<int>(std::find(vrank_of->begin(), vrank_of->end(), rt->rank_) -
                                          vrank_of->begin());
  NativeComm world_native = dup_returning_errors(MPI_COMM_WORLD);
  NativeComm world_coll = dup_returning_errors(world_native.get());
  rt->world_ = std::make_shared<Comm>(RankMap(std::move(*vrank_of), sites), world_rank, kWorldCid,
                                      std::move(world_native), std::move(world_coll));
  rt->world_->name = "MMPI_COMM_WORLD";
  rt->comms_.add(rt->world_->native(), rt->world_);
  NativeComm self_native = dup_returning_errors(MPI_COMM_SELF);
  NativeComm self_coll = dup_returning_errors(MPI_COMM_SELF);
  auto self = std::make_shared<Comm>(RankMap({rt->rank_}, sites), 0, kSelfCid,
                                     std::move(self_native), std::move(self_coll));
  self->name = "MMPI_COMM_SELF";
  // MMPI_COMM_SELF's handle is MPI_COMM_SELF: its errors come back as codes
  // too, and its MMPI handler decides (capi/errhandler.h).
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  rt->comms_.add(MPI_COMM_SELF, std::move(self));

  // The engine exists before connecting: a peer that saw JOB_READY first may
  // send at once, and its frame can arrive in the same receive as our JOB_READY.
  // One forwarder is pinged only when MMPI_FORWARDER_TIMEOUT asks for it:
  // its failure shows on the link, and there is nowhere to fail over to.
  const bool several = cfg->forwarder && cfg->forwarder->find(',') != std::string::npos;
  const int timeout_ms = several || cfg->forwarder_timeout_set ? cfg->forwarder_timeout_ms : 0;
  rt->rails_ = std::make_unique<Rails>(*cfg, rt->rank_, timeout_ms);
  rt->engine_ =
      std::make_unique<Engine>(*rt->rails_, rt->progress_, rt->rank_, sites, cfg->spin_rounds,
                               cfg->retransmit_bytes, cfg->forwarder_timeout_ms);
  // Another site aborted: this one ends at once with its code, whatever
  // this rank was waiting for.
  rt->rails_->on_abort([rank = rt->rank_, &sites](int from, int code) {
    const std::string where =
        sites.sites() == 2 ? "the other cluster" : "site " + std::to_string(sites.site_of(from));
    std::fprintf(stderr,
                 "mmpi[rank %d]: rank %d in %s called MPI_Abort with code %d; "
                 "aborting this cluster\n",
                 rank, from, where.c_str(), code);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
  });
  if (cfg->forwarder) {
    // The engine is the rails' frame handler during the handshake too.
    if (!rt->engine_->connect()) {
      rt->report(rt->rails_->error() + " (aborting)");
      MPI_Abort(MPI_COMM_WORLD, 1);
      return MPI_ERR_OTHER;
    }
  }
  // The profile counts from here: what the application's calls send, not
  // MMPI_Init's own setup.
  if (const char* path = rt->settings_.env.get("MMPI_PROFILE"); path && *path) {
    if (rt->size_ > TrafficProfile::kMaxWorldSize) {
      rt->report("bad environment: MMPI_PROFILE: a profile counts at most " +
                 std::to_string(TrafficProfile::kMaxWorldSize) + " ranks; this job has " +
                 std::to_string(rt->size_));
      MPI_Abort(MPI_COMM_WORLD, 1);
      return MPI_ERR_OTHER;
    }
    rt->profile_ = std::make_unique<TrafficProfile>(rt->size_, rt->rank_);
    rt->engine_->set_profile(rt->profile_.get());
    native_traffic_start(rt->profile_.get(), rt->offset_);
  }
  instance_ = std::move(rt);
  return MPI_SUCCESS;
}

std::unique_ptr<TrafficProfile> Runtime::stop_profile() {
  if (!profile_) return nullptr;
  // Under the engine's lock: no progress round (the RMA thread's) is inside
  // a count while the hooks go.
  std::lock_guard<std::recursive_mutex> g(engine_->mutex());
  engine_->set_profile(nullptr);
  native_traffic_stop();
  return std::move(profile_);
}

int Runtime::abort(int code) {
  if (Runtime* rt = get(); rt && rt->rails_ && rt->engine_) {
    // The engine's lock keeps the RMA progress thread off the rails.
    std::lock_guard<std::recursive_mutex> g(rt->engine_->mutex());
    rt->rails_->abort(code, kAbortSendWait);
  }
  return MPI_Abort(MPI_COMM_WORLD, code);
}

void Runtime::window_opened() {
  if (++windows_ == 1 && rma_thread_allowed_)
    rma_thread_ = std::make_unique<rma::ProgressThread>(*engine_, settings_.rma.interval);
}

void Runtime::window_closed() {
  if (--windows_ == 0) rma_thread_.reset();
}

int Runtime::finalize() {
  if (!instance_) return MPI_ERR_OTHER;
  Runtime& rt = *instance_;
  rt.stop_profile();       // unless MMPI_Finalize took it to write the matrix
  rt.rma_thread_.reset();  // windows left unfreed: nothing serves them now
  // MPI-3.1 section 8.7.1: MPI_Finalize first deletes MPI_COMM_SELF's
  // attributes, as MPI_Comm_free would, in the reverse order of setting;
  // their callbacks may still call MPI (so everything still runs).
  if (auto self = rt.comms_.find(MPI_COMM_SELF)) {
    const std::vector<int> keys = std::move(self->attr_keyvals);
    for (auto k = keys.rbegin(); k != keys.rend(); ++k) {
      int key = *k;
      MPI_Comm_delete_attr(MPI_COMM_SELF, key);
    }
  }
  // Communicators free their native communicators while MPI still runs
  // (delete callbacks of their attributes may free other communicators).
  rt.comms_.clear();
  rt.engine_->close();
  rt.world_.reset();
  const bool fin = rt.we_initialized_mpi_;
  instance_.reset();
  return fin ? MPI_Finalize() : MPI_SUCCESS;
}

}  // namespace zipper::client
