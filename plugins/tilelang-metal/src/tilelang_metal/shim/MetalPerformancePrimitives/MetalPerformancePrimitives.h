// tilelang-metal: a checking stand-in for Apple's <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
// (Metal 4, macOS 26), for `clang -x clcpp -fsyntax-only` only: declarations of the tensor_ops::matmul2d surface
// the generated GEMM helpers use, after the documented API (descriptor, simdgroup execution scope, cooperative
// tensors with element access, run). OpenCL C++ is C++17, which has no class-type template parameters, so the
// descriptor converts to a packed integer that matmul2d takes instead (the Metal header takes the descriptor).
#pragma once
#pragma clang system_header
#include <metal_stdlib>

namespace metal {
struct execution_thread {};
struct execution_simdgroup {};
template <int N> struct execution_simdgroups {};
constexpr int dynamic_length_v = -1;
}  // namespace metal

namespace mpp {
namespace tensor_ops {

struct matmul2d_descriptor {
  enum class mode : int { multiply = 0, multiply_accumulate = 1 };
  int m, n, k;
  bool transpose_left, transpose_right, relaxed_precision;
  mode matmul_mode;
  constexpr matmul2d_descriptor(int m_, int n_, int k_ = metal::dynamic_length_v, bool transpose_left_ = false,
                                bool transpose_right_ = false, bool relaxed_precision_ = false,
                                mode matmul_mode_ = mode::multiply)
      : m(m_), n(n_), k(k_), transpose_left(transpose_left_), transpose_right(transpose_right_),
        relaxed_precision(relaxed_precision_), matmul_mode(matmul_mode_) {}
  // shim only: the descriptor as a template argument (see the header comment)
  constexpr operator unsigned long() const {
    return (unsigned long)(m & 0xfff) | (unsigned long)(n & 0xfff) << 12 | (unsigned long)(k & 0xfff) << 24 |
           (unsigned long)transpose_left << 36 | (unsigned long)transpose_right << 37 |
           (unsigned long)relaxed_precision << 38 | (unsigned long)matmul_mode << 39;
  }
};

// a cooperative tensor: `Capacity` elements of type T spread over the lanes of the executing simdgroup(s)
template <class T, int Capacity, int Operand> struct cooperative_tensor {
  using element_type = T;
  T elements_[Capacity];
  __private T &operator[](unsigned short i);
  const __private T &operator[](unsigned short i) const;
  static constexpr unsigned short get_capacity() { return Capacity; }
  bool is_valid_element(unsigned short i) const;
  template <class Tensor> void load(const Tensor &source);
  template <class Tensor> void store(const Tensor &destination) const;
};

template <unsigned long Descriptor, class Scope, class... Args> struct matmul2d {
  static constexpr int M = (int)(Descriptor & 0xfff), N = (int)((Descriptor >> 12) & 0xfff),
                       K = (int)((Descriptor >> 24) & 0xfff);
  template <class LeftT, class RightT, class DestT>
  cooperative_tensor<LeftT, M * K / 32, 0> get_left_input_cooperative_tensor() const;
  template <class LeftT, class RightT, class DestT>
  cooperative_tensor<RightT, K * N / 32, 1> get_right_input_cooperative_tensor() const;
  template <class LeftCT, class RightCT, class DestT>
  cooperative_tensor<DestT, M * N / 32, 2> get_destination_cooperative_tensor() const;
  template <class L, int LC, class R, int RC, class D, int DC>
  void run(const cooperative_tensor<L, LC, 0> &left, const cooperative_tensor<R, RC, 1> &right,
           cooperative_tensor<D, DC, 2> &destination) const;
};

}  // namespace tensor_ops
}  // namespace mpp
