// zipper-loadgen's command line.
#pragma once

#include <string>
#include <vector>

#include "job_spec.h"
#include "zipperd_spec.h"

namespace zipper::loadgen {

struct Options {
  std::vector<ZipperdSpec> zipperds;  // k bridge nodes; every rank connects to each
  std::vector<JobSpec> jobs;          // steady groups
  ChurnSpec churn;                    // churn.jobs == 0: none
  int procs = 1;                      // worker processes
  int timeout_s = 120;                // the whole run
  int connect_window = 256;           // connections between connect and HELLO_ACK, all workers
  std::string format = "json";        // json | csv
  bool check_counters = true;         // with metrics=: zipperd's counters against ours
};

/// Parses argv. Prints help and exits 0 on --help; prints the fault and
/// exits 2 on a usage error.
Options parse_options(int argc, char** argv);

}  // namespace zipper::loadgen
