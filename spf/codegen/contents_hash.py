"""``spf_contents_hash``: the 64-bit hash of an index array's bytes that a checked function
computes itself, so that a checked call on contents verified before needs no Python hash
(spf.runtime.known, :func:`spf.codegen.arg_checks.known_lines`).

Four 256-bit vectors of four 64-bit lanes each read 128 bytes a step; a lane ``a`` takes
``rotl(a ^ x', 23)`` of the word ``x`` it reads (``x' = x * K``, ``K`` odd) and a second
lane ``b`` adds up the ``a`` it passes through and a second word ``y`` (a zero-padded last
step, then every lane, the length and the seed mixed by multiplications into one word).
Each step is a bijection of ``(a, b)`` for fixed words and injective in ``(x, y)``, so
contents that differ in one word always hash apart before the final mix (a test compares
changed entries, swapped pairs and shortened arrays). Any such step can be undone by
changing the next step's words; the multiplication makes the change that undoes a small
one a large, scattered one in ``x`` instead of another entry's +-1: without it, +1 at a
step's second word with ^1 and -1 at the two words of the same lane's next step collided
for about every other state (525 of 1,000 random int64 arrays; 0 with it; a test tries
such edits at every lane). One multiplication, off the lanes' dependency chains: five
vector instructions a pair of 32-byte words (gcc's vector extension; ``vpmullq`` and
``vprolq`` where AVX-512 has them), ~55-62 GB/s on arrays in the caches here against
~85-95 without the product (0.15 us for 8 KB, 1.1 us for 69 KB, 2.0 us for 119 KB: one
core, loaded machine), 256-bit code only, which leaves little cost on the code after it
(the ``xxhash`` package's AVX-512 XXH3 left 1-2 us, docs/backends/c.md)."""

from __future__ import annotations

from spf.codegen.unit import Chunk, Function

NAME = "spf_contents_hash"
PROTOTYPE = f"uint64_t {NAME}(const void *p, uint64_t n, uint64_t seed)"

_TEXT = f"""\
#ifndef SPF_CONTENTS_HASH
#define SPF_CONTENTS_HASH
#define spf_hash4 uint64_t __attribute__((vector_size(32)))
#define SPF_HASH_STEP(a, b, c) {{ spf_hash4 spf_x, spf_y, spf_u; \\
  __builtin_memcpy(&spf_x, (c), sizeof spf_x); __builtin_memcpy(&spf_y, (c) + 32, sizeof spf_y); \\
  spf_x *= 0x9fb21c651e98df25ULL; \\
  spf_u = (a) ^ spf_x; (b) += spf_y + spf_u; (a) = ((spf_u << 23) | (spf_u >> 41)) ^ (b); \\
  }}
static inline uint64_t spf_hash_mix(uint64_t h)
{{
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  return h ^ (h >> 32);
}}
static {PROTOTYPE} __attribute__((unused));
static {PROTOTYPE}
{{
  const unsigned char *c = (const unsigned char *)p;
  const uint64_t g = 0x9e3779b97f4a7c15ULL;
  const spf_hash4 k = {{g, 2 * g, 3 * g, 4 * g}};
  spf_hash4 a0 = k ^ seed, a1 = (k + 4 * g) ^ seed, a2 = (k + 8 * g) ^ seed;
  spf_hash4 a3 = (k + 12 * g) ^ seed, b0 = ~a0, b1 = ~a1, b2 = ~a2, b3 = ~a3;
  unsigned char tail[256] = {{0}};
  uint64_t i = 0;
  for (; i + 256 <= n; i += 256)
  {{
    SPF_HASH_STEP(a0, b0, c + i);
    SPF_HASH_STEP(a1, b1, c + i + 64);
    SPF_HASH_STEP(a2, b2, c + i + 128);
    SPF_HASH_STEP(a3, b3, c + i + 192);
  }}
  __builtin_memcpy(tail, c + i, (size_t)(n - i));
  SPF_HASH_STEP(a0, b0, tail);
  SPF_HASH_STEP(a1, b1, tail + 64);
  SPF_HASH_STEP(a2, b2, tail + 128);
  SPF_HASH_STEP(a3, b3, tail + 192);
  const uint64_t h = spf_hash_mix(seed ^ (n * g));
  uint64_t sum = 0;
  for (int j = 0; j < 4; j++)
    sum += spf_hash_mix(a0[j] ^ (h + (uint64_t)(j + 1) * g))
         + spf_hash_mix(a1[j] ^ (h + (uint64_t)(j + 5) * g))
         + spf_hash_mix(a2[j] ^ (h + (uint64_t)(j + 9) * g))
         + spf_hash_mix(a3[j] ^ (h + (uint64_t)(j + 13) * g))
         + spf_hash_mix(b0[j] ^ (h - (uint64_t)(j + 1) * g))
         + spf_hash_mix(b1[j] ^ (h - (uint64_t)(j + 5) * g))
         + spf_hash_mix(b2[j] ^ (h - (uint64_t)(j + 9) * g))
         + spf_hash_mix(b3[j] ^ (h - (uint64_t)(j + 13) * g));
  return spf_hash_mix(sum ^ h) | 1;
}}
#undef SPF_HASH_STEP
#undef spf_hash4
#endif
"""
HASH = Chunk(
    tuple(_TEXT.rstrip("\n").split("\n")),
    functions=(
        Function("spf_hash_mix", "uint64_t spf_hash_mix(uint64_t h)", static=True),
        Function(NAME, PROTOTYPE, static=True),
    ),
    macros=("SPF_CONTENTS_HASH",),
)
"""The hash's C text (once per unit: its include guard). A hash is never 0 (its lowest bit
is set), so a bounds word of 0 matches no contents."""
