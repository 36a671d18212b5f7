// Step 1 of a zipper-tune run: measure the links (LogGP by PRTT, Hoefler et
// al.), the forwarded streams' contention, the load figures and the host,
// on every rank of the job at once (collective: every rank calls it).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "loggp.h"
#include "models.h"
#include "options.h"

namespace zipper::tune {

struct Measurement {
  Network net;                                     // the model's inputs
  std::vector<Threshold> th_low, th_high, th_fwd;  // protocol steps seen per link class
  int smax = 0;                                    // sender pairs measured: min(x, y)
  double native_barrier_us[2] = {0, 0};            // low, high cluster
  long cores = 0;                                  // of this host
  bool one_host = false;                           // every rank shares one kernel
};

/// Measures layout x+y (x ranks in the low cluster) through `forwarders`
/// zipperds. Collective over MMPI_COMM_WORLD.
Measurement measure_network(const Options& o, int rank, int x, int y, int forwarders);
/// The report's measurement part (layout, links, contention, host, the
/// configured thresholds); `seconds` the measurement took.
nlohmann::json measurement_report(const Measurement& m, const Options& o, int x, int y,
                                  double seconds);
/// Prints the measurement (rank 0's stdout).
void print_measurement(const Measurement& m, int x, int y, double seconds);

}  // namespace zipper::tune
