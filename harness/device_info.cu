#include <algorithm>
#include <cstdio>
#include <vector>

#include "device_buffer.cuh"
#include "device_info.cuh"
#include "nvml.cuh"

namespace mh {
namespace {

DeviceFacts g_facts;
bool g_selected = false;

int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

// The unified L1/shared-memory array per SM is not a device attribute; the tuning guides give it per
// architecture (Turing 96 KiB, A100 192 KiB, H100 256 KiB, GA10x/AD10x 128 KiB, Blackwell 256 KiB / 128 KiB on
// consumer parts). Unknown: shared memory per SM plus the smallest L1 any of them keeps (28 KiB).
size_t l1_smem_per_sm(int major, int minor, size_t smem_per_sm) {
  const int cc = major * 10 + minor;
  size_t kib = 0;
  if (cc == 75) kib = 96;
  else if (cc == 80) kib = 192;
  else if (cc == 90 || cc == 100 || cc == 103) kib = 256;
  else if (cc == 86 || cc == 87 || cc == 89 || cc == 120 || cc == 121) kib = 128;
  return kib ? kib << 10 : smem_per_sm + (28 << 10);
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

__global__ void clock_probe_kernel(long long spin_ns, ClockSpan* out) {
  if (threadIdx.x != 0) return;
  const long long c0 = clock64(), t0 = global_ns();
  long long t = t0;
  while (t - t0 < spin_ns) t = global_ns();
  out[blockIdx.x] = {clock64() - c0, t - t0};
}

__global__ void mh_profile_marker() {}

}  // namespace

std::string gpu_uuid_string(const cudaUUID_t& id) {
  char uuid[64];
  const unsigned char* u = reinterpret_cast<const unsigned char*>(id.bytes);
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return uuid;
}

void launch_profile_marker() {
  mh_profile_marker<<<1, 1>>>();
  CUDA_CHECK_LAUNCH("mh_profile_marker");
}

std::string gpu_unavailable_reason() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(err) + ")";
  }
  if (n == 0) return "no CUDA device (cudaGetDeviceCount returned 0)";
  return {};
}

void select_device(int device) {
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));
  if (device < 0 || device >= n)
    throw std::invalid_argument("device " + std::to_string(device) + " does not exist (" + std::to_string(n) +
                                " CUDA device(s))");
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceFacts f;
  f.device = device;
  f.gpu_name = p.name;
  f.cc_major = p.major;
  f.cc_minor = p.minor;
  f.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  f.sm_count = p.multiProcessorCount;
  f.sm_clock_mhz = attr(cudaDevAttrClockRate, device) / 1000;
  f.mem_clock_mhz = attr(cudaDevAttrMemoryClockRate, device) / 1000;
  f.mem_bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth, device);
  f.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  f.smem_per_sm_bytes = p.sharedMemPerMultiprocessor;
  f.smem_per_block_optin_bytes = p.sharedMemPerBlockOptin;
  f.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  f.max_threads_per_block = p.maxThreadsPerBlock;
  f.max_blocks_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor, device);
  f.regs_per_sm = p.regsPerMultiprocessor;
  f.regs_per_block = p.regsPerBlock;
  f.global_mem_bytes = p.totalGlobalMem;
  f.smem_per_block_bytes = p.sharedMemPerBlock;
  f.reserved_smem_per_block_bytes = attr(cudaDevAttrReservedSharedMemoryPerBlock, device);
  f.l1_smem_per_sm_bytes = l1_smem_per_sm(p.major, p.minor, p.sharedMemPerMultiprocessor);
  f.gpu_uuid = gpu_uuid_string(p.uuid);
  int drv = 0, rt = 0;
  CUDA_CHECK(cudaDriverGetVersion(&drv));
  CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  f.driver_version = nvml::driver_version();
  if (f.driver_version.empty()) f.driver_version = version_string(drv);
  f.runtime_version = version_string(rt);
  g_facts = f;
  g_selected = true;
}

const DeviceFacts& current_device_facts() {
  if (!g_selected) {
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    select_device(dev);
  }
  return g_facts;
}

double median_mhz(const ClockSpan* spans, int n) {
  std::vector<double> mhz;
  for (int i = 0; i < n; ++i)
    if (spans[i].ns > 0) mhz.push_back(1e3 * static_cast<double>(spans[i].cycles) / static_cast<double>(spans[i].ns));
  if (mhz.empty()) return 0.0;
  std::nth_element(mhz.begin(), mhz.begin() + mhz.size() / 2, mhz.end());
  return mhz[mhz.size() / 2];
}

Residency compiled_residency(const void* kernel, int threads, size_t dyn_smem) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  Residency r;
  r.regs_per_thread = a.numRegs;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, kernel, threads, dyn_smem));
  return r;
}

bool kernels_from_ptx() {
  // Every kernel of the suite is compiled with one architecture list (CMAKE_CUDA_ARCHITECTURES), so the
  // driver loads the same kind of code for all of them: the clock probe speaks for every one.
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(clock_probe_kernel)));
  const DeviceFacts& f = current_device_facts();
  return code_from_ptx(a.binaryVersion, a.ptxVersion, f.cc_major, f.cc_minor);
}

std::string compiled_out_reason(const void* kernel, int min_arch, const std::string& what) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  if (a.ptxVersion * 10 >= min_arch) return "";
  return what + " needs code for sm_" + std::to_string(min_arch / 10) + " or later; this build runs sm_" +
         std::to_string(a.ptxVersion) + " code here (CMAKE_CUDA_ARCHITECTURES lacks this GPU's architecture)";
}

double observed_sm_clock_mhz(double spin_ms, double warmup_ms) {
  const int sms = current_device_facts().sm_count;
  DeviceBuffer<ClockSpan> spans(sms);
  clock_probe_kernel<<<sms, 32>>>(static_cast<long long>(warmup_ms * 1e6), spans.data());
  CUDA_CHECK_LAUNCH("clock_probe_kernel");
  clock_probe_kernel<<<sms, 32>>>(static_cast<long long>(spin_ms * 1e6), spans.data());
  CUDA_CHECK_LAUNCH("clock_probe_kernel");
  std::vector<ClockSpan> host = spans.download();
  return median_mhz(host.data(), sms);
}

}  // namespace mh
