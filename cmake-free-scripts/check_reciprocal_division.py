"""Check kiln-divide-by-reciprocal's arithmetic against division, in C.

For each divisor c, every dividend x the pass does not send back to the
division (its bounds, `_BOUNDS` in compiler/passes/kiln_divide_by_reciprocal.py)
must give, bit for bit, what `x / c` gives:

    y = 1 / c;  q = x * y;  r = fma(-q, c, x);  result = copysign(fma(r, y, q), q)

- f32: every one of the 2^32 bit patterns of x, for divisors with all-ones
  and all-zeros mantissas, powers of two at the bounds, and random ones;
- f64: random pairs, exponents spread over the bounds, with all-ones and
  short mantissas mixed in, and the special values (0, -0, NaN, inf, the
  bounds themselves).

    python cmake-free-scripts/check_reciprocal_division.py           # 40 f32 divisors, 2.56e9 f64 pairs (~1 min on 2 cores)
    python cmake-free-scripts/check_reciprocal_division.py --quick   # 3 f32 divisors, 2e7 f64 pairs (test/test_divide_by_reciprocal.py)

Prints the mismatches (none expected) and exits 1 if there are any. Needs a
C compiler (`cc`, or `CC`); uses OpenMP when the compiler has it.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static float f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t u32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double f64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static uint64_t u64(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static uint64_t next(uint64_t *s) { uint64_t x = *s; x ^= x << 13; x ^= x >> 7; x ^= x << 17; return *s = x; }

/* 1 when the pass's fast path is taken for x (c in range) and differs from x / c. */
static int wrong32(float x, float c, float y) {
  float a = fabsf(x);
  if (a > HIGH_X32 || (a < LOW_X32 && a > 0)) return 0; /* divides again */
  float q = x * y, r = fmaf(-q, c, x), got = copysignf(fmaf(r, y, q), q), want = x / c;
  return u32(got) != u32(want) && !(isnan(got) && isnan(want));
}
static int wrong64(double x, double c, double y) {
  double a = fabs(x);
  if (a > HIGH_X64 || (a < LOW_X64 && a > 0)) return 0;
  double q = x * y, r = fma(-q, c, x), got = copysign(fma(r, y, q), q), want = x / c;
  return u64(got) != u64(want) && !(isnan(got) && isnan(want));
}

int main(int argc, char **argv) {
  int divisors32 = atoi(argv[1]);
  long pairs64 = atol(argv[2]);
  long bad = 0;
  float fixed[] = {1.0f, 3.0f, 0.1f, -7.0f, 1.0f + 0x1p-23f, 2.0f - 0x1p-23f, 1.5f - 0x1p-23f, LOW_C32, HIGH_C32,
                   -LOW_C32 * 1.5f, HIGH_C32 * 0.75f, 0x1.555556p0f, 9.87654e-8f, 1.2345678f};
  uint64_t seed = 12345;
  for (int k = 0; k < divisors32; k++) {
    float c;
    if (k < (int)(sizeof fixed / sizeof fixed[0])) c = fixed[k];
    else do { c = f32((uint32_t)next(&seed)); } while (!(fabsf(c) >= LOW_C32 && fabsf(c) <= HIGH_C32));
    float y = 1.0f / c;
    long wrong = 0;
    #pragma omp parallel for reduction(+:wrong) schedule(static)
    for (long hi = 0; hi < 65536; hi++)
      for (uint32_t lo = 0; lo < 65536; lo++)
        wrong += wrong32(f32((uint32_t)(hi << 16) | lo), c, y);
    if (wrong) printf("f32 c=%a: %ld dividends differ from division\n", c, wrong);
    bad += wrong;
  }
  long wrong = 0;
  #pragma omp parallel for reduction(+:wrong)
  for (int t = 0; t < 64; t++) {
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1);
    for (long k = 0; k < pairs64 / 64; k++) {
      uint64_t a = next(&s), b = next(&s);
      int mode = (int)((a >> 60) & 7);
      uint64_t cm = mode == 0 ? 0xFFFFFFFFFFFFFull : mode == 1 ? 0 : mode == 2 ? (b & 0xFF) : (b & 0xFFFFFFFFFFFFFull);
      uint64_t xm = mode == 3 ? 0xFFFFFFFFFFFFFull : mode == 4 ? (a & 0xF) : (a & 0xFFFFFFFFFFFFFull);
      int ce = (int)((b >> 52) % (2 * C_EXP64 + 1)) - C_EXP64, xe = (int)((a >> 52) % (2 * X_EXP64 + 1)) - X_EXP64;
      double c = f64(((uint64_t)(ce + 1023) << 52) | cm), x = f64(((uint64_t)(xe + 1023) << 52) | xm);
      if (b >> 63) c = -c;
      if ((a >> 59) & 1) x = -x;
      wrong += wrong64(x, c, 1.0 / c);
    }
  }
  if (wrong) printf("f64: %ld random pairs differ from division\n", wrong);
  bad += wrong;
  double cs[] = {3.0, -7.0, LOW_C64, HIGH_C64, 0.1};
  double xs[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, LOW_X64, HIGH_X64, 5e-324, 1.0};
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 10; j++)
      if (wrong64(xs[j], cs[i], 1.0 / cs[i])) { printf("f64 special x=%a c=%a differs\n", xs[j], cs[i]); bad++; }
  printf("%ld mismatches (%d f32 divisors x 2^32 dividends, %ld f64 pairs)\n", bad, divisors32, pairs64);
  return bad != 0;
}
"""


def _bounds() -> dict:
    from kiln.compiler.passes.kiln_divide_by_reciprocal import _BOUNDS
    (lc32, hc32, lx32, hx32), (lc64, hc64, lx64, hx64) = _BOUNDS["f32"], _BOUNDS["f64"]
    return {"LOW_C32": f"{lc32.hex()}f", "HIGH_C32": f"{hc32.hex()}f", "LOW_X32": f"{lx32.hex()}f",
            "HIGH_X32": f"{hx32.hex()}f", "LOW_C64": lc64.hex(), "HIGH_C64": hc64.hex(), "LOW_X64": lx64.hex(),
            "HIGH_X64": hx64.hex(), "C_EXP64": str(round(-math.log2(lc64))), "X_EXP64": str(round(-math.log2(lx64)))}


def run(quick: bool) -> int:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("check_reciprocal_division: no C compiler (set CC)")
    defines = [f"-D{k}={v}" for k, v in _bounds().items()]
    with tempfile.TemporaryDirectory() as folder:
        source, binary = os.path.join(folder, "check.c"), os.path.join(folder, "check")
        with open(source, "w") as f:
            f.write("#include <stdlib.h>\n" + SOURCE)
        base = [compiler, "-O2", "-ffp-contract=off", "-fno-math-errno", *defines, source, "-o", binary, "-lm"]
        # (-march=native: hardware fma, vectorized; OpenMP: both cores. Plain -O2 as the fallback.)
        for extra in (["-march=native", "-fopenmp"], ["-march=native"], []):
            if subprocess.run(base[:1] + extra + base[1:], capture_output=True).returncode == 0:
                break
        else:
            raise SystemExit("check_reciprocal_division: the C check does not compile")
        divisors, pairs = (3, 20_000_000) if quick else (40, 2_560_000_000)
        done = subprocess.run([binary, str(divisors), str(pairs)], capture_output=True, text=True)
        print(done.stdout, end="")
        return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 f32 divisors and 2e7 f64 pairs")
    return run(parser.parse_args(argv).quick)


if __name__ == "__main__":
    sys.exit(main())
