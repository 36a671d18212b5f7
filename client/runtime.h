// libmmpi's process-wide state, one per process: MPI initialisation, the
// rails to the zipperd of each bridge node, the point-to-point engine and the communicator table
// with MMPI_COMM_WORLD and MMPI_COMM_SELF.
#pragma once

#include <mpi.h>

#include <memory>

#include "comm_table.h"
#include "config.h"
#include "engine.h"
#include "progress_list.h"
#include "rails.h"
#include "settings.h"

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

  /// World rank and size (virtual ranks over both clusters).
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// World rank of local rank 0, and the number of ranks in this cluster.
  int offset() const { return offset_; }
  int local_size() const { return local_size_; }
  /// Bridge nodes (rails) reaching the other cluster; 0 standalone.
  int forwarders() const { return rails_ ? rails_->size() : 0; }

  Engine& engine() { return *engine_; }
  /// What advances on every progress call; layers above the engine add
  /// their rounds here (progress_list.h).
  ProgressList& progress() { return progress_; }
  /// The settings read at MMPI_Init (settings.h).
  const Settings& settings() const { return settings_; }
  CommTable& comms() { return comms_; }
  const std::shared_ptr<Comm>& world() const { return world_; }
  /// The MMPI_COMM_WORLD handle.
  MPI_Comm world_handle() const { return world_->native(); }

 private:
  Runtime() = default;
  void report(const std::string& msg) const;

  static std::unique_ptr<Runtime> instance_;

  bool we_initialized_mpi_ = false;
  int rank_ = 0, size_ = 1;
  int offset_ = 0, local_size_ = 1;
  Settings settings_;
  ProgressList progress_;  // outlives the engine, whose round is in it
  std::unique_ptr<Rails> rails_;
  std::unique_ptr<Engine> engine_;
  CommTable comms_;
  std::shared_ptr<Comm> world_;
};

}  // namespace zipper::client
