// tilelang_cuda/random.cuh: Philox4x32-10 random numbers
#ifndef TILELANG_CUDA_RANDOM_CUH
#define TILELANG_CUDA_RANDOM_CUH

// Philox4x32-10 (Salmon et al., SC'11): counter (c0..c3) under key (k0, k1) -> four random words
// the state lives in a thread's local uint32[RNG_STATE_WORDS] (11 words)
struct tl_rng_state { unsigned key0, key1, ctr0, ctr1, ctr2, ctr3; unsigned buf[4]; int used; };
__device__ __forceinline__ void tl_philox_round(unsigned* c, unsigned k0, unsigned k1) {
  unsigned hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
  unsigned hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
  unsigned n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
  c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
}
__device__ __forceinline__ void tl_philox(tl_rng_state& s) {
  unsigned c[4] = {s.ctr0, s.ctr1, s.ctr2, s.ctr3};
  unsigned k0 = s.key0, k1 = s.key1;
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    tl_philox_round(c, k0, k1);
    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
  }
  s.buf[0] = c[0]; s.buf[1] = c[1]; s.buf[2] = c[2]; s.buf[3] = c[3];
  s.used = 0;
  if (++s.ctr0 == 0) if (++s.ctr1 == 0) if (++s.ctr2 == 0) ++s.ctr3;
}
__device__ __forceinline__ void tl_rng_init(void* state, unsigned long long seed, unsigned long long subsequence,
                                            unsigned long long offset) {
  tl_rng_state& s = *reinterpret_cast<tl_rng_state*>(state);
  s.key0 = (unsigned)seed; s.key1 = (unsigned)(seed >> 32);
  s.ctr0 = (unsigned)(offset / 4); s.ctr1 = (unsigned)((offset / 4) >> 32);
  s.ctr2 = (unsigned)subsequence; s.ctr3 = (unsigned)(subsequence >> 32);
  tl_philox(s);
  s.used = (int)(offset % 4);
}
__device__ __forceinline__ unsigned tl_rng_rand(void* state) {
  tl_rng_state& s = *reinterpret_cast<tl_rng_state*>(state);
  if (s.used == 4) tl_philox(s);
  return s.buf[s.used++];
}
// uniform in (0, 1] as curand_uniform: x * 2^-32 + 2^-33
__device__ __forceinline__ float tl_rng_uniform_f32(void* state) {
  return (float)tl_rng_rand(state) * 2.3283064e-10f + 1.1641532e-10f;
}
// uniform in (0, 1] from two words (53 random bits), as curand_uniform_double
__device__ __forceinline__ double tl_rng_uniform_f64(void* state) {
  unsigned long long hi = tl_rng_rand(state), lo = tl_rng_rand(state);
  unsigned long long z = (hi << 21) ^ lo;
  return (double)(z & ((1ull << 53) - 1)) * 1.1102230246251565e-16 + 5.551115123125783e-17;
}
// standard normal by Box-Muller on two uniforms
__device__ __forceinline__ float tl_rng_normal_f32(void* state) {
  float u = tl_rng_uniform_f32(state), v = tl_rng_uniform_f32(state);
  return sqrtf(-2.0f * logf(u)) * cospif(2.0f * v);
}
__device__ __forceinline__ double tl_rng_normal_f64(void* state) {
  double u = tl_rng_uniform_f64(state), v = tl_rng_uniform_f64(state);
  return sqrt(-2.0 * log(u)) * cospi(2.0 * v);
}

#endif  // TILELANG_CUDA_RANDOM_CUH
