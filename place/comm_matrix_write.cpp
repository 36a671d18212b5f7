// The communication matrix's JSON form written as it goes (comm_matrix.h),
// without building a JSON tree: libmmpi's MMPI_Finalize writes the profile
// with it, and nothing here needs more memory than the matrix itself.
#include <cinttypes>

#include "comm_matrix.h"

namespace zipper::place {

namespace {

// A JSON string literal of `s`.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace

bool write_comm_matrix(std::FILE* out, const CommMatrix& m) {
  std::fputs("{\"format\": \"zipper-comm-matrix\", \"version\": 1,\n \"sites\": [", out);
  for (std::size_t s = 0; s < m.site_names.size(); ++s)
    std::fprintf(out, "%s{\"name\": %s, \"ranks\": %d}", s ? ", " : "",
                 quoted(m.site_names[s]).c_str(), m.site_ranks[s]);
  std::fputs("],\n \"site_of\": [", out);
  for (std::size_t w = 0; w < m.site_of.size(); ++w)
    std::fprintf(out, "%s%d", w ? ", " : "", m.site_of[w]);
  std::fputs("],\n \"traffic\": [", out);
  for (std::size_t i = 0; i < m.traffic.size(); ++i) {
    const Traffic& t = m.traffic[i];
    std::fprintf(out, "%s\n  [%d, %d, %" PRIu64 ", %" PRIu64 "]", i ? "," : "", t.src, t.dst,
                 t.bytes, t.messages);
  }
  std::fputs(m.traffic.empty() ? "]}\n" : "\n ]}\n", out);
  return std::ferror(out) == 0;
}

}  // namespace zipper::place
