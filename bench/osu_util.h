/* osu_util.h — helpers shared by the OSU-style point-to-point (osu_p2p.h),
 * collective (osu_coll.h) and one-sided (osu_rma.h) benchmarks: option
 * parsing, page-aligned buffers and the verification byte pattern. Include
 * after mmpi.h / mmpi_native.h. */
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

/* One command-line option of a benchmark: `code` is what osu_next_option
 * returns for it; `letter` its short form ("-m"; 0: none), `name` its long
 * form ("--message-size"; NULL: none); `value` is 1 when it takes an
 * argument. Tables end with a zero code. */
struct osu_option {
  int code;
  char letter;
  const char* name;
  int value;
};

/* Where osu_next_option is in argv. */
struct osu_args {
  int argc;
  char** argv;
  int next;         /* the next word to read (argv[0] is the program) */
  const char* word; /* the option word just read, as given */
  char name[64];    /* the long name of a --name=value word */
};

static inline void osu_args_init(struct osu_args* a, int argc, char** argv) {
  memset(a, 0, sizeof *a);
  a->argc = argc;
  a->argv = argv;
  a->next = 1;
}

/* The program's name for messages: argv[0] without its directory, or `fallback`. */
static inline const char* osu_prog_name(int argc, char** argv, const char* fallback) {
  const char* slash;
  if (argc <= 0 || argv[0] == NULL) return fallback;
  slash = strrchr(argv[0], '/');
  return slash ? slash + 1 : argv[0];
}

/* The next option of `opts` in argv: returns its code with *val its argument
 * (NULL for a flag), 0 once argv is done, or -1 with *why set ("unknown
 * option", "missing value for"; a->word is the offending word). A short
 * option's argument may be attached (-m1:64) or the next word; a long one's
 * the next word or after '=' (--iterations=10). */
static inline int osu_next_option(struct osu_args* a, const struct osu_option* opts,
                                  const char** val, const char** why) {
  const char* w;
  const struct osu_option* o;
  *val = NULL;
  if (a->next >= a->argc) return 0;
  w = a->word = a->argv[a->next++];
  if (strncmp(w, "--", 2) == 0 && w[2] != '\0') {
    const char* eq = strchr(w, '=');
    if (eq != NULL) {
      size_t n = (size_t)(eq - w);
      if (n >= sizeof a->name) {
        *why = "unknown option";
        return -1;
      }
      memcpy(a->name, w, n);
      a->name[n] = '\0';
      *val = eq + 1;
      w = a->name;
    }
    for (o = opts; o->code != 0; o++)
      if (o->name != NULL && strcmp(w, o->name) == 0) break;
    if (o->code == 0 || (*val != NULL && !o->value)) {
      *why = "unknown option";
      return -1;
    }
  } else {
    for (o = opts; o->code != 0; o++)
      if (o->letter != 0 && w[0] == '-' && w[1] == o->letter) break;
    if (o->code == 0 || (w[2] != '\0' && !o->value)) {
      *why = "unknown option";
      return -1;
    }
    if (w[2] != '\0') *val = w + 2; /* attached: -m1:64 */
  }
  if (o->value && *val == NULL) {
    if (a->next >= a->argc) {
      *why = "missing value for";
      return -1;
    }
    *val = a->argv[a->next++];
  }
  return o->code;
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
