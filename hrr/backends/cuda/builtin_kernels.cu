// hrr's built-in kernel library, CUDA C edition (BRIEF contract 2).
//
// The same seven kernels, with the same C ABIs (natural alignment, little-endian), as the
// sim device's built-in library. Each computes its whole result whatever the launch
// shape: element kernels use a grid-stride loop over the linearised 3-D grid; the sums
// are computed by the first block alone (a block-wide reduction) and written once, so
// dst[0] == sum(src[0:n]) mod 2^32 for any grid and block.
//
// Compiled at run time by NVRTC (hrr.backends.cuda.builtin_code_object) to a cubin for
// the device's architecture; no headers are needed.

typedef unsigned char uint8_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

struct hrr_u32_span {          // struct_sum_u32's by-value argument: 16 bytes, align 8
    const uint32_t* src;
    uint32_t n;
    uint32_t pad;
};

__device__ __forceinline__ uint64_t hrr_block_linear()
{
    return ((uint64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

__device__ __forceinline__ uint64_t hrr_thread_in_block()
{
    return ((uint64_t)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ uint64_t hrr_block_threads()
{
    return (uint64_t)blockDim.x * blockDim.y * blockDim.z;
}

__device__ __forceinline__ uint64_t hrr_global_id()
{
    return hrr_block_linear() * hrr_block_threads() + hrr_thread_in_block();
}

__device__ __forceinline__ uint64_t hrr_global_threads()
{
    return (uint64_t)gridDim.x * gridDim.y * gridDim.z * hrr_block_threads();
}

// The first block sums src[0:n]: its threads stride by the block size, each adds its
// partial sum into one shared accumulator (unsigned, so mod 2^32), and thread 0 writes
// dst[0] once. Other blocks return at once. Correct for any block shape and size.
__device__ __forceinline__ void hrr_block0_sum(uint32_t* dst, const uint32_t* src, uint32_t n)
{
    __shared__ uint32_t acc;
    if (hrr_block_linear() != 0)
        return;
    const uint64_t t = hrr_thread_in_block();
    const uint64_t nt = hrr_block_threads();
    if (t == 0)
        acc = 0u;
    __syncthreads();
    uint32_t mine = 0u;
    for (uint64_t i = t; i < n; i += nt)
        mine += src[i];
    if (mine != 0u)
        atomicAdd(&acc, mine);
    __syncthreads();
    if (t == 0)
        dst[0] = acc;
}

extern "C" __global__ void fill_u32(uint32_t* dst, uint32_t value, uint32_t n)
{
    const uint64_t stride = hrr_global_threads();
    for (uint64_t i = hrr_global_id(); i < n; i += stride)
        dst[i] = value;
}

extern "C" __global__ void copy_u8(uint8_t* dst, const uint8_t* src, uint64_t nbytes)
{
    const uint64_t stride = hrr_global_threads();
    for (uint64_t i = hrr_global_id(); i < nbytes; i += stride)
        dst[i] = src[i];
}

extern "C" __global__ void add_u32(uint32_t* dst, const uint32_t* a, const uint32_t* b, uint32_t n)
{
    const uint64_t stride = hrr_global_threads();
    for (uint64_t i = hrr_global_id(); i < n; i += stride)
        dst[i] = a[i] + b[i];
}

extern "C" __global__ void sum_u32(uint32_t* dst, const uint32_t* src, uint32_t n)
{
    hrr_block0_sum(dst, src, n);
}

extern "C" __global__ void struct_sum_u32(uint32_t* dst, struct hrr_u32_span s)
{
    hrr_block0_sum(dst, s.src, s.n);
}

// The stream blocks until *flag == expected: one thread spins on a volatile load (which
// goes to memory every time, pinned host memory included); the kernel ends when it does.
extern "C" __global__ void wait_flag(volatile uint32_t* flag, uint32_t expected)
{
    if (hrr_global_id() != 0)
        return;
    while (*flag != expected) {
        __nanosleep(200);
    }
    __threadfence_system();
}

// Write the flag once, with system-scope fences so the host and other streams see it.
extern "C" __global__ void set_flag(uint32_t* flag, uint32_t value)
{
    if (hrr_global_id() != 0)
        return;
    __threadfence_system();
    *(volatile uint32_t*)flag = value;
    __threadfence_system();
}
