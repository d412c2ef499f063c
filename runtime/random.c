/* kiln random numbers, linked into every compiled library beside support.c.
 *
 * NumPy's two bit generators, written here from their published algorithms:
 * PCG64 (a 128-bit LCG with the XSL-RR output, the bit generator of
 * np.random.default_rng, seeded through SeedSequence's hash) and MT19937
 * (the Mersenne Twister of the legacy global RandomState, with its polar
 * Gaussian cache). The distributions are NumPy's own C code: the static
 * library numpy/random/lib/libnpyrandom.a that NumPy ships for extensions,
 * called with a bit generator struct laid out as NumPy's bitgen_t, so every
 * distribution draws exactly NumPy's numbers from the same state.
 *
 * Protocol (the code `kiln-lower-random` emits for one `kiln.random` op):
 * kiln_rng_begin(kind); kiln_rng_set(k, word) for each state word; one
 * kiln_rng_<method>(...) call per drawn element (or one seeding call);
 * kiln_rng_get(k) for each state word of the advanced state. The state
 * lives in a per-thread context only while one op runs.
 *
 * State words (int64 each): PCG64 [state_hi, state_lo, inc_hi, inc_lo,
 * has_uint32, uinteger]; MT19937 [key[0..623], pos, has_gauss, gauss bits].
 */
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* NumPy's bitgen_t (numpy/random/bitgen.h): the layout libnpyrandom reads. */
typedef struct {
  void *state;
  uint64_t (*next_uint64)(void *st);
  uint32_t (*next_uint32)(void *st);
  double (*next_double)(void *st);
  uint64_t (*next_raw)(void *st);
} kiln_bitgen;

/* NumPy's binomial_t (numpy/random/distributions.h): a cache of the
 * setup for one (n, p), which does not change the numbers drawn. */
typedef struct {
  int has_binomial;
  double psave;
  int64_t nsave;
  double r, q, fm;
  int64_t m;
  double p1, xm, xl, xr, c, laml, lamr, p2, p3, p4;
} kiln_binomial;

/* The functions of libnpyrandom kiln calls (declared in NumPy's
 * numpy/random/distributions.h, which needs Python.h, hence repeated). */
double random_standard_uniform(kiln_bitgen *);
float random_standard_uniform_f(kiln_bitgen *);
double random_standard_normal(kiln_bitgen *);
float random_standard_normal_f(kiln_bitgen *);
double random_standard_exponential(kiln_bitgen *);
float random_standard_exponential_f(kiln_bitgen *);
void random_standard_exponential_inv_fill(kiln_bitgen *, intptr_t, double *);
void random_standard_exponential_inv_fill_f(kiln_bitgen *, intptr_t, float *);
double random_normal(kiln_bitgen *, double, double);
double random_exponential(kiln_bitgen *, double);
double random_uniform(kiln_bitgen *, double, double);
double random_standard_gamma(kiln_bitgen *, double);
double random_gamma(kiln_bitgen *, double, double);
double random_beta(kiln_bitgen *, double, double);
double random_chisquare(kiln_bitgen *, double);
double random_f(kiln_bitgen *, double, double);
double random_standard_cauchy(kiln_bitgen *);
double random_pareto(kiln_bitgen *, double);
double random_weibull(kiln_bitgen *, double);
double random_power(kiln_bitgen *, double);
double random_laplace(kiln_bitgen *, double, double);
double random_gumbel(kiln_bitgen *, double, double);
double random_logistic(kiln_bitgen *, double, double);
double random_lognormal(kiln_bitgen *, double, double);
double random_rayleigh(kiln_bitgen *, double);
double random_standard_t(kiln_bitgen *, double);
double random_noncentral_chisquare(kiln_bitgen *, double, double);
double random_noncentral_f(kiln_bitgen *, double, double, double);
double random_wald(kiln_bitgen *, double, double);
double random_vonmises(kiln_bitgen *, double, double);
double random_triangular(kiln_bitgen *, double, double, double);
int64_t random_poisson(kiln_bitgen *, double);
int64_t random_negative_binomial(kiln_bitgen *, double, double);
int64_t random_binomial(kiln_bitgen *, double, int64_t, kiln_binomial *);
int64_t random_logseries(kiln_bitgen *, double);
int64_t random_geometric(kiln_bitgen *, double);
int64_t random_zipf(kiln_bitgen *, double);
int64_t random_hypergeometric(kiln_bitgen *, int64_t, int64_t, int64_t);
uint64_t random_interval(kiln_bitgen *, uint64_t);
uint64_t random_bounded_uint64(kiln_bitgen *, uint64_t, uint64_t, uint64_t, bool);
uint32_t random_buffered_bounded_uint32(kiln_bitgen *, uint32_t, uint32_t, uint32_t, bool, int *, uint32_t *);
uint16_t random_buffered_bounded_uint16(kiln_bitgen *, uint16_t, uint16_t, uint16_t, bool, int *, uint32_t *);
uint8_t random_buffered_bounded_uint8(kiln_bitgen *, uint8_t, uint8_t, uint8_t, bool, int *, uint32_t *);
bool random_buffered_bounded_bool(kiln_bitgen *, bool, bool, bool, bool, int *, uint32_t *);

/* ------------------------------------------------------------------ PCG64 */

typedef unsigned __int128 u128;

typedef struct {
  u128 state, inc;
  int has_uint32;
  uint32_t uinteger;
} pcg64;

/* The LCG multiplier of PCG's 128-bit generators. */
#define PCG64_MULTIPLIER (((u128)2549297995355413924ULL << 64) | (u128)4865540595714422341ULL)

static inline void pcg64_step(pcg64 *g) { g->state = g->state * PCG64_MULTIPLIER + g->inc; }

/* XSL-RR: xor the halves, rotate right by the top six bits. */
static inline uint64_t pcg64_output(u128 state) {
  uint64_t folded = (uint64_t)(state >> 64) ^ (uint64_t)state;
  unsigned rot = (unsigned)(state >> 122);
  return (folded >> rot) | (folded << ((-rot) & 63));
}

static uint64_t pcg64_next64(void *st) {
  pcg64 *g = st;
  pcg64_step(g);
  return pcg64_output(g->state);
}

/* 32-bit draws take the low half of a 64-bit draw and keep the high half for the next one. */
static uint32_t pcg64_next32(void *st) {
  pcg64 *g = st;
  if (g->has_uint32) {
    g->has_uint32 = 0;
    return g->uinteger;
  }
  uint64_t next = pcg64_next64(g);
  g->has_uint32 = 1;
  g->uinteger = (uint32_t)(next >> 32);
  return (uint32_t)next;
}

static double pcg64_next_double(void *st) { return (double)(pcg64_next64(st) >> 11) * (1.0 / 9007199254740992.0); }

static void pcg64_seed(pcg64 *g, u128 initstate, u128 initseq) {
  g->state = 0;
  g->inc = (initseq << 1) | 1;
  pcg64_step(g);
  g->state += initstate;
  pcg64_step(g);
  g->has_uint32 = 0;
  g->uinteger = 0;
}

/* SeedSequence (pool of four 32-bit words, no spawn key): hash the entropy
 * words into the pool, then draw `count` 32-bit words from it. */
#define SS_POOL 4
#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_L 0xca01f9ddu
#define SS_MIX_R 0x4973f715u

static uint32_t ss_hashmix(uint32_t value, uint32_t *hash_const) {
  value ^= *hash_const;
  *hash_const *= SS_MULT_A;
  value *= *hash_const;
  return value ^ (value >> 16);
}

static uint32_t ss_mix(uint32_t x, uint32_t y) {
  uint32_t result = SS_MIX_L * x - SS_MIX_R * y;
  return result ^ (result >> 16);
}

static void seed_sequence(const uint32_t *entropy, int n_entropy, uint32_t *out, int count) {
  uint32_t pool[SS_POOL];
  uint32_t hash_const = SS_INIT_A;
  for (int i = 0; i < SS_POOL; i++)
    pool[i] = ss_hashmix(i < n_entropy ? entropy[i] : 0, &hash_const);
  for (int src = 0; src < SS_POOL; src++)
    for (int dst = 0; dst < SS_POOL; dst++)
      if (src != dst)
        pool[dst] = ss_mix(pool[dst], ss_hashmix(pool[src], &hash_const));
  for (int src = SS_POOL; src < n_entropy; src++)
    for (int dst = 0; dst < SS_POOL; dst++)
      pool[dst] = ss_mix(pool[dst], ss_hashmix(entropy[src], &hash_const));
  uint32_t out_const = SS_INIT_B;
  for (int i = 0; i < count; i++) {
    uint32_t value = pool[i % SS_POOL] ^ out_const;
    out_const *= SS_MULT_B;
    value *= out_const;
    out[i] = value ^ (value >> 16);
  }
}

/* PCG64 from SeedSequence(entropy words): four 64-bit words (low 32 bits first). */
static void pcg64_from_entropy(pcg64 *g, const uint32_t *entropy, int n_entropy) {
  uint32_t w[8];
  seed_sequence(entropy, n_entropy, w, 8);
  uint64_t v[4];
  for (int i = 0; i < 4; i++)
    v[i] = (uint64_t)w[2 * i] | ((uint64_t)w[2 * i + 1] << 32);
  pcg64_seed(g, ((u128)v[0] << 64) | v[1], ((u128)v[2] << 64) | v[3]);
}

/* ---------------------------------------------------------------- MT19937 */

#define MT_N 624
#define MT_M 397

typedef struct {
  uint32_t key[MT_N];
  int pos;
  int has_gauss;
  double gauss;
} mt19937;

static void mt19937_generate(mt19937 *g) {
  const uint32_t upper = 0x80000000u, lower = 0x7fffffffu, matrix = 0x9908b0dfu;
  for (int i = 0; i < MT_N; i++) {
    uint32_t y = (g->key[i] & upper) | (g->key[(i + 1) % MT_N] & lower);
    g->key[i] = g->key[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((uint32_t)(-(int32_t)(y & 1)) & matrix);
  }
  g->pos = 0;
}

static uint32_t mt19937_next32(void *st) {
  mt19937 *g = st;
  if (g->pos >= MT_N)
    mt19937_generate(g);
  uint32_t y = g->key[g->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  return y ^ (y >> 18);
}

static uint64_t mt19937_next64(void *st) {
  uint64_t high = mt19937_next32(st);
  return (high << 32) | mt19937_next32(st);
}

/* 53 bits from two draws: 27 high bits of the first, 26 of the second. */
static double mt19937_next_double(void *st) {
  int32_t a = (int32_t)(mt19937_next32(st) >> 5), b = (int32_t)(mt19937_next32(st) >> 6);
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

/* The legacy `seed(s)`: Knuth's linear initialization of the key from a 32-bit seed. */
static void mt19937_seed(mt19937 *g, uint32_t seed) {
  g->key[0] = seed;
  for (int i = 1; i < MT_N; i++)
    g->key[i] = 1812433253u * (g->key[i - 1] ^ (g->key[i - 1] >> 30)) + (uint32_t)i;
  g->pos = MT_N;
  g->has_gauss = 0;
  g->gauss = 0.0;
}

/* --------------------------------------------------------- the context */

enum { KIND_PCG64 = 0, KIND_MT19937 = 1 };

static __thread struct {
  int kind;
  pcg64 pcg;
  mt19937 mt;
  kiln_bitgen bitgen;
  int64_t draws; /* calls of the op so far (shuffle_index) */
  int bcnt; /* buffered 8/16-bit and bool draws of one op (NumPy's fill buffer) */
  uint32_t buf;
  kiln_binomial binomial;
  /* multinomial: the sample's trials left, probability left, and whether it stopped drawing */
  int64_t trials_left;
  double p_left;
  bool stopped;
  int64_t *picks; /* choice_noreplace: the whole draw, made at the op's first element */
} rng;

void kiln_rng_begin(int64_t kind) {
  rng.kind = (int)kind;
  rng.draws = 0;
  rng.bcnt = 0;
  rng.buf = 0;
  memset(&rng.binomial, 0, sizeof rng.binomial);
  free(rng.picks);
  rng.picks = NULL;
  if (kind == KIND_PCG64) {
    rng.bitgen = (kiln_bitgen){&rng.pcg, pcg64_next64, pcg64_next32, pcg64_next_double, pcg64_next64};
  } else {
    rng.bitgen = (kiln_bitgen){&rng.mt, mt19937_next64, mt19937_next32, mt19937_next_double, mt19937_next64};
  }
}

void kiln_rng_set(int64_t k, int64_t word) {
  uint64_t w = (uint64_t)word;
  if (rng.kind == KIND_PCG64) {
    switch (k) {
    case 0: rng.pcg.state = (rng.pcg.state & (u128)UINT64_MAX) | ((u128)w << 64); break;
    case 1: rng.pcg.state = (rng.pcg.state & ~(u128)UINT64_MAX) | w; break;
    case 2: rng.pcg.inc = (rng.pcg.inc & (u128)UINT64_MAX) | ((u128)w << 64); break;
    case 3: rng.pcg.inc = (rng.pcg.inc & ~(u128)UINT64_MAX) | w; break;
    case 4: rng.pcg.has_uint32 = (int)w; break;
    default: rng.pcg.uinteger = (uint32_t)w; break;
    }
    return;
  }
  if (k < MT_N)
    rng.mt.key[k] = (uint32_t)w;
  else if (k == MT_N)
    rng.mt.pos = (int)w;
  else if (k == MT_N + 1)
    rng.mt.has_gauss = (int)w;
  else
    memcpy(&rng.mt.gauss, &w, sizeof w);
}

int64_t kiln_rng_get(int64_t k) {
  if (rng.kind == KIND_PCG64) {
    switch (k) {
    case 0: return (int64_t)(uint64_t)(rng.pcg.state >> 64);
    case 1: return (int64_t)(uint64_t)rng.pcg.state;
    case 2: return (int64_t)(uint64_t)(rng.pcg.inc >> 64);
    case 3: return (int64_t)(uint64_t)rng.pcg.inc;
    case 4: return rng.pcg.has_uint32;
    default: return rng.pcg.uinteger;
    }
  }
  if (k < MT_N)
    return rng.mt.key[k];
  if (k == MT_N)
    return rng.mt.pos;
  if (k == MT_N + 1)
    return rng.mt.has_gauss;
  int64_t bits;
  memcpy(&bits, &rng.mt.gauss, sizeof bits);
  return bits;
}

/* ------------------------------------------------------------ seeding
 * Seeding methods replace the whole state; their int64 arguments follow
 * the int-method signature (a, b, p, q) and the result is unused. */

/* default_rng(seed) for an int seed >= 0: SeedSequence(seed) -> PCG64. */
int64_t kiln_rng_seed_pcg64(int64_t seed, int64_t unused, double p, double q) {
  uint64_t s = (uint64_t)seed;
  uint32_t words[2] = {(uint32_t)s, (uint32_t)(s >> 32)};
  pcg64_from_entropy(&rng.pcg, words, words[1] ? 2 : 1);
  return 0;
}

/* default_rng(): SeedSequence of 128 bits of fresh OS entropy, like NumPy's. */
int64_t kiln_rng_entropy_pcg64(int64_t a, int64_t b, double p, double q) {
  uint32_t words[4] = {0, 0, 0, 0};
  size_t got = 0;
  while (got < sizeof words) {
    ssize_t n = getrandom((char *)words + got, sizeof words - got, 0);
    if (n > 0)
      got += (size_t)n;
  }
  pcg64_from_entropy(&rng.pcg, words, 4);
  return 0;
}

/* np.random.seed(s) for an int 0 <= s < 2**32. */
int64_t kiln_rng_seed_mt19937(int64_t seed, int64_t unused, double p, double q) {
  mt19937_seed(&rng.mt, (uint32_t)seed);
  return 0;
}

/* ------------------------------------------------ float-valued methods
 * One element each; (a, b, c) are the distribution's parameters in
 * NumPy's order (`uniform` takes low and high - low). float32 methods
 * return the float widened (exact). */

#define BG (&rng.bitgen)

double kiln_rng_random(double a, double b, double c) { return random_standard_uniform(BG); }
double kiln_rng_random_f32(double a, double b, double c) { return random_standard_uniform_f(BG); }
double kiln_rng_standard_normal(double a, double b, double c) { return random_standard_normal(BG); }
double kiln_rng_standard_normal_f32(double a, double b, double c) { return random_standard_normal_f(BG); }
double kiln_rng_normal(double loc, double scale, double c) { return random_normal(BG, loc, scale); }
double kiln_rng_standard_exponential(double a, double b, double c) { return random_standard_exponential(BG); }
double kiln_rng_standard_exponential_f32(double a, double b, double c) { return random_standard_exponential_f(BG); }
double kiln_rng_standard_exponential_inv(double a, double b, double c) {
  double x;
  random_standard_exponential_inv_fill(BG, 1, &x);
  return x;
}
double kiln_rng_standard_exponential_inv_f32(double a, double b, double c) {
  float x;
  random_standard_exponential_inv_fill_f(BG, 1, &x);
  return x;
}
double kiln_rng_exponential(double scale, double b, double c) { return random_exponential(BG, scale); }
double kiln_rng_uniform(double low, double range, double c) { return random_uniform(BG, low, range); }
double kiln_rng_standard_gamma(double shape, double b, double c) { return random_standard_gamma(BG, shape); }
double kiln_rng_gamma(double shape, double scale, double c) { return random_gamma(BG, shape, scale); }
double kiln_rng_beta(double a, double b, double c) { return random_beta(BG, a, b); }
double kiln_rng_chisquare(double df, double b, double c) { return random_chisquare(BG, df); }
double kiln_rng_f(double dfnum, double dfden, double c) { return random_f(BG, dfnum, dfden); }
double kiln_rng_standard_cauchy(double a, double b, double c) { return random_standard_cauchy(BG); }
double kiln_rng_pareto(double a, double b, double c) { return random_pareto(BG, a); }
double kiln_rng_weibull(double a, double b, double c) { return random_weibull(BG, a); }
double kiln_rng_power(double a, double b, double c) { return random_power(BG, a); }
double kiln_rng_laplace(double loc, double scale, double c) { return random_laplace(BG, loc, scale); }
double kiln_rng_gumbel(double loc, double scale, double c) { return random_gumbel(BG, loc, scale); }
double kiln_rng_logistic(double loc, double scale, double c) { return random_logistic(BG, loc, scale); }
double kiln_rng_lognormal(double mean, double sigma, double c) { return random_lognormal(BG, mean, sigma); }
double kiln_rng_rayleigh(double scale, double b, double c) { return random_rayleigh(BG, scale); }
double kiln_rng_standard_t(double df, double b, double c) { return random_standard_t(BG, df); }
double kiln_rng_noncentral_chisquare(double df, double nonc, double c) {
  return random_noncentral_chisquare(BG, df, nonc);
}
double kiln_rng_noncentral_f(double dfnum, double dfden, double nonc) {
  return random_noncentral_f(BG, dfnum, dfden, nonc);
}
double kiln_rng_wald(double mean, double scale, double c) { return random_wald(BG, mean, scale); }
double kiln_rng_vonmises(double mu, double kappa, double c) { return random_vonmises(BG, mu, kappa); }
double kiln_rng_triangular(double left, double mode, double right) {
  return random_triangular(BG, left, mode, right);
}

/* The legacy RandomState's own methods (MT19937): the polar Gaussian with
 * its cached second value, and the exponential by inversion. */
static double legacy_gauss(void) {
  if (rng.mt.has_gauss) {
    double cached = rng.mt.gauss;
    rng.mt.has_gauss = 0;
    rng.mt.gauss = 0.0;
    return cached;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * mt19937_next_double(&rng.mt) - 1.0;
    x2 = 2.0 * mt19937_next_double(&rng.mt) - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  double f = sqrt(-2.0 * log(r2) / r2);
  rng.mt.gauss = f * x1;
  rng.mt.has_gauss = 1;
  return f * x2;
}

double kiln_rng_legacy_gauss(double a, double b, double c) { return legacy_gauss(); }
double kiln_rng_legacy_normal(double loc, double scale, double c) { return loc + scale * legacy_gauss(); }
double kiln_rng_legacy_standard_exponential(double a, double b, double c) {
  return -log(1.0 - mt19937_next_double(&rng.mt));
}
double kiln_rng_legacy_exponential(double scale, double b, double c) {
  return scale * -log(1.0 - mt19937_next_double(&rng.mt));
}

/* RandomState's own versions of the distributions that Generator changed
 * (NumPy keeps the legacy stream): built on the polar Gaussian and the
 * exponential by inversion instead of the ziggurats. */
static double legacy_double(void) { return mt19937_next_double(&rng.mt); }
static double legacy_exponential(void) { return -log(1.0 - legacy_double()); }

static double legacy_standard_gamma(double shape) {
  if (shape == 1.0)
    return legacy_exponential();
  if (shape == 0.0)
    return 0.0;
  if (shape < 1.0) {
    for (;;) {
      double u = legacy_double(), v = legacy_exponential();
      if (u <= 1.0 - shape) {
        double x = pow(u, 1.0 / shape);
        if (x <= v)
          return x;
      } else {
        double y = -log((1 - u) / shape);
        double x = pow(1.0 - shape + shape * y, 1.0 / shape);
        if (x <= v + y)
          return x;
      }
    }
  }
  double b = shape - 1.0 / 3.0, c = 1.0 / sqrt(9 * b);
  for (;;) {
    double x, v;
    do {
      x = legacy_gauss();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = legacy_double();
    if (u < 1.0 - 0.0331 * (x * x) * (x * x))
      return b * v;
    if (log(u) < 0.5 * x * x + b * (1.0 - v + log(v)))
      return b * v;
  }
}

static double legacy_chisquare(double df) { return 2.0 * legacy_standard_gamma(df / 2.0); }

double kiln_rng_legacy_standard_gamma(double shape, double b, double c) { return legacy_standard_gamma(shape); }
double kiln_rng_legacy_gamma(double shape, double scale, double c) { return scale * legacy_standard_gamma(shape); }
double kiln_rng_legacy_beta(double a, double b, double c) {
  if (a <= 1.0 && b <= 1.0)
    return random_beta(BG, a, b); /* Johnk's algorithm on uniforms: the same in both */
  double ga = legacy_standard_gamma(a), gb = legacy_standard_gamma(b);
  return ga / (ga + gb);
}
double kiln_rng_legacy_chisquare(double df, double b, double c) { return legacy_chisquare(df); }
double kiln_rng_legacy_f(double dfnum, double dfden, double c) {
  return (legacy_chisquare(dfnum) * dfden) / (legacy_chisquare(dfden) * dfnum);
}
double kiln_rng_legacy_standard_cauchy(double a, double b, double c) {
  double num = legacy_gauss();
  return num / legacy_gauss();
}
double kiln_rng_legacy_pareto(double a, double b, double c) { return exp(legacy_exponential() / a) - 1; }
double kiln_rng_legacy_weibull(double a, double b, double c) {
  if (a == 0.0)
    return 0.0;
  return pow(legacy_exponential(), 1.0 / a);
}
double kiln_rng_legacy_power(double a, double b, double c) { return pow(1 - exp(-legacy_exponential()), 1.0 / a); }
double kiln_rng_legacy_lognormal(double mean, double sigma, double c) { return exp(mean + sigma * legacy_gauss()); }
double kiln_rng_legacy_rayleigh(double mode, double b, double c) { return mode * sqrt(-2.0 * log1p(-legacy_double())); }
double kiln_rng_legacy_standard_t(double df, double b, double c) {
  double num = legacy_gauss();
  double denom = legacy_standard_gamma(df / 2);
  return sqrt(df / 2) * num / sqrt(denom);
}
static double legacy_noncentral_chisquare(double df, double nonc) {
  if (nonc == 0)
    return legacy_chisquare(df);
  if (1 < df) {
    double chi2 = legacy_chisquare(df - 1);
    double n = legacy_gauss() + sqrt(nonc);
    return chi2 + n * n;
  }
  int64_t i = random_poisson(BG, nonc / 2.0);
  double out = legacy_chisquare(df + 2 * i);
  return isnan(nonc) ? NAN : out;
}
double kiln_rng_legacy_noncentral_chisquare(double df, double nonc, double c) {
  return legacy_noncentral_chisquare(df, nonc);
}
double kiln_rng_legacy_noncentral_f(double dfnum, double dfden, double nonc) {
  double t = legacy_noncentral_chisquare(dfnum, nonc) * dfden;
  return t / (legacy_chisquare(dfden) * dfnum);
}
/* RandomState.vonmises: Best and Fisher's algorithm at every kappa (Generator
 * switches to a wrapped normal above 1e6). */
double kiln_rng_legacy_vonmises(double mu, double kappa, double c) {
  if (kappa <= 1e6)
    return random_vonmises(BG, mu, kappa);
  double r = 1 + sqrt(1 + 4 * kappa * kappa);
  double rho = (r - sqrt(2 * r)) / (2 * kappa);
  double s = (1 + rho * rho) / (2 * rho);
  double w;
  for (;;) {
    double u = legacy_double();
    double z = cos(M_PI * u);
    w = (1 + s * z) / (s + z);
    double y = kappa * (s - w);
    double v = legacy_double();
    if ((y * (2 - y) - v >= 0) || (log(y / v) + 1 - y >= 0))
      break;
  }
  double u = legacy_double();
  double result = acos(w);
  if (u < 0.5)
    result = -result;
  result += mu;
  int neg = result < 0;
  double mod = fmod(fabs(result) + M_PI, 2 * M_PI) - M_PI;
  return neg ? -mod : mod;
}

double kiln_rng_legacy_wald(double mean, double scale, double c) {
  double mu_2l = mean / (2 * scale);
  double y = legacy_gauss();
  y = mean * y * y;
  double x = mean + mu_2l * (y - sqrt(4 * scale * y + y * y));
  double u = legacy_double();
  return u <= mean / (mean + x) ? x : mean * mean / x;
}

/* -------------------------------------------------- int-valued methods
 * (a, b) integer parameters, (p, q) float ones. Bounded integers take the
 * offset `a` and the inclusive range `b` (high - low, endpoint included)
 * as NumPy passes them to its fill functions; the 8/16-bit and bool ones
 * share one buffered 32-bit draw per op, as NumPy's fill does. */

int64_t kiln_rng_integers64(int64_t off, int64_t range, double p, double q) {
  return (int64_t)random_bounded_uint64(BG, (uint64_t)off, (uint64_t)range, 0, false);
}
int64_t kiln_rng_integers32(int64_t off, int64_t range, double p, double q) {
  return random_buffered_bounded_uint32(BG, (uint32_t)off, (uint32_t)range, 0, false, &rng.bcnt, &rng.buf);
}
int64_t kiln_rng_integers16(int64_t off, int64_t range, double p, double q) {
  return random_buffered_bounded_uint16(BG, (uint16_t)off, (uint16_t)range, 0, false, &rng.bcnt, &rng.buf);
}
int64_t kiln_rng_integers8(int64_t off, int64_t range, double p, double q) {
  return random_buffered_bounded_uint8(BG, (uint8_t)off, (uint8_t)range, 0, false, &rng.bcnt, &rng.buf);
}
int64_t kiln_rng_integers_bool(int64_t off, int64_t range, double p, double q) {
  return random_buffered_bounded_bool(BG, off != 0, range != 0, 0, false, &rng.bcnt, &rng.buf);
}

/* The smallest all-ones mask covering `range` (the masked rejection of RandomState.randint). */
static uint64_t covering_mask(uint64_t range) {
  uint64_t mask = range;
  for (int shift = 1; shift < 64; shift <<= 1)
    mask |= mask >> shift;
  return mask;
}

int64_t kiln_rng_legacy_randint64(int64_t off, int64_t range, double p, double q) {
  return (int64_t)random_bounded_uint64(BG, (uint64_t)off, (uint64_t)range, covering_mask((uint64_t)range), true);
}
int64_t kiln_rng_legacy_randint32(int64_t off, int64_t range, double p, double q) {
  return random_buffered_bounded_uint32(BG, (uint32_t)off, (uint32_t)range, (uint32_t)covering_mask((uint64_t)range),
                                        true, &rng.bcnt, &rng.buf);
}

int64_t kiln_rng_poisson(int64_t a, int64_t b, double lam, double q) { return random_poisson(BG, lam); }
int64_t kiln_rng_binomial(int64_t n, int64_t b, double p, double q) {
  return random_binomial(BG, p, n, &rng.binomial);
}
int64_t kiln_rng_negative_binomial(int64_t a, int64_t b, double n, double p) {
  return random_negative_binomial(BG, n, p);
}
int64_t kiln_rng_geometric(int64_t a, int64_t b, double p, double q) { return random_geometric(BG, p); }
int64_t kiln_rng_logseries(int64_t a, int64_t b, double p, double q) { return random_logseries(BG, p); }
int64_t kiln_rng_zipf(int64_t a, int64_t b, double alpha, double q) { return random_zipf(BG, alpha); }
int64_t kiln_rng_hypergeometric(int64_t good, int64_t bad, double sample, double q) {
  return random_hypergeometric(BG, good, bad, (int64_t)sample);
}
/* Fisher-Yates from the end (permutation / shuffle; Generator and
 * RandomState draw alike, by masked rejection): draw i of the op is a
 * uniform index in [0, last - i]. */
int64_t kiln_rng_shuffle_index(int64_t last, int64_t b, double p, double q) {
  return (int64_t)random_interval(BG, (uint64_t)(last - rng.draws++));
}

int64_t kiln_rng_legacy_negative_binomial(int64_t a, int64_t b, double n, double p) {
  return random_poisson(BG, (1 - p) / p * legacy_standard_gamma(n));
}
int64_t kiln_rng_legacy_geometric(int64_t a, int64_t b, double p, double q) {
  if (p >= 0.333333333333333333333333) {
    int64_t x = 1;
    double sum = p, prod = p, u = legacy_double();
    while (u > sum) {
      prod *= 1.0 - p;
      sum += prod;
      x++;
    }
    return x;
  }
  return (int64_t)ceil(log(1.0 - legacy_double()) / log(1.0 - p));
}
/* RandomState.hypergeometric: the HYP algorithm up to 10 draws, else HRUA (as Generator's). */
int64_t kiln_rng_legacy_hypergeometric(int64_t good, int64_t bad, double sample_, double q) {
  int64_t sample = (int64_t)sample_;
  if (sample > 10)
    return random_hypergeometric(BG, good, bad, sample);
  int64_t d1 = bad + good - sample, k = sample;
  double d2 = (double)(bad < good ? bad : good), y = d2;
  while (y > 0.0) {
    double u = legacy_double();
    y -= (int64_t)floor(u + y / (d1 + k));
    k--;
    if (k == 0)
      break;
  }
  int64_t z = (int64_t)(d2 - y);
  return good > bad ? sample - z : z;
}

/* ------------------------------------------- vector-valued distributions
 * One op element per entry of the result vectors, in C order, the context
 * carrying what NumPy's loop over a vector carries. */

/* multinomial (Generator and RandomState alike, NumPy's random_multinomial):
 * entry j of a d-vector of n trials. Entries before the last draw a binomial
 * of the trials left with probability p_j / (probability left) until no trial
 * is left; the last entry takes the trials left. */
int64_t kiln_rng_multinomial(int64_t n, int64_t j, double p, double d) {
  if (j == 0) {
    rng.trials_left = n;
    rng.p_left = 1.0;
    rng.stopped = false;
  }
  if (j == (int64_t)d - 1)
    return !rng.stopped && rng.trials_left > 0 ? rng.trials_left : 0;
  if (rng.stopped)
    return 0;
  int64_t x = random_binomial(BG, p / rng.p_left, rng.trials_left, &rng.binomial);
  rng.trials_left -= x;
  if (rng.trials_left <= 0)
    rng.stopped = true;
  else
    rng.p_left -= p;
  return x;
}

/* The smallest all-ones mask covering `value` (NumPy's _gen_mask). */
static uint64_t ones_mask(uint64_t value) {
  uint64_t mask = value;
  for (int shift = 1; shift < 64; shift <<= 1)
    mask |= mask >> shift;
  return mask;
}

/* Fisher-Yates from the end over data[first..n-1] by Lemire's bounded draws
 * (the Generator's _shuffle_int, unlike shuffle's masked random_interval). */
static void shuffle_int(int64_t n, int64_t first, int64_t *data) {
  for (int64_t i = n - 1; i >= first; i--) {
    int64_t j = (int64_t)random_bounded_uint64(BG, 0, (uint64_t)i, 0, false);
    int64_t held = data[j];
    data[j] = data[i];
    data[i] = held;
  }
}

/* Generator.choice(pop, size, replace=False) without p: at the op's first
 * element the whole sample, as NumPy draws it: a tail shuffle of
 * arange(pop) for large samples of large populations, else Floyd's
 * algorithm (an open-addressing set of the values taken) then, with
 * `shuffle`, a shuffle of the sample. Element i returns pick i. */
static void draw_without_replacement(int64_t pop, int64_t size, bool shuffle) {
  rng.picks = malloc((size_t)(size > 0 ? size : 1) * sizeof(int64_t));
  int64_t cutoff = shuffle ? 50 : 20;
  if (pop > 10000 && size > pop / cutoff) {
    int64_t *all = malloc((size_t)pop * sizeof(int64_t));
    for (int64_t i = 0; i < pop; i++)
      all[i] = i;
    shuffle_int(pop, pop - size > 1 ? pop - size : 1, all);
    memcpy(rng.picks, all + (pop - size), (size_t)size * sizeof(int64_t));
    free(all);
    return;
  }
  uint64_t mask = ones_mask((uint64_t)(1.2 * (double)size));
  uint64_t *taken = malloc((size_t)(mask + 1) * sizeof(uint64_t));
  memset(taken, 0xff, (size_t)(mask + 1) * sizeof(uint64_t));
  const uint64_t empty = UINT64_MAX;
  for (int64_t j = pop - size; j < pop; j++) {
    uint64_t value = random_bounded_uint64(BG, 0, (uint64_t)j, 0, false);
    uint64_t slot = value & mask;
    while (taken[slot] != empty && taken[slot] != value)
      slot = (slot + 1) & mask;
    if (taken[slot] == empty) {
      taken[slot] = value;
    } else { /* value already taken: take j, which no earlier step could */
      value = (uint64_t)j;
      slot = value & mask;
      while (taken[slot] != empty)
        slot = (slot + 1) & mask;
      taken[slot] = value;
    }
    rng.picks[j - pop + size] = (int64_t)value;
  }
  free(taken);
  if (shuffle)
    shuffle_int(size, 1, rng.picks);
}

int64_t kiln_rng_choice_noreplace(int64_t pop, int64_t size, double shuffle, double q) {
  int64_t i = rng.draws++;
  if (i == 0)
    draw_without_replacement(pop, size, shuffle != 0.0);
  int64_t pick = rng.picks[i];
  if (i == size - 1) {
    free(rng.picks);
    rng.picks = NULL;
  }
  return pick;
}
