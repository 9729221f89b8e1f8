// GEMM verification, shared by the benchmarks (gemm/gemm.cu) and tests/gpu/test_gemm.cu:
// random inputs, a NaN-poisoned output, a reference (cuBLAS, kernel 3 or fp64 on the CPU), and a device
// checker that returns the largest error and the count of NaN/inf elements. Metric and tolerance:
// gemm/accuracy.hpp.
#pragma once
#include <cstdint>
#include <string>

#include "gemm/accuracy.hpp"
#include "gemm/gemm.cuh"
#include "harness/device_buffer.cuh"

namespace mh::gemm {

// Uniform in (-1, 1), never zero: odd multiples of 2^-24, exact in FP32, from a hash of (seed, index).
void fill_uniform(float* p, size_t n, uint64_t seed, cudaStream_t s = nullptr);

// One shape's device data: A, B and C0 random (seeded by the shape, so every run sees the same
// matrices), and the output C.
struct Problem {
  Problem(int M, int N, int K);
  int M, N, K;
  DeviceBuffer<float> A, B, C0, C;
  // Readies C for a checked run and returns the call: C = C0 when beta != 0, else NaN everywhere, so an
  // element the kernel never writes stays NaN.
  Gemm prepare(float alpha, float beta);
};

// What a result is compared with: value = alpha A B + beta C0, scale = |alpha| |A||B| + |beta| |C0|.
template <class T>
struct Reference {
  DeviceBuffer<T> value, scale;
  double tolerance;
};
// FP32: value by `by` (cuBLAS, or kernel 3 for cuBLAS), scale by cuBLAS on |A|, |B|, |C0|.
Reference<float> device_reference(const Problem& p, float alpha, float beta, const GemmKernel& by,
                                  cublasHandle_t h);
// fp64 on the CPU (gemm/accuracy.hpp); for sizes where M N K is up to ~1e8.
Reference<double> host_reference(const Problem& p, float alpha, float beta);

struct Check {
  double max_rel_err = 0;      // over the finite elements
  unsigned long long bad = 0;  // NaN or inf in the result (or the reference): unwritten poison lands here
  double tolerance = 0;
  bool pass() const { return bad == 0 && max_rel_err <= tolerance; }
  std::string describe() const;  // "max_rel_err 3.1e-07 <= tolerance 1.9e-05, 0 NaN/inf elements"
};
Check check(const float* C, const Reference<float>& ref);
Check check(const float* C, const Reference<double>& ref);

}  // namespace mh::gemm
