// DISTCONV_CLONES compiles a function once per x86 instruction set
// (AVX-512F, AVX2 and the baseline) and picks the clone at load time, so
// that its loops vectorise as wide as the CPU allows; loops it inlines take
// the clone's instruction set. Building with -DDISTCONV_NO_TARGET_CLONES
// (or with a compiler or target without target_clones) keeps the baseline
// only. DISTCONV_HAS_CLONES says whether the clones are built.
#ifndef DISTCONV_INTERNAL_TARGET_CLONES_H_
#define DISTCONV_INTERNAL_TARGET_CLONES_H_

#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(DISTCONV_NO_TARGET_CLONES)
#define DISTCONV_HAS_CLONES 1
#define DISTCONV_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DISTCONV_CLONES
#endif

#endif  // DISTCONV_INTERNAL_TARGET_CLONES_H_
