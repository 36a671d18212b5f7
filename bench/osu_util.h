/* osu_util.h — helpers shared by the OSU-style point-to-point (osu_p2p.h) and
 * collective (osu_coll.h) benchmarks: option parsing, page-aligned buffers
 * and the verification byte pattern. Include after mmpi.h / mmpi_native.h. */
#ifndef ZIPPER_BENCH_OSU_UTIL_H
#define ZIPPER_BENCH_OSU_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses a decimal integer in [lo, hi]. Returns 0, or -1 on bad input. */
static inline int osu_parse_long(const char* s, long lo, long hi, long* out) {
  char* end = NULL;
  long v;
  if (s == NULL || *s == '\0') return -1;
  v = strtol(s, &end, 10);
  if (*end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* OSU's -m syntax: "MAX", "MIN:MAX" or "MIN:" (bytes, each <= limit); a part
 * left out keeps *min / *max. Returns 0, or -1 on bad input (nothing set). */
static inline int osu_parse_sizes(const char* arg, long limit, long* min, long* max) {
  const char* colon = strchr(arg, ':');
  long lo = *min, hi = *max;
  if (colon == NULL) {
    if (osu_parse_long(arg, 0, limit, &hi)) return -1;
  } else {
    char minbuf[32];
    size_t n = (size_t)(colon - arg);
    if (n >= sizeof minbuf) return -1;
    memcpy(minbuf, arg, n);
    minbuf[n] = '\0';
    if (n > 0 && osu_parse_long(minbuf, 0, limit, &lo)) return -1;
    if (colon[1] != '\0' && osu_parse_long(colon + 1, 0, limit, &hi)) return -1;
  }
  if (lo > hi) return -1;
  *min = lo;
  *max = hi;
  return 0;
}

/* Zeroed, page-aligned buffer of `bytes` (at least 1); aborts the job with a
 * message naming `prog` when memory runs out. */
static inline void* osu_alloc(size_t bytes, const char* prog) {
  void* p = NULL;
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  if (bytes == 0) bytes = 1;
  if (posix_memalign(&p, (size_t)page, bytes) != 0) {
    fprintf(stderr, "%s: cannot allocate %zu bytes\n", prog, bytes);
    fflush(stderr);
    MMPI_Abort(MMPI_COMM_WORLD, 2);
    exit(2);
  }
  memset(p, 0, bytes);
  return p;
}

/* FNV-1a over four parameters: the seed of one message's pattern. */
static inline uint32_t osu_seed4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  uint32_t h = 2166136261u;
  const uint32_t v[4] = {a, b, c, d};
  int i, k;
  for (i = 0; i < 4; i++)
    for (k = 0; k < 4; k++) {
      h ^= (v[i] >> (8 * k)) & 0xffu;
      h *= 16777619u;
    }
  return h;
}

/* Byte k of the pattern for `seed`. */
static inline unsigned char osu_byte(size_t k, uint32_t seed) {
  uint32_t x = (uint32_t)k * 2654435761u + seed;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  return (unsigned char)x;
}

static inline void osu_fill(unsigned char* buf, long len, uint32_t seed) {
  long k;
  for (k = 0; k < len; k++) buf[k] = osu_byte((size_t)k, seed);
}

/* The complement of the expected data, so that a byte never written is
 * always caught. */
static inline void osu_poison(unsigned char* buf, long len, uint32_t seed) {
  long k;
  for (k = 0; k < len; k++) buf[k] = (unsigned char)~osu_byte((size_t)k, seed);
}

#endif
