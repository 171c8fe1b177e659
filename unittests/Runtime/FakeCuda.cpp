//===- FakeCuda.cpp - A fake CUDA driver on host memory -------------------===//
//
// See FakeCuda.h. Only what lib/Runtime resolves is implemented; signatures
// come from cuda.h, so they cannot drift from the real driver's.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct FakeFunction {
  std::string name;
  std::vector<size_t> paramSizes;
  int staticSmem = 0;
  int maxThreads = 1024;
  std::map<int, int> attributes; // set with cuFuncSetAttribute
};

struct FakeModule {
  std::vector<FakeFunction *> functions;
};

struct State {
  std::mutex mutex;
  int devices = 1, major = 9, minor = 0, sms = 132, smemOptin = 232448;
  int initResult = 0;
  bool paramInfo = true;
  std::map<std::string, int> calls;
  int deviceCalls = 0;
  std::string trace;
  std::vector<FakeLaunch> launches;
  std::vector<FakeTensorMapEncode> encodes;
  int lastAttribute = -1, lastAttributeValue = 0;
  std::map<uintptr_t, size_t> allocations; // cuMemAlloc'd
  std::map<uintptr_t, size_t> registered;
  int contextDepth = 0;
  std::map<std::string, FakeKernelImpl> impls;
  int primaryContext = 0; // its address is the CUcontext
  int streamObject = 0, eventObject = 0;
  bool capturing = false;
};

State &state() {
  static State *s = new State();
  return *s;
}

void note(const char *name, bool device) {
  State &s = state();
  s.calls[name]++;
  if (device)
    s.deviceCalls++;
  std::string shortName = name + 2; // drop "cu"
  size_t v = shortName.find("_v");
  if (v != std::string::npos)
    shortName = shortName.substr(0, v);
  if (!s.trace.empty())
    s.trace += ' ';
  s.trace += shortName;
}

#define ENTER(name, device)                                                    \
  std::lock_guard<std::mutex> lock(state().mutex);                             \
  note(name, device);                                                          \
  State &s = state();                                                          \
  (void)s

/// What a CUDA graph capture forbids fails while fake_cuda_set_capturing is on.
#define FORBIDDEN_WHILE_CAPTURING()                                            \
  if (s.capturing)                                                             \
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED

/// The allocation holding [p, p + 1), from cuMemAlloc or registered.
bool findRange(uintptr_t p, uintptr_t &start, size_t &size) {
  State &s = state();
  for (auto *m : {&s.allocations, &s.registered}) {
    auto it = m->upper_bound(p);
    if (it == m->begin())
      continue;
    --it;
    if (p >= it->first && p < it->first + it->second) {
      start = it->first;
      size = it->second;
      return true;
    }
  }
  return false;
}

} // namespace

extern "C" FakeKernelImpl fake_cuda_builtin_kernel(const char *name);

extern "C" {

//===--- control ---------------------------------------------------------===//

void fake_cuda_reset(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.calls.clear();
  s.deviceCalls = 0;
  s.trace.clear();
  s.launches.clear();
  s.encodes.clear();
  s.lastAttribute = -1;
  s.lastAttributeValue = 0;
  s.capturing = false;
}

void fake_cuda_configure(int devices, int major, int minor, int sms,
                         int smemOptin) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.devices = devices;
  s.major = major;
  s.minor = minor;
  s.sms = sms;
  s.smemOptin = smemOptin;
}

void fake_cuda_set_init_result(int result) { state().initResult = result; }
void fake_cuda_set_param_info_available(int available) {
  state().paramInfo = available != 0;
}

int fake_cuda_calls(const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!name) {
    int total = 0;
    for (auto &c : s.calls)
      total += c.second;
    return total;
  }
  auto it = s.calls.find(name);
  return it == s.calls.end() ? 0 : it->second;
}

int fake_cuda_device_calls(void) { return state().deviceCalls; }
int fake_cuda_num_launches(void) {
  return static_cast<int>(state().launches.size());
}
const FakeLaunch *fake_cuda_launch(int i) { return &state().launches.at(i); }
int fake_cuda_num_encodes(void) {
  return static_cast<int>(state().encodes.size());
}
const FakeTensorMapEncode *fake_cuda_encode(int i) {
  return &state().encodes.at(i);
}
int fake_cuda_last_func_attribute(int *attribute, int *value) {
  *attribute = state().lastAttribute;
  *value = state().lastAttributeValue;
  return state().lastAttribute >= 0;
}
size_t fake_cuda_allocated_bytes(void) {
  size_t total = 0;
  for (auto &a : state().allocations)
    total += a.second;
  return total;
}
int fake_cuda_context_depth(void) { return state().contextDepth; }
void fake_cuda_register(void *ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().registered[reinterpret_cast<uintptr_t>(ptr)] = bytes;
}
void fake_cuda_set_kernel_impl(const char *name, FakeKernelImpl impl) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().impls[name] = impl;
}
const char *fake_cuda_trace(void) { return state().trace.c_str(); }
void fake_cuda_set_capturing(int capturing) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().capturing = capturing != 0;
}

//===--- driver entry points ---------------------------------------------===//

CUresult cuInit(unsigned int) {
  ENTER("cuInit", false);
  return static_cast<CUresult>(s.initResult);
}

CUresult cuDriverGetVersion(int *v) {
  ENTER("cuDriverGetVersion", false);
  *v = 13000;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult e, const char **out) {
  switch (e) {
  case CUDA_SUCCESS:
    *out = "CUDA_SUCCESS";
    break;
  case CUDA_ERROR_INVALID_VALUE:
    *out = "CUDA_ERROR_INVALID_VALUE";
    break;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *out = "CUDA_ERROR_OUT_OF_MEMORY";
    break;
  case CUDA_ERROR_NO_DEVICE:
    *out = "CUDA_ERROR_NO_DEVICE";
    break;
  case CUDA_ERROR_INVALID_IMAGE:
    *out = "CUDA_ERROR_INVALID_IMAGE";
    break;
  case CUDA_ERROR_NOT_FOUND:
    *out = "CUDA_ERROR_NOT_FOUND";
    break;
  default:
    *out = "CUDA_ERROR_FAKE";
    break;
  }
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult e, const char **out) {
  *out = e == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable device is detected"
                                   : "fake driver error";
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  ENTER("cuDeviceGetCount", false);
  *count = s.devices;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  ENTER("cuDeviceGet", false);
  if (ordinal < 0 || ordinal >= s.devices)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  ENTER("cuDeviceGetName", false);
  strncpy(name, "FLAMIA fake device", static_cast<size_t>(len));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute a, CUdevice) {
  ENTER("cuDeviceGetAttribute", false);
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = s.major;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = s.minor;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = s.sms;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = s.smemOptin;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    break;
  default:
    *value = 0;
    break;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  ENTER("cuDevicePrimaryCtxRetain", true);
  *ctx = reinterpret_cast<CUcontext>(&s.primaryContext);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
  ENTER("cuDevicePrimaryCtxRelease_v2", true);
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext) {
  ENTER("cuCtxPushCurrent_v2", true);
  s.contextDepth++;
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
  ENTER("cuCtxPopCurrent_v2", true);
  s.contextDepth--;
  if (ctx)
    *ctx = reinterpret_cast<CUcontext>(&s.primaryContext);
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize", true);
  FORBIDDEN_WHILE_CAPTURING();
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  ENTER("cuMemAlloc_v2", true);
  FORBIDDEN_WHILE_CAPTURING();
  if (bytes > (size_t{1} << 34))
    return CUDA_ERROR_OUT_OF_MEMORY;
  size_t rounded = (bytes + 255) / 256 * 256;
  void *p = aligned_alloc(256, rounded ? rounded : 256);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  memset(p, 0xCD, rounded ? rounded : 256); // "uninitialized"
  s.allocations[reinterpret_cast<uintptr_t>(p)] = bytes;
  *ptr = reinterpret_cast<uintptr_t>(p);
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  ENTER("cuMemFree_v2", true);
  FORBIDDEN_WHILE_CAPTURING();
  auto it = s.allocations.find(ptr);
  if (it == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  free(reinterpret_cast<void *>(ptr));
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}

static CUresult checkedCopy(void *dst, const void *src, size_t bytes) {
  if (bytes && (!dst || !src))
    return CUDA_ERROR_INVALID_VALUE;
  memcpy(dst, src, bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  ENTER("cuMemcpyHtoD_v2", true);
  FORBIDDEN_WHILE_CAPTURING();
  return checkedCopy(reinterpret_cast<void *>(dst), src, bytes);
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  ENTER("cuMemcpyDtoH_v2", true);
  FORBIDDEN_WHILE_CAPTURING();
  return checkedCopy(dst, reinterpret_cast<const void *>(src), bytes);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream) {
  ENTER("cuMemcpyHtoDAsync_v2", true);
  FORBIDDEN_WHILE_CAPTURING();
  return checkedCopy(reinterpret_cast<void *>(dst), src, bytes);
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream) {
  ENTER("cuMemcpyDtoHAsync_v2", true);
  FORBIDDEN_WHILE_CAPTURING();
  return checkedCopy(dst, reinterpret_cast<const void *>(src), bytes);
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                         CUstream) {
  ENTER("cuMemsetD8Async", true);
  memset(reinterpret_cast<void *>(dst), value, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n,
                          CUstream) {
  ENTER("cuMemsetD32Async", true);
  unsigned int *p = reinterpret_cast<unsigned int *>(dst);
  for (size_t i = 0; i < n; ++i)
    p[i] = value;
  return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr ptr) {
  ENTER("cuPointerGetAttribute", true);
  uintptr_t start;
  size_t size;
  if (!findRange(ptr, start, size))
    return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *static_cast<unsigned int *>(data) = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    *static_cast<int *>(data) = 0;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    *static_cast<CUdeviceptr *>(data) = start;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    *static_cast<size_t *>(data) = size;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  ENTER("cuStreamCreate", true);
  *stream = reinterpret_cast<CUstream>(&s.streamObject);
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream) {
  ENTER("cuStreamDestroy_v2", true);
  return CUDA_SUCCESS;
}
// Not in the trace or the call counts (the runtime asks before its device
// work; the traces of the tests stay those of the calls that do something).
CUresult cuStreamIsCapturing(CUstream, CUstreamCaptureStatus *status) {
  std::lock_guard<std::mutex> lock(state().mutex);
  State &s = state();
  *status = s.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                        : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) {
  ENTER("cuStreamSynchronize", true);
  FORBIDDEN_WHILE_CAPTURING();
  return CUDA_SUCCESS;
}
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int) {
  ENTER("cuStreamWaitEvent", true);
  FORBIDDEN_WHILE_CAPTURING();
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *event, unsigned int) {
  ENTER("cuEventCreate", true);
  *event = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent event) {
  ENTER("cuEventDestroy_v2", true);
  delete reinterpret_cast<int *>(event);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent event, CUstream) {
  ENTER("cuEventRecord", true);
  ++*reinterpret_cast<int *>(event);
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent) {
  ENTER("cuEventSynchronize", true);
  FORBIDDEN_WHILE_CAPTURING();
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime_v2(float *ms, CUevent, CUevent) {
  ENTER("cuEventElapsedTime_v2", true);
  *ms = 1.0f;
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  ENTER("cuModuleLoadData", true);
  const char *text = static_cast<const char *>(image);
  if (strncmp(text, "FAKECUBIN", 9) != 0) {
    // PTX (the driver JIT-compiles it): its .entry functions and the sizes
    // of their .param declarations.
    std::string ptx(text);
    if (ptx.find(".entry") == std::string::npos)
      return CUDA_ERROR_INVALID_IMAGE;
    FakeModule *m = new FakeModule();
    size_t pos = 0;
    while ((pos = ptx.find(".entry", pos)) != std::string::npos) {
      pos += 6;
      size_t open = ptx.find('(', pos), close = ptx.find(')', open);
      if (open == std::string::npos || close == std::string::npos)
        break;
      FakeFunction *f = new FakeFunction();
      std::istringstream nameIn(ptx.substr(pos, open - pos));
      nameIn >> f->name;
      std::istringstream params(ptx.substr(open + 1, close - open - 1));
      std::string decl;
      while (std::getline(params, decl, ',')) {
        if (decl.find(".param") == std::string::npos)
          continue;
        size_t bracket = decl.find('[');
        size_t size = 0;
        if (bracket != std::string::npos)
          size = std::stoul(decl.substr(bracket + 1));
        else if (decl.find("64") != std::string::npos)
          size = 8;
        else if (decl.find("32") != std::string::npos)
          size = 4;
        f->paramSizes.push_back(size);
      }
      m->functions.push_back(f);
      pos = close;
    }
    *module = reinterpret_cast<CUmodule>(m);
    return CUDA_SUCCESS;
  }
  FakeModule *m = new FakeModule();
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    if (word != "kernel")
      continue;
    FakeFunction *f = new FakeFunction();
    std::string sizes;
    words >> f->name >> sizes;
    if (sizes != "-") {
      std::istringstream list(sizes);
      std::string item;
      while (std::getline(list, item, ','))
        f->paramSizes.push_back(std::stoul(item));
    }
    while (words >> word) {
      if (word.compare(0, 12, "static_smem=") == 0)
        f->staticSmem = std::stoi(word.substr(12));
      else if (word.compare(0, 12, "max_threads=") == 0)
        f->maxThreads = std::stoi(word.substr(12));
    }
    m->functions.push_back(f);
  }
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  ENTER("cuModuleUnload", true);
  FakeModule *m = reinterpret_cast<FakeModule *>(module);
  for (FakeFunction *f : m->functions)
    delete f;
  delete m;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module,
                             const char *name) {
  ENTER("cuModuleGetFunction", true);
  FakeModule *m = reinterpret_cast<FakeModule *>(module);
  for (FakeFunction *f : m->functions)
    if (f->name == name) {
      *fn = reinterpret_cast<CUfunction>(f);
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute a, CUfunction fn) {
  ENTER("cuFuncGetAttribute", true);
  FakeFunction *f = reinterpret_cast<FakeFunction *>(fn);
  switch (a) {
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *value = f->staticSmem;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = f->maxThreads;
    break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *value = 32;
    break;
  default:
    *value = f->attributes.count(a) ? f->attributes[a] : 0;
    break;
  }
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute a, int value) {
  ENTER("cuFuncSetAttribute", true);
  FakeFunction *f = reinterpret_cast<FakeFunction *>(fn);
  f->attributes[a] = value;
  s.lastAttribute = a;
  s.lastAttributeValue = value;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction fn, size_t index, size_t *offset,
                            size_t *size) {
  ENTER("cuFuncGetParamInfo", false);
  if (!s.paramInfo)
    return CUDA_ERROR_NOT_SUPPORTED;
  FakeFunction *f = reinterpret_cast<FakeFunction *>(fn);
  if (index >= f->paramSizes.size())
    return CUDA_ERROR_INVALID_VALUE;
  size_t off = 0;
  for (size_t i = 0; i < index; ++i)
    off += f->paramSizes[i];
  *offset = off;
  *size = f->paramSizes[index];
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction fn,
                          void **params, void **extra) {
  FakeKernelImpl impl = nullptr;
  FakeLaunch launch;
  {
    ENTER("cuLaunchKernelEx", true);
    if (extra)
      return CUDA_ERROR_INVALID_VALUE;
    FakeFunction *f = reinterpret_cast<FakeFunction *>(fn);
    memset(&launch, 0, sizeof launch);
    strncpy(launch.kernel, f->name.c_str(), sizeof launch.kernel - 1);
    launch.grid[0] = config->gridDimX;
    launch.grid[1] = config->gridDimY;
    launch.grid[2] = config->gridDimZ;
    launch.block[0] = config->blockDimX;
    launch.block[1] = config->blockDimY;
    launch.block[2] = config->blockDimZ;
    launch.cluster[0] = launch.cluster[1] = launch.cluster[2] = 1;
    for (unsigned i = 0; i < config->numAttrs; ++i)
      if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
        launch.cluster[0] = config->attrs[i].value.clusterDim.x;
        launch.cluster[1] = config->attrs[i].value.clusterDim.y;
        launch.cluster[2] = config->attrs[i].value.clusterDim.z;
      }
    launch.sharedMemBytes = config->sharedMemBytes;
    launch.stream = config->hStream;
    int maxDynamic =
        f->attributes.count(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
            ? f->attributes[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES]
            : 48 * 1024;
    if (static_cast<int>(config->sharedMemBytes) > maxDynamic)
      return CUDA_ERROR_INVALID_VALUE; // as the driver does
    launch.numParams = static_cast<int>(f->paramSizes.size());
    for (int i = 0; i < launch.numParams && i < 32; ++i) {
      launch.paramSizes[i] = f->paramSizes[i];
      if (f->paramSizes[i] == 128 &&
          reinterpret_cast<uintptr_t>(params[i]) % 64 != 0)
        return CUDA_ERROR_MISALIGNED_ADDRESS;
      memcpy(launch.paramBytes[i], params[i], f->paramSizes[i]);
    }
    s.launches.push_back(launch);
    auto it = s.impls.find(f->name);
    if (it != s.impls.end())
      impl = it->second;
    else
      impl = fake_cuda_builtin_kernel(f->name.c_str());
  }
  if (impl)
    impl(&launch, params);
  return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType dataType, cuuint32_t rank,
    void *address, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
    const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  ENTER("cuTensorMapEncodeTiled", false);
  FakeTensorMapEncode e;
  memset(&e, 0, sizeof e);
  e.dataType = dataType;
  e.rank = rank;
  e.address = reinterpret_cast<uintptr_t>(address);
  e.globalDim[0] = globalDim[0];
  e.globalDim[1] = globalDim[1];
  e.globalStride = globalStrides[0];
  e.boxDim[0] = boxDim[0];
  e.boxDim[1] = boxDim[1];
  e.elementStrides[0] = elementStrides[0];
  e.elementStrides[1] = elementStrides[1];
  e.interleave = interleave;
  e.swizzle = swizzle;
  e.l2Promotion = l2;
  e.oobFill = oob;
  s.encodes.push_back(e);
  // The "descriptor": the encode record itself, so tests can read back from
  // the launch's parameter bytes what was encoded.
  memset(map, 0, sizeof *map);
  memcpy(map, &e, sizeof e < sizeof *map ? sizeof e : sizeof *map);
  return CUDA_SUCCESS;
}

} // extern "C"
