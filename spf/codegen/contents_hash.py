"""The 64-bit hash of index arrays' bytes that a checked function computes itself, so that a
checked call on contents verified before needs no Python hash (spf.runtime.known,
:func:`spf.codegen.arg_checks.known_lines`): one state over all the arrays of a call
(:data:`START`, then :data:`FEED` for each array, then :data:`END`).

Four pairs of 256-bit vectors of four 64-bit lanes read 256 bytes a step of the loop; a lane
``a`` takes ``rotl(a ^ x', 23)`` of the word ``x`` it reads (``x'`` the product of each
32-bit half of ``x`` by an odd ``K``) and a second lane ``b`` adds up the ``a`` it passes
through and a second word ``y``. An array's bytes past its last 256-byte block are read in
64-byte steps on lanes 0, 1, 2, and the bytes left in one zero-padded step on the next lane;
each array's length is chained into one more word, and at the end every lane and that word are
mixed by multiplications into one word. Each step is a bijection of ``(a, b)`` for fixed
words and injective in ``(x, y)``, so contents of the same lengths that differ in one word
always hash apart before the final mix (tests compare changed entries at every tail shape,
swapped pairs and shortened arrays). Any such step can be undone by changing the next step's
words; the multiplication makes the change that undoes a small one a large, scattered one in
``x`` instead of another entry's +-1: without it, +1 at a step's second word with ^1 and -1
at the two words of the same lane's next step collided for about every other state (525 of
1,000 random int64 arrays; 0 with it; a test tries such edits at every lane). The product
is of 32-bit halves (``vpmulld``, a bijection of each half, so of ``x``), followed by
``x ^= x >> 29`` (a bijection too): a product only carries a change upwards, so a change of
bit 31 or 63 alone stayed that bit, and +2**31 at a step's second word, bit 31 flipped and
-2**31 at the next step's two words (or the same with 2**63: three sign flips) collided for
about every other state (1,126 of 2,224 int64 arrays; 2**63: every one, also with the
64-bit product before); the shift carries such a change down into the low bits. It was of
64-bit lanes (``vpmullq``, three micro-operations on one port): ~90 GB/s on 40 KB in the
caches here against ~74 (C loop, loaded machine), 256-bit code only, which leaves little
cost on the code after it (the ``xxhash`` package's AVX-512 XXH3 left 1-2 us,
docs/backends/c.md). One state for all arrays (one final mix, done in vector code, where
each array had its own hash, seeded by the one before, and a scalar final mix of 32 words)
and no padded steps past the bytes left halved the hash of small arrays: two arrays of 0.4
and 2.4 KB took 54 and 65 ns where they took 110 and 149 ns."""

from __future__ import annotations

from spf.codegen.unit import Chunk, Function

STATE_WORDS = 33
"""The running state of one hash over several arrays, in ``uint64_t`` words: four pairs of
256-bit vectors (the ``a`` lanes, then the ``b`` lanes) and a word that takes each array's
length."""
START = "spf_hash_start"
"""``void spf_hash_start(uint64_t *s, uint64_t seed)``: the state (:data:`STATE_WORDS`)."""
FEED = "spf_hash_feed"
"""``void spf_hash_feed(uint64_t *s, const void *p, uint64_t n)``: ``n`` bytes at
``p`` (a last partial 64-byte step zero-padded), then ``n`` into the length word."""
END = "spf_hash_end"
"""``uint64_t spf_hash_end(const uint64_t *s)``: every lane and the length word mixed
into one word."""
NAME = FEED
"""The function every hashing checked function calls (what a test looks for in a source)."""

_TEXT = f"""\
#ifndef SPF_CONTENTS_HASH
#define SPF_CONTENTS_HASH
#define spf_hash4 uint64_t __attribute__((vector_size(32)))
#define spf_hash8 uint32_t __attribute__((vector_size(32)))
#define SPF_HASH_STEP(a, b, c) {{ spf_hash4 spf_x, spf_y, spf_u; \\
  __builtin_memcpy(&spf_x, (c), sizeof spf_x); __builtin_memcpy(&spf_y, (c) + 32, sizeof spf_y); \\
  spf_x = (spf_hash4)((spf_hash8)spf_x * 0x9e3779b9U); spf_x ^= spf_x >> 29; \\
  spf_u = (a) ^ spf_x; (b) += spf_y + spf_u; (a) = ((spf_u << 23) | (spf_u >> 41)) ^ (b); \\
  }}
static inline void spf_hash_vmix(spf_hash4 *p)
{{
  spf_hash4 h = *p;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  *p = h ^ (h >> 32);
}}
static inline uint64_t spf_hash_mix(uint64_t h)
{{
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  return h ^ (h >> 32);
}}
static inline void {START}(uint64_t *s, uint64_t seed)
{{
  const uint64_t g = 0x9e3779b97f4a7c15ULL;
  const spf_hash4 k = {{g, 2 * g, 3 * g, 4 * g}};
  const spf_hash4 a[4] = {{k ^ seed, (k + 4 * g) ^ seed, (k + 8 * g) ^ seed, (k + 12 * g) ^ seed}};
  const spf_hash4 b[4] = {{~a[0], ~a[1], ~a[2], ~a[3]}};
  __builtin_memcpy(s, a, sizeof a);
  __builtin_memcpy(s + 16, b, sizeof b);
  s[32] = spf_hash_mix(seed ^ g);
}}
static inline void {FEED}(uint64_t *s, const void *p, uint64_t n)
{{
  const unsigned char *c = (const unsigned char *)p;
  spf_hash4 a0, a1, a2, a3, b0, b1, b2, b3;
  __builtin_memcpy(&a0, s, 32); __builtin_memcpy(&a1, s + 4, 32);
  __builtin_memcpy(&a2, s + 8, 32); __builtin_memcpy(&a3, s + 12, 32);
  __builtin_memcpy(&b0, s + 16, 32); __builtin_memcpy(&b1, s + 20, 32);
  __builtin_memcpy(&b2, s + 24, 32); __builtin_memcpy(&b3, s + 28, 32);
  unsigned char tail[64] = {{0}};
  uint64_t i = 0;
  for (; i + 256 <= n; i += 256)
  {{
    SPF_HASH_STEP(a0, b0, c + i);
    SPF_HASH_STEP(a1, b1, c + i + 64);
    SPF_HASH_STEP(a2, b2, c + i + 128);
    SPF_HASH_STEP(a3, b3, c + i + 192);
  }}
  if (i + 64 <= n) {{ SPF_HASH_STEP(a0, b0, c + i); i += 64;
    if (i + 64 <= n) {{ SPF_HASH_STEP(a1, b1, c + i); i += 64;
      if (i + 64 <= n) {{ SPF_HASH_STEP(a2, b2, c + i); i += 64; }} }} }}
  if (i < n)
  {{
    __builtin_memcpy(tail, c + i, (size_t)(n - i));
    switch ((n & 255) >> 6)
    {{
    case 0: SPF_HASH_STEP(a0, b0, tail); break;
    case 1: SPF_HASH_STEP(a1, b1, tail); break;
    case 2: SPF_HASH_STEP(a2, b2, tail); break;
    default: SPF_HASH_STEP(a3, b3, tail); break;
    }}
  }}
  __builtin_memcpy(s, &a0, 32); __builtin_memcpy(s + 4, &a1, 32);
  __builtin_memcpy(s + 8, &a2, 32); __builtin_memcpy(s + 12, &a3, 32);
  __builtin_memcpy(s + 16, &b0, 32); __builtin_memcpy(s + 20, &b1, 32);
  __builtin_memcpy(s + 24, &b2, 32); __builtin_memcpy(s + 28, &b3, 32);
  s[32] = spf_hash_mix(s[32] ^ n) + n;
}}
static inline uint64_t {END}(const uint64_t *s)
{{
  const uint64_t g = 0x9e3779b97f4a7c15ULL, h = s[32];
  spf_hash4 v[8];
  __builtin_memcpy(v, s, sizeof v);
  const spf_hash4 up = (spf_hash4){{g, 2 * g, 3 * g, 4 * g}} + h;
  const spf_hash4 down = h - (spf_hash4){{g, 2 * g, 3 * g, 4 * g}};
  for (int i = 0; i < 4; i++)
  {{
    v[i] ^= up + (uint64_t)(4 * i) * g;
    v[i + 4] ^= down - (uint64_t)(4 * i) * g;
  }}
  spf_hash4 m = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++)
  {{
    spf_hash_vmix(&v[i]);  /* by pointer: no vector in the ABI (a host without AVX) */
    m += v[i];
  }}
  const uint64_t sum = m[0] + m[1] + m[2] + m[3];
  return spf_hash_mix(sum ^ h) | 1;
}}
#undef SPF_HASH_STEP
#undef spf_hash8
#undef spf_hash4
#endif
"""
HASH = Chunk(
    tuple(_TEXT.rstrip("\n").split("\n")),
    functions=(
        Function("spf_hash_mix", "uint64_t spf_hash_mix(uint64_t h)", static=True),
        Function("spf_hash_vmix", "void spf_hash_vmix(spf_hash4 *p)", static=True),
        Function(START, f"void {START}(uint64_t *s, uint64_t seed)", static=True),
        Function(FEED, f"void {FEED}(uint64_t *s, const void *p, uint64_t n)", static=True),
        Function(END, f"uint64_t {END}(const uint64_t *s)", static=True),
    ),
    macros=("SPF_CONTENTS_HASH",),
)
"""The hash's C text (once per unit: its include guard). A hash is never 0 (its lowest bit
is set), so a bounds word of 0 matches no contents."""
