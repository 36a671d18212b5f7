// zipper-place: a rank map from a measured communication matrix
// (docs/placement.md). Reads the matrix and the sites' sizes from the
// profile, the links' LogGP costs from a zipper-tune report or the command
// line, and writes the placement of least modelled crossing time.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm_matrix.h"
#include "placement.h"
#include "rank_map_file.h"

namespace {

using namespace zipper::place;

// "A,B,LAT_US,GBIT" -> the link between the sites named A and B.
void apply_link(Machine& machine, const std::vector<std::string>& names, const std::string& spec) {
  std::vector<std::string> f;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= spec.size(); ++i)
    if (i == spec.size() || spec[i] == ',')
      f.push_back(spec.substr(start, i - start)), start = i + 1;
  if (f.size() != 4)
    throw std::runtime_error("--link " + spec + ": expected SITE,SITE,LAT_US,GBIT");
  auto site = [&](const std::string& n) {
    for (std::size_t s = 0; s < names.size(); ++s)
      if (names[s] == n) return static_cast<int>(s);
    throw std::runtime_error("--link " + spec + ": no site named \"" + n + "\"");
  };
  double lat = 0, gbit = 0;
  try {
    lat = std::stod(f[2]);
    gbit = std::stod(f[3]);
  } catch (const std::exception&) {
    throw std::runtime_error("--link " + spec + ": LAT_US and GBIT must be numbers");
  }
  if (!(gbit > 0)) throw std::runtime_error("--link " + spec + ": GBIT must be > 0");
  machine.set_link(site(f[0]), site(f[1]), {lat, 8.0 / (gbit * 1e3)});
}

void print_figures(const char* what, const Figures& f) {
  std::printf("%-24s crossing %llu bytes in %llu messages, modelled %.1f us\n", what,
              static_cast<unsigned long long>(f.crossing_bytes),
              static_cast<unsigned long long>(f.crossing_messages), f.time_us);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "zipper-place: place a job's ranks on sites from a measured communication matrix so that "
      "the least modelled time crosses the bridges (docs/placement.md)"};
  app.set_version_flag("--version", std::string("zipper-place ") + ZIPPER_VERSION);
  app.footer("Exit status: 0 map written; 1 a file could not be read, parsed or written; 2 usage.");
  std::string matrix_path, out_path, tune_report;
  double latency_us = 10, bandwidth_gbit = 10;
  std::vector<std::string> links;
  PlaceOptions opt;
  app.add_option("matrix", matrix_path, "communication matrix (zipper-comm-matrix JSON)")
      ->required()
      ->type_name("FILE");
  app.add_option("-o,--output", out_path, "rank map to write (zipper-rank-map JSON)")
      ->required()
      ->type_name("MAP");
  app.add_option("--tune-report", tune_report,
                 "zipper-tune JSON report: its forwarded link's L and G price every site pair")
      ->type_name("PATH");
  app.add_option("--latency-us", latency_us, "latency of a message between two sites, µs")
      ->type_name("US")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--bandwidth-gbit", bandwidth_gbit, "bandwidth between two sites, Gbit/s")
      ->type_name("GBIT")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--link", links,
                 "one site pair's link, overriding the others: SITE,SITE,LAT_US,GBIT (repeatable)")
      ->type_name("A,B,US,GBIT");
  app.add_option("--exhaustive-limit", opt.exhaustive_limit,
                 "search every assignment when there are at most this many (and <= 64 ranks)")
      ->type_name("N")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    const CommMatrix m = read_comm_matrix(matrix_path);
    LinkCost every{latency_us, 8.0 / (bandwidth_gbit * 1e3)};
    if (!tune_report.empty()) {
      std::ifstream in(tune_report);
      if (!in) throw std::runtime_error(tune_report + ": cannot open");
      try {
        const auto j = nlohmann::json::parse(in).at("links").at("forwarded");
        every = {j.at("L_us").get<double>(), j.at("G_us_per_byte").get<double>()};
      } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(tune_report + ": not a zipper-tune report (" + e.what() + ")");
      }
    }
    Machine machine(m.site_ranks, every);
    for (const std::string& l : links) apply_link(machine, m.site_names, l);
    const Placement p = place(machine, m.traffic, opt);
    print_figures("block order:", p.block);
    if (m.site_of != machine.block_order())
      print_figures("profiled layout:", evaluate(machine, m.traffic, m.site_of));
    print_figures(("placed (" + p.method + "):").c_str(), p.placed);
    std::ofstream out(out_path, std::ios::trunc);
    out << rank_map_json(m.site_names, p.site_of).dump(1) << "\n";
    if (!out.flush()) throw std::runtime_error(out_path + ": cannot write");
    std::printf("wrote %s\n", out_path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipper-place: %s\n", e.what());
    return 1;
  }
}
