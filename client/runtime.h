// libmmpi's process-wide state, one per process: MPI initialisation, the
// rails to the zipperd of each bridge node, the point-to-point engine and the communicator table
// with MMPI_COMM_WORLD and MMPI_COMM_SELF.
#pragma once

#include <mpi.h>

#include <chrono>
#include <memory>

#include "comm_table.h"
#include "config.h"
#include "engine.h"
#include "progress_list.h"
#include "rails.h"
#include "rma_progress.h"
#include "settings.h"
#include "sites.h"
#include "traffic_profile.h"

namespace zipper::client {

class Runtime {
 public:
  /// The initialised runtime, or nullptr.
  static Runtime* get() { return instance_.get(); }
  /// MMPI_Init_thread. On failure to reach zipperd, prints why and aborts the
  /// job (MPI_Abort), as MPI's default error handler would.
  static int init(int* argc, char*** argv, int required, int* provided);
  /// MMPI_Finalize: flushes the link, says BYE, finalizes MPI.
  static int finalize();
  /// MMPI_Abort, and every fatal error: tells the other cluster through
  /// each zipperd (an ABORT carrying `code`, which zipperd relays to the
  /// ranks there, who abort with the same code), waiting at most
  /// kAbortSendWait for it to leave, then aborts this cluster (MPI_Abort on
  /// MPI_COMM_WORLD with `code`). Without a runtime, only the latter.
  /// Returns only if MPI_Abort does.
  static int abort(int code);
  static constexpr std::chrono::milliseconds kAbortSendWait{300};

  /// World rank and size (virtual ranks over every site). Under a rank map
  /// (world_placement.h) this process's MMPI_COMM_WORLD rank is world()->rank().
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Where each world rank runs (sites.h), made once at MMPI_Init.
  const SiteMap& sites() const { return *sites_; }
  /// World rank of local rank 0, and the number of ranks in this site.
  int offset() const { return offset_; }
  int local_size() const { return local_size_; }
  /// The thread level the application was given (MMPI_Init_thread's
  /// `provided`): SERIALIZED at most, whatever Open MPI itself runs at.
  int thread_level() const { return thread_level_; }
  /// Bridge nodes (rails) reaching the other cluster; 0 standalone.
  int forwarders() const { return rails_ ? rails_->size() : 0; }

  Engine& engine() { return *engine_; }
  /// What advances on every progress call; layers above the engine add
  /// their rounds here (progress_list.h).
  ProgressList& progress() { return progress_; }
  /// The settings read at MMPI_Init (settings.h).
  const Settings& settings() const { return settings_; }
  CommTable& comms() { return comms_; }
  /// A window was created / is being freed (client/rma_window.h): the RMA
  /// progress thread (rma_progress.h) runs while at least one exists, when
  /// MMPI_RMA_PROGRESS allows it. Called without the engine's lock held.
  void window_opened();
  void window_closed();
  /// True while the progress thread serves windows (MPI_WIN_MODEL is then
  /// MPI_WIN_UNIFIED, docs/rma.md).
  bool rma_progress_on() const { return rma_thread_ != nullptr; }
  /// MMPI_RMA_PROGRESS=thread and Open MPI gave MPI_THREAD_MULTIPLE.
  bool rma_thread_allowed() const { return rma_thread_allowed_; }
  const std::shared_ptr<Comm>& world() const { return world_; }
  /// The MMPI_COMM_WORLD handle.
  MPI_Comm world_handle() const { return world_->native(); }
  /// The communication profile being counted (MMPI_PROFILE), or nullptr.
  const TrafficProfile* profile() const { return profile_.get(); }
  /// Stops counting and hands the profile over (nullptr when none ran).
  std::unique_ptr<TrafficProfile> stop_profile();

 private:
  Runtime() = default;
  void report(const std::string& msg) const;

  static std::unique_ptr<Runtime> instance_;

  bool we_initialized_mpi_ = false;
  int rank_ = 0, size_ = 1;
  int offset_ = 0, local_size_ = 1;
  Settings settings_;
  std::unique_ptr<const SiteMap> sites_;  // fixed address: engine and maps refer to it
  ProgressList progress_;                 // outlives the engine, whose round is in it
  std::unique_ptr<Rails> rails_;
  std::unique_ptr<Engine> engine_;
  CommTable comms_;
  std::shared_ptr<Comm> world_;
  int thread_level_ = MPI_THREAD_SINGLE;
  bool rma_thread_allowed_ = false;
  int windows_ = 0;
  std::unique_ptr<rma::ProgressThread> rma_thread_;
  std::unique_ptr<TrafficProfile> profile_;
};

}  // namespace zipper::client
