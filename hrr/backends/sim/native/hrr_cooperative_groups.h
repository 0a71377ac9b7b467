/* The part of HIP's cooperative groups a native kernel can have (included by the stub
 * <hip/hip_cooperative_groups.h>): the thread block, and tiles of a warp (whose size divides
 * the warp's warpSize) through the runtime's warp operations. A grid-wide sync cannot be: blocks run
 * one after another, so grid_group::sync traps. */
#ifndef HRR_COOPERATIVE_GROUPS_H
#define HRR_COOPERATIVE_GROUPS_H

namespace cooperative_groups {

class thread_block {
 public:
  void sync() const { __syncthreads(); }
  unsigned thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

static inline thread_block this_thread_block() { return thread_block(); }

class grid_group {
 public:
  void sync() const { __hrr_trap("grid_group::sync(): blocks of a native kernel run one after another"); }
  unsigned long long thread_rank() const {
    unsigned long long block = blockIdx.x + gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    return block * (blockDim.x * blockDim.y * blockDim.z) + this_thread_block().thread_rank();
  }
  unsigned long long size() const {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  }
  bool is_valid() const { return true; }
};

static inline grid_group this_grid() { return grid_group(); }

template <unsigned N> class thread_block_tile {
  static_assert(N && N <= warpSize && (N & (N - 1)) == 0, "a tile is a power of two no larger than the warp");

 public:
  void sync() const { __syncwarp(); }
  unsigned thread_rank() const { return __lane_id() & (N - 1); }
  unsigned size() const { return N; }
  unsigned num_threads() const { return N; }
  unsigned meta_group_rank() const { return this_thread_block().thread_rank() / N; }
  unsigned meta_group_size() const { return (this_thread_block().size() + N - 1) / N; }
  template <class T> T shfl(T v, int src) const { return __shfl(v, src, (int)N); }
  template <class T> T shfl_down(T v, unsigned d) const { return __shfl_down(v, d, (int)N); }
  template <class T> T shfl_up(T v, unsigned d) const { return __shfl_up(v, d, (int)N); }
  template <class T> T shfl_xor(T v, int m) const { return __shfl_xor(v, m, (int)N); }
  unsigned long long ballot(int p) const { return (__ballot(p) >> (__lane_id() & ~(N - 1))) & mask(); }
  int any(int p) const { return ballot(p) != 0; }
  int all(int p) const {
    unsigned long long active;
    unsigned long long b = __hrr_vote(p, &active);
    unsigned shift = __lane_id() & ~(N - 1);
    return ((b >> shift) & mask()) == ((active >> shift) & mask());
  }

 private:
  static constexpr unsigned long long mask() { return N == 64 ? ~0ULL : ((1ULL << N) - 1); }
};

template <unsigned N> static inline thread_block_tile<N> tiled_partition(const thread_block &) {
  return thread_block_tile<N>();
}

static inline void sync(const thread_block &g) { g.sync(); }
template <unsigned N> static inline void sync(const thread_block_tile<N> &g) { g.sync(); }

}  // namespace cooperative_groups

#endif
