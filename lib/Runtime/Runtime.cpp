//===- Runtime.cpp - Run a manifest's kernels on packed attention ---------===//

#include "flamia/Runtime/Runtime.h"

#include "flamia/Support/Validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace flamia::runtime {

namespace {

std::string hexAddress(uint64_t address) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
  return buf;
}

bool product(std::initializer_list<int64_t> factors, int64_t &out) {
  out = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(out, f, &out))
      return false;
  return true;
}

struct NamedTensor {
  const char *name;
  CUdeviceptr address;
  uint64_t bytes;
  bool output;
  bool gradient = false; // the backward's: optional in the forward phase
};

// The backward's argument tensors, by buffer name: grad_o and dq have the
// query heads, dk and dv the kv heads.
struct GradientArgument {
  const char *name;
  CUdeviceptr AttentionArgs::*address;
  uint64_t ArgumentExtents::*bytes;
  bool kvHeads;
  bool output;
};
constexpr GradientArgument kGradientArguments[] = {
    {"grad_o", &AttentionArgs::gradO, &ArgumentExtents::gradO, false, false},
    {"dq", &AttentionArgs::dq, &ArgumentExtents::dq, false, true},
    {"dk", &AttentionArgs::dk, &ArgumentExtents::dk, true, true},
    {"dv", &AttentionArgs::dv, &ArgumentExtents::dv, true, true},
};

// Every argument tensor the manifest binds: the forward's six, then the
// gradients the manifest lists (extents of the others are 0).
std::vector<NamedTensor> argumentTensors(const Manifest &m,
                                         const AttentionArgs &a,
                                         const ArgumentExtents &e) {
  std::vector<NamedTensor> tensors = {
      {"q", a.q, e.q, false}, {"k", a.k, e.k, false},
      {"v", a.v, e.v, false}, {"cu_seqlens", a.cuSeqlens, e.cuSeqlens, false},
      {"o", a.o, e.o, true},  {"lse", a.lse, e.lse, true},
  };
  for (const GradientArgument &g : kGradientArguments)
    if (m.findBuffer(g.name) >= 0)
      tensors.push_back({g.name, a.*g.address, e.*g.bytes, g.output, true});
  return tensors;
}

} // namespace

Status effectiveSoftmaxScale(const Manifest &manifest,
                             const AttentionArgs &args, float &out) {
  const float s = args.softmaxScale;
  std::string error;
  if (s != 0.0f && !validation::validateSoftmaxScale(s, error))
    return invalidArgument(error + " (or 0 for the default)");
  if (manifest.hasSoftmaxScale) {
    if (s != 0.0f && s != manifest.softmaxScale) {
      char buf[256];
      snprintf(buf, sizeof buf,
               "softmax_scale %.9g differs from the %.9g the kernels were "
               "compiled with (manifest softmax_scale); pass 0 or %.9g",
               s, manifest.softmaxScale, manifest.softmaxScale);
      return invalidArgument(buf);
    }
    out = manifest.softmaxScale;
    return Status::success();
  }
  out = s != 0.0f ? s
                  : static_cast<float>(
                        1.0 / std::sqrt(static_cast<double>(args.headDim)));
  return Status::success();
}

Status validateAttentionArgs(const Manifest &manifest, const AttentionArgs &a,
                             ArgumentExtents *extentsOut, CallPhase phase) {
  if (a.numTokens < 0)
    return invalidArgument("T (num_tokens) is " + std::to_string(a.numTokens) +
                           "; it must be >= 0");
  if (a.numTokens > INT32_MAX)
    return invalidArgument("T (num_tokens) = " + std::to_string(a.numTokens) +
                           " exceeds 2^31 - 1 (cu_seqlens is int32)");
  if (a.numQHeads < 1 || a.numQHeads > 65535)
    return invalidArgument("Hq (num_q_heads) = " + std::to_string(a.numQHeads) +
                           " must be in [1, 65535]");
  if (a.numKVHeads < 1 || a.numKVHeads > a.numQHeads)
    return invalidArgument(
        "Hkv (num_kv_heads) = " + std::to_string(a.numKVHeads) +
        " must be in [1, Hq = " + std::to_string(a.numQHeads) + "]");
  if (a.numQHeads % a.numKVHeads != 0)
    return invalidArgument("Hq (" + std::to_string(a.numQHeads) +
                           ") is not a multiple of Hkv (" +
                           std::to_string(a.numKVHeads) + ")");
  if (a.headDim != manifest.headDim)
    return invalidArgument("head dim D = " + std::to_string(a.headDim) +
                           " but the kernels were compiled for head_dim " +
                           std::to_string(manifest.headDim));
  if (a.numDocs < 1)
    return invalidArgument("num_docs = " + std::to_string(a.numDocs) +
                           "; it must be >= 1 (cu_seqlens has num_docs + 1 "
                           "entries)");
  if (a.numDocs > INT32_MAX - 1)
    return invalidArgument("num_docs = " + std::to_string(a.numDocs) +
                           " exceeds 2^31 - 2");
  float scale;
  FLAMIA_RETURN_IF_ERROR(effectiveSoftmaxScale(manifest, a, scale));
  // The largest batch the kernels were validated on: a larger one is
  // rejected here, not run unchecked.
  std::string sizeError;
  if (!validation::validateProblemSize(a.numTokens, a.numQHeads, a.numKVHeads,
                                       a.headDim,
                                       validation::kMaxTensorElements,
                                       sizeError))
    return invalidArgument(sizeError);

  ArgumentExtents e;
  int64_t n;
  if (!product({a.numTokens, a.numQHeads, a.headDim, 2}, n))
    return invalidArgument("q/o byte size overflows int64");
  e.q = e.o = static_cast<uint64_t>(n);
  if (!product({a.numTokens, a.numKVHeads, a.headDim, 2}, n))
    return invalidArgument("k/v byte size overflows int64");
  e.k = e.v = static_cast<uint64_t>(n);
  if (!product({a.numTokens, a.numQHeads, 4}, n))
    return invalidArgument("lse byte size overflows int64");
  e.lse = static_cast<uint64_t>(n);
  e.cuSeqlens = static_cast<uint64_t>((a.numDocs + 1) * 4);
  for (const GradientArgument &g : kGradientArguments) {
    int index = manifest.findBuffer(g.name);
    if (index < 0)
      continue;
    // dq, dk, dv are bf16 or f32, as the manifest says.
    if (!product({a.numTokens, g.kvHeads ? a.numKVHeads : a.numQHeads,
                  a.headDim, dtypeBytes(manifest.buffers[index].dtype)},
                 n))
      return invalidArgument(std::string(g.name) +
                             " byte size overflows int64");
    e.*g.bytes = static_cast<uint64_t>(n);
  }

  const std::vector<NamedTensor> tensors = argumentTensors(manifest, a, e);
  for (const NamedTensor &t : tensors) {
    const bool isCu = !strcmp(t.name, "cu_seqlens");
    if (t.address == 0) {
      if (t.bytes > 0 && !(t.gradient && phase == CallPhase::Forward))
        return invalidArgument(std::string(t.name) + " is a null pointer (" +
                               std::to_string(t.bytes) + " bytes expected)");
      continue;
    }
    const uint64_t alignment = isCu ? 4 : 16;
    if (t.address % alignment != 0)
      return invalidArgument(std::string(t.name) + " (" +
                             hexAddress(t.address) + ") is not " +
                             std::to_string(alignment) + "-byte aligned");
  }
  // Outputs must not overlap any other tensor.
  for (const NamedTensor &out : tensors) {
    if (!out.output || out.bytes == 0 || out.address == 0)
      continue;
    for (const NamedTensor &other : tensors) {
      if (&other == &out || other.bytes == 0 || other.address == 0)
        continue;
      if (out.address < other.address + other.bytes &&
          other.address < out.address + out.bytes)
        return invalidArgument(std::string("output ") + out.name + " [" +
                               hexAddress(out.address) + ", +" +
                               std::to_string(out.bytes) + ") overlaps " +
                               other.name + " [" + hexAddress(other.address) +
                               ", +" + std::to_string(other.bytes) + ")");
    }
  }

  // The manifest's view of the caller's tensors must be what the arguments
  // describe.
  SymbolValues symbols;
  symbols.set(Symbol::T, a.numTokens);
  symbols.set(Symbol::Hq, a.numQHeads);
  symbols.set(Symbol::Hkv, a.numKVHeads);
  symbols.set(Symbol::D, a.headDim);
  symbols.set(Symbol::NumDocs, a.numDocs);
  for (const ManifestBuffer &b : manifest.buffers) {
    if (b.role != BufferRole::Input && b.role != BufferRole::Output)
      continue;
    std::vector<int64_t> expected;
    const char *layout = " is [T, Hq, D]";
    if (b.name == "q" || b.name == "o" || b.name == "grad_o" ||
        b.name == "dq") {
      expected = {a.numTokens, a.numQHeads, a.headDim};
    } else if (b.name == "k" || b.name == "v" || b.name == "dk" ||
               b.name == "dv") {
      expected = {a.numTokens, a.numKVHeads, a.headDim};
      layout = " is [T, Hkv, D]";
    } else if (b.name == "cu_seqlens") {
      expected = {a.numDocs + 1};
      layout = " is [num_docs + 1]";
    } else if (b.name == "lse") {
      expected = {a.numQHeads, a.numTokens};
      layout = " is [Hq, T]";
    }
    std::vector<int64_t> actual;
    for (const Expression &e : b.shape) {
      int64_t v;
      Status s = e.evaluate(symbols, v);
      if (!s.ok())
        return s.withContext("buffer '" + b.name + "'");
      actual.push_back(v);
    }
    if (actual != expected) {
      std::string text;
      for (const Expression &e : b.shape)
        text += (text.empty() ? "" : ", ") + e.text();
      return invalidArgument(
          "buffer '" + b.name + "': the manifest's shape [" + text + "] is " +
          shapeString(actual) + " but flamia_attention_args " + "describes " +
          shapeString(expected) + " (" + b.name + layout + ")");
    }
  }
  if (extentsOut)
    *extentsOut = e;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Creation and destruction
//===----------------------------------------------------------------------===//

Status AttentionRuntime::create(const std::string &artifactDir,
                                int deviceOrdinal,
                                const RuntimeOptions &options,
                                std::unique_ptr<AttentionRuntime> &out) {
  std::unique_ptr<AttentionRuntime> rt(new AttentionRuntime());
  rt->artifactDir_ = artifactDir;
  rt->options_ = options;
  FLAMIA_RETURN_IF_ERROR(loadManifest(artifactDir, rt->manifest_));
  FLAMIA_RETURN_IF_ERROR(CudaDriver::load(rt->driver_));
  const CudaDriver &d = *rt->driver_;

  CUresult r = d.init(0);
  if (r == CUDA_ERROR_STUB_LIBRARY)
    return Status::error(ErrorCode::DriverUnavailable,
                         "CUDA driver not available: " + d.libraryPath() +
                             " is the CUDA toolkit's stub library, not a "
                             "driver");
  if (r != CUDA_SUCCESS)
    return Status::error(ErrorCode::DeviceUnavailable,
                         "no usable CUDA device: cuInit failed: " +
                             d.errorString(r));
  d.driverGetVersion(&rt->device_.driverVersion);
  int count = 0;
  FLAMIA_RETURN_IF_ERROR(d.check(d.deviceGetCount(&count), "cuDeviceGetCount"));
  if (deviceOrdinal < 0 || deviceOrdinal >= count)
    return Status::error(ErrorCode::DeviceUnavailable,
                         "device ordinal " + std::to_string(deviceOrdinal) +
                             " is out of range (" + std::to_string(count) +
                             " CUDA device" + (count == 1 ? "" : "s") + ")");
  FLAMIA_RETURN_IF_ERROR(
      d.check(d.deviceGet(&rt->cuDevice_, deviceOrdinal), "cuDeviceGet"));
  DeviceInfo &info = rt->device_;
  info.ordinal = deviceOrdinal;
  char name[256] = {0};
  d.deviceGetName(name, sizeof name - 1, rt->cuDevice_);
  info.name = name;
  struct {
    CUdevice_attribute attribute;
    int *dst;
    const char *what;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.computeMajor,
       "COMPUTE_CAPABILITY_MAJOR"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.computeMinor,
       "COMPUTE_CAPABILITY_MINOR"},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.numSms,
       "MULTIPROCESSOR_COUNT"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &info.limits.maxSharedMemoryOptin, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
       &info.limits.maxThreadsPerBlock, "MAX_THREADS_PER_BLOCK"},
  };
  for (auto &a : attributes)
    FLAMIA_RETURN_IF_ERROR(
        d.check(d.deviceGetAttribute(a.dst, a.attribute, rt->cuDevice_),
                std::string("cuDeviceGetAttribute(") + a.what + ")"));
  std::string why;
  if (!targetRunsOn(rt->manifest_.target, info.computeMajor, info.computeMinor,
                    why))
    return Status::error(ErrorCode::DeviceUnavailable,
                         "device " + std::to_string(deviceOrdinal) + " (" +
                             info.name + "): " + why);

  FLAMIA_RETURN_IF_ERROR(
      d.check(d.primaryCtxRetain(&rt->context_, rt->cuDevice_),
              "cuDevicePrimaryCtxRetain"));
  rt->contextRetained_ = true;
  ScopedContext scope(d, rt->context_);
  FLAMIA_RETURN_IF_ERROR(scope.status());
  FLAMIA_RETURN_IF_ERROR(
      rt->modules_.load(d, artifactDir, rt->manifest_, info.limits));
  FLAMIA_RETURN_IF_ERROR(
      d.check(d.eventCreate(&rt->lastLaunch_, CU_EVENT_DISABLE_TIMING),
              "cuEventCreate"));
  out = std::move(rt);
  return Status::success();
}

AttentionRuntime::~AttentionRuntime() {
  if (!driver_)
    return;
  const CudaDriver &d = *driver_;
  if (context_) {
    ScopedContext scope(d, context_);
    if (scope.status().ok()) {
      if (lastLaunch_ && lastLaunchRecorded_)
        d.eventSynchronize(lastLaunch_);
      arena_.release(d);
      modules_.unload(d);
      if (lastLaunch_)
        d.eventDestroy(lastLaunch_);
    }
  }
  if (contextRetained_)
    d.primaryCtxRelease(cuDevice_);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Status AttentionRuntime::checkDevicePointer(const char *name, CUdeviceptr ptr,
                                            uint64_t bytes) const {
  if (ptr == 0 || bytes == 0)
    return Status::success();
  const CudaDriver &d = *driver_;
  unsigned int memoryType = 0;
  CUresult r =
      d.pointerGetAttribute(&memoryType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
  if (r != CUDA_SUCCESS)
    return invalidArgument(std::string(name) + " (" + hexAddress(ptr) +
                           ") is not memory known to CUDA (" +
                           d.errorString(r) + "); pass a device pointer");
  if (memoryType == CU_MEMORYTYPE_HOST)
    return invalidArgument(std::string(name) + " (" + hexAddress(ptr) +
                           ") points to host memory; pass a device pointer");
  int ordinal = -1;
  if (d.pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                            ptr) == CUDA_SUCCESS &&
      ordinal >= 0 && ordinal != device_.ordinal)
    return invalidArgument(std::string(name) + " (" + hexAddress(ptr) +
                           ") is memory of device " + std::to_string(ordinal) +
                           " but the runtime runs on device " +
                           std::to_string(device_.ordinal));
  CUdeviceptr start = 0;
  size_t size = 0;
  if (d.pointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                            ptr) == CUDA_SUCCESS &&
      d.pointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr) ==
          CUDA_SUCCESS &&
      size > 0) {
    const uint64_t available = start + size - ptr;
    if (bytes > available)
      return invalidArgument(
          std::string(name) + " needs " + std::to_string(bytes) +
          " bytes from " + hexAddress(ptr) + " but its allocation [" +
          hexAddress(start) + ", +" + std::to_string(size) + ") holds only " +
          std::to_string(available) + " from there");
  }
  return Status::success();
}

Status AttentionRuntime::prepare(const AttentionArgs &args, CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  prepared_ = false;
  forwardCurrent_ = false;
  noForwardReason_ = "the last call on this runtime was prepare, not a "
                     "forward phase";
  Status s = prepareLocked(args, stream, CallPhase::All);
  prepared_ = s.ok();
  return s;
}

Status AttentionRuntime::readCuSeqlens(const AttentionArgs &args,
                                       CUstream stream, bool capturing,
                                       std::vector<int32_t> &cu) const {
  cu.assign(static_cast<size_t>(args.numDocs + 1), 0);
  if (args.cuSeqlensHost) {
    std::copy(args.cuSeqlensHost, args.cuSeqlensHost + cu.size(), cu.begin());
    return Status::success();
  }
  if (capturing)
    return invalidArgument(
        "cu_seqlens would be read from the device, which a CUDA graph "
        "capture does not allow: pass its values on the host too "
        "(cu_seqlens_host)");
  const CudaDriver &d = *driver_;
  FLAMIA_RETURN_IF_ERROR(
      d.check(d.memcpyDtoHAsync(cu.data(), args.cuSeqlens,
                                cu.size() * sizeof(int32_t), stream),
              "copying cu_seqlens to the host"));
  return d.check(d.streamSynchronize(stream),
                 "cuStreamSynchronize (reading cu_seqlens)");
}

Status AttentionRuntime::prepareLocked(const AttentionArgs &args,
                                       CUstream stream, CallPhase phase) {
  const CudaDriver &d = *driver_;
  const Manifest &m = manifest_;
  // 1. Everything that can be checked without the device.
  ArgumentExtents extents;
  FLAMIA_RETURN_IF_ERROR(validateAttentionArgs(m, args, &extents, phase));
  FLAMIA_RETURN_IF_ERROR(effectiveSoftmaxScale(m, args, scalars_.softmaxScale));
  scalars_.softmaxScaleLog2 = static_cast<float>(
      static_cast<double>(scalars_.softmaxScale) * 1.4426950408889634);

  ScopedContext scope(d, context_);
  FLAMIA_RETURN_IF_ERROR(scope.status());

  // 2. The pointers are device memory holding the whole tensors.
  if (options_.checkDevicePointers) {
    for (const NamedTensor &t : argumentTensors(m, args, extents))
      FLAMIA_RETURN_IF_ERROR(checkDevicePointer(t.name, t.address, t.bytes));
  }

  // 3. cu_seqlens: the caller's host copy, or as the caller's stream has it.
  const bool capturing = d.capturing(stream);
  std::vector<int32_t> cu;
  FLAMIA_RETURN_IF_ERROR(readCuSeqlens(args, stream, capturing, cu));
  {
    std::string error;
    if (!validation::validateCuSeqlens(cu.data(), cu.size(), args.numTokens,
                                       error))
      return invalidArgument(error);
  }
  cuHost_ = cu;

  // 4. Schedule and symbols.
  FLAMIA_RETURN_IF_ERROR(buildScheduleContents(
      m, cu, static_cast<int32_t>(args.numQHeads),
      static_cast<int32_t>(args.numKVHeads), options_.checkSchedule, schedule_,
      options_.scheduleOrder));
  symbols_ = SymbolValues();
  symbols_.set(Symbol::T, args.numTokens);
  symbols_.set(Symbol::Hq, args.numQHeads);
  symbols_.set(Symbol::Hkv, args.numKVHeads);
  symbols_.set(Symbol::D, args.headDim);
  symbols_.set(Symbol::NumDocs, args.numDocs);
  symbols_.set(Symbol::NB, schedule_.numBlocks);
  symbols_.set(Symbol::NumSms, device_.numSms);
  if (schedule_.hasItems)
    symbols_.set(Symbol::NumItems,
                 static_cast<int64_t>(schedule_.items.size()));
  else
    symbols_.setUnavailableReason(Symbol::NumItems,
                                  "the manifest has no \"schedule\"");
  if (schedule_.hasKvItems)
    symbols_.set(Symbol::NumKvItems,
                 static_cast<int64_t>(schedule_.kvItems.size()));
  else
    symbols_.setUnavailableReason(Symbol::NumKvItems,
                                  "the manifest has no \"kv_items\" buffer");

  // 5. Buffers: sizes, schedule buffer sizes, the arena.
  FLAMIA_RETURN_IF_ERROR(planBuffers(m, symbols_, plan_));
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    if (b.role != BufferRole::Schedule)
      continue;
    uint64_t need = 0;
    std::string what;
    if (b.name == kBlockInfoBuffer) {
      need = schedule_.blockInfo.size() * sizeof(int32_t);
      what = "NB x 2 int32";
    } else if (b.name == kItemsBuffer) {
      need = schedule_.items.size() * sizeof(VarlenWorkItem);
      what = "NUM_ITEMS x 8 int32";
    } else if (b.name == kKvItemsBuffer) {
      need = schedule_.kvItems.size() * sizeof(VarlenWorkItem);
      what = "NUM_KV_ITEMS x 8 int32";
    } else {
      need = sizeof(int32_t);
      what = "one int32";
    }
    const bool ok = b.name == kCounterBuffer ? plan_.bytes[i] >= need
                                             : plan_.bytes[i] == need;
    if (!ok)
      return invalidManifest("schedule buffer '" + b.name + "' has shape " +
                             shapeString(plan_.shapes[i]) + " (" +
                             std::to_string(plan_.bytes[i]) +
                             " bytes) but it holds " + what + " = " +
                             std::to_string(need) + " bytes");
  }
  if (plan_.arenaBytes > arena_.capacity()) {
    if (capturing)
      return invalidArgument(
          "the workspace must grow to " + std::to_string(plan_.arenaBytes) +
          " bytes (it has " + std::to_string(arena_.capacity()) +
          "), which a CUDA graph capture does not allow: run the same call "
          "once before capturing it");
    uploaded_.clear();
    if (lastLaunchRecorded_)
      FLAMIA_RETURN_IF_ERROR(d.check(d.eventSynchronize(lastLaunch_),
                                     "waiting for the previous call"));
    FLAMIA_RETURN_IF_ERROR(arena_.reserve(d, plan_.arenaBytes));
  }
  bound_.assign(m.buffers.size(), BoundBuffer{});
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    BoundBuffer &bb = bound_[i];
    bb.bytes = plan_.bytes[i];
    if (plan_.offsets[i] != kNotInArena) {
      bb.address = arena_.base() + plan_.offsets[i];
      continue;
    }
    if (b.name == "q")
      bb.address = args.q;
    else if (b.name == "k")
      bb.address = args.k;
    else if (b.name == "v")
      bb.address = args.v;
    else if (b.name == "cu_seqlens")
      bb.address = args.cuSeqlens;
    else if (b.name == "o")
      bb.address = args.o;
    else if (b.name == "lse")
      bb.address = args.lse;
    for (const GradientArgument &g : kGradientArguments)
      if (b.name == g.name)
        bb.address = args.*g.address;
  }

  // 6. Device writes, ordered after the previous call's kernels. A capture
  // cannot wait on an event recorded outside it: a call is captured after the
  // caller has synchronized (as torch.cuda.graph does).
  if (lastLaunchRecorded_ && !capturing)
    FLAMIA_RETURN_IF_ERROR(d.check(d.streamWaitEvent(stream, lastLaunch_, 0),
                                   "cuStreamWaitEvent (previous call)"));
  if (options_.zeroWorkspace && plan_.arenaBytes > 0) {
    uploaded_.clear();
    FLAMIA_RETURN_IF_ERROR(
        d.check(d.memsetD8Async(arena_.base(), 0, plan_.arenaBytes, stream),
                "zeroing the workspace"));
  }
  uploaded_.resize(m.buffers.size());
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    if (b.role != BufferRole::Schedule || plan_.bytes[i] == 0)
      continue;
    const void *src = nullptr;
    if (b.name == kBlockInfoBuffer)
      src = schedule_.blockInfo.data();
    else if (b.name == kItemsBuffer)
      src = schedule_.items.data();
    else if (b.name == kKvItemsBuffer)
      src = schedule_.kvItems.data();
    if (!src)
      continue;
    const auto *bytes = static_cast<const uint8_t *>(src);
    auto &up = uploaded_[i];
    const bool onDevice = up.first == bound_[i].address &&
                          up.second.size() == plan_.bytes[i] &&
                          std::equal(up.second.begin(), up.second.end(), bytes);
    if (capturing) {
      // The graph would copy from this host memory at every replay (and a
      // copy from pageable memory cannot be captured): the device must
      // already hold this schedule.
      if (!onDevice)
        return invalidArgument(
            "schedule buffer '" + b.name +
            "' differs from what the device holds (another cu_seqlens or "
            "another call since), and a CUDA graph capture cannot upload it: "
            "run the same call once before capturing it");
      continue;
    }
    FLAMIA_RETURN_IF_ERROR(d.check(
        d.memcpyHtoDAsync(bound_[i].address, src, plan_.bytes[i], stream),
        "uploading schedule buffer '" + b.name + "'"));
    up.first = bound_[i].address;
    up.second.assign(bytes, bytes + plan_.bytes[i]);
  }

  // 7. Launch plans. With T = 0 there is nothing to compute (every output is
  // empty): no kernel runs.
  // In the forward phase the backward's kernels are packed by runBackward
  // (their gradient pointers may not exist yet).
  launches_.assign(m.kernels.size(), KernelLaunch{});
  packed_.assign(m.kernels.size(), false);
  emptyCall_ = args.numTokens == 0;
  if (emptyCall_)
    return Status::success();
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (phase != CallPhase::Forward ||
        m.kernels[k].phase == KernelPhase::Forward)
      FLAMIA_RETURN_IF_ERROR(packKernelLocked(k));
  return Status::success();
}

Status AttentionRuntime::packKernelLocked(size_t k) {
  const CudaDriver &d = *driver_;
  const Manifest &m = manifest_;
  const int counter = m.findBuffer(kCounterBuffer);
  TensorMapEncoder encoder = [&d](const TensorMapRequest &r, CUtensorMap &map) {
    return encodeTensorMap(d, r, map);
  };
  packed_[k] = false;
  KernelLaunch launch;
  launch.kernel = &m.kernels[k];
  launch.function = modules_.kernels()[k].function;
  FLAMIA_RETURN_IF_ERROR(evaluateGrid(m.kernels[k], symbols_, launch.grid));
  FLAMIA_RETURN_IF_ERROR(packKernelParams(m, k, bound_, symbols_, scalars_,
                                          encoder, launch.params));
  if (counter >= 0 && m.kernelUsesBuffer(k, counter))
    launch.counter = bound_[counter].address;
  launches_[k] = std::move(launch);
  packed_[k] = true;
  return Status::success();
}

Status AttentionRuntime::launch(size_t first, size_t count, CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  return launchLocked(first, count, stream);
}

Status AttentionRuntime::launchLocked(size_t first, size_t count,
                                      CUstream stream) {
  if (!prepared_)
    return invalidArgument("launch without a successful prepare");
  if (first > manifest_.kernels.size() ||
      count > manifest_.kernels.size() - first)
    return invalidArgument("kernels [" + std::to_string(first) + ", " +
                           std::to_string(first + count) +
                           ") out of range: the manifest has " +
                           std::to_string(manifest_.kernels.size()));
  const CudaDriver &d = *driver_;
  ScopedContext scope(d, context_);
  FLAMIA_RETURN_IF_ERROR(scope.status());
  if (!emptyCall_) {
    for (size_t k = first; k < first + count; ++k)
      if (!packed_[k])
        return invalidArgument(
            "kernel '" + manifest_.kernels[k].name +
            "' is not prepared: the forward phase (runForward) binds only "
            "the forward's kernels; run the backward phase (runBackward) "
            "first");
    for (size_t k = first; k < first + count; ++k) {
      FLAMIA_RETURN_IF_ERROR(launchKernel(d, launches_[k], stream));
      if (options_.syncAfterEachKernel && !launches_[k].grid.empty())
        FLAMIA_RETURN_IF_ERROR(
            d.check(d.streamSynchronize(stream),
                    "kernel '" + manifest_.kernels[k].name + "'"));
    }
  }
  // An event recorded in a capture cannot order work outside it: the
  // caller orders replays (the runtime's next call waits on nothing).
  if (d.capturing(stream)) {
    lastLaunchRecorded_ = false;
    return Status::success();
  }
  FLAMIA_RETURN_IF_ERROR(
      d.check(d.eventRecord(lastLaunch_, stream), "cuEventRecord"));
  lastLaunchRecorded_ = true;
  return Status::success();
}

Status AttentionRuntime::forward(const AttentionArgs &args, CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  prepared_ = false;
  forwardCurrent_ = false;
  noForwardReason_ = "the last call on this runtime was forward (every "
                     "kernel), not a forward phase";
  Status s = prepareLocked(args, stream, CallPhase::All);
  prepared_ = s.ok();
  if (!s.ok())
    return s;
  return launchLocked(0, manifest_.kernels.size(), stream);
}

Status AttentionRuntime::launchPhaseLocked(KernelPhase phase,
                                           CUstream stream) {
  const CudaDriver &d = *driver_;
  ScopedContext scope(d, context_);
  FLAMIA_RETURN_IF_ERROR(scope.status());
  if (!emptyCall_) {
    for (size_t k = 0; k < manifest_.kernels.size(); ++k) {
      if (manifest_.kernels[k].phase != phase)
        continue;
      if (!packed_[k])
        return Status::error(ErrorCode::Internal,
                             "kernel '" + manifest_.kernels[k].name +
                                 "' was not packed");
      FLAMIA_RETURN_IF_ERROR(launchKernel(d, launches_[k], stream));
      if (options_.syncAfterEachKernel && !launches_[k].grid.empty())
        FLAMIA_RETURN_IF_ERROR(
            d.check(d.streamSynchronize(stream),
                    "kernel '" + manifest_.kernels[k].name + "'"));
    }
  }
  // An event recorded in a capture cannot order work outside it: the
  // caller orders replays (the runtime's next call waits on nothing).
  if (d.capturing(stream)) {
    lastLaunchRecorded_ = false;
    return Status::success();
  }
  FLAMIA_RETURN_IF_ERROR(
      d.check(d.eventRecord(lastLaunch_, stream), "cuEventRecord"));
  lastLaunchRecorded_ = true;
  return Status::success();
}

Status AttentionRuntime::runForward(const AttentionArgs &args,
                                    CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  prepared_ = false;
  forwardCurrent_ = false;
  noForwardReason_ = "the last forward phase on this runtime failed";
  Status s = prepareLocked(args, stream, CallPhase::Forward);
  prepared_ = s.ok();
  if (!s.ok())
    return s;
  FLAMIA_RETURN_IF_ERROR(launchPhaseLocked(KernelPhase::Forward, stream));
  forwardCurrent_ = true;
  forwardArgs_ = args;
  return Status::success();
}

bool AttentionRuntime::forwardPhaseCurrent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return forwardCurrent_;
}

// "The same call" as the forward phase's: what the backward reads was written
// or bound by the forward (the quantized copies of q, k, v in the workspace,
// the schedule built from cu_seqlens, o and lse, the kernels' parameters), so
// every size, the softmax scale and the pointer of every forward tensor must
// be the forward's. The gradients (grad_o, dq, dk, dv) are the backward's
// own. cu_seqlens' contents are compared after reading them again.
Status AttentionRuntime::sameForwardCall(const AttentionArgs &a) const {
  const AttentionArgs &f = forwardArgs_;
  const char *hint = "; the backward phase reads the forward phase's "
                     "workspace and must be given the forward's call";
  struct {
    const char *name;
    int64_t now, then;
  } sizes[] = {{"T (num_tokens)", a.numTokens, f.numTokens},
               {"Hq (num_q_heads)", a.numQHeads, f.numQHeads},
               {"Hkv (num_kv_heads)", a.numKVHeads, f.numKVHeads},
               {"head dim D", a.headDim, f.headDim},
               {"num_docs", a.numDocs, f.numDocs}};
  for (const auto &x : sizes)
    if (x.now != x.then)
      return invalidArgument(std::string("backward: ") + x.name + " = " +
                             std::to_string(x.now) +
                             " but the forward phase ran with " +
                             std::to_string(x.then) + hint);
  struct {
    const char *name;
    CUdeviceptr now, then;
  } pointers[] = {{"q", a.q, f.q},
                  {"k", a.k, f.k},
                  {"v", a.v, f.v},
                  {"cu_seqlens", a.cuSeqlens, f.cuSeqlens},
                  {"o", a.o, f.o},
                  {"lse", a.lse, f.lse}};
  for (const auto &x : pointers)
    if (x.now != x.then)
      return invalidArgument(std::string("backward: ") + x.name + " (" +
                             hexAddress(x.now) +
                             ") is not the forward phase's " + x.name + " (" +
                             hexAddress(x.then) + ")" + hint);
  float scale = 0.0f;
  FLAMIA_RETURN_IF_ERROR(effectiveSoftmaxScale(manifest_, a, scale));
  if (scale != scalars_.softmaxScale) {
    char buf[160];
    snprintf(buf, sizeof buf,
             "backward: softmax scale %.9g but the forward phase ran with "
             "%.9g",
             scale, scalars_.softmaxScale);
    return invalidArgument(buf + std::string(hint));
  }
  return Status::success();
}

Status AttentionRuntime::runBackward(const AttentionArgs &args,
                                     CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  const CudaDriver &d = *driver_;
  const Manifest &m = manifest_;
  if (!m.hasBackward())
    return invalidArgument("backward: the manifest has no backward kernels "
                           "(no \"phase\": \"backward\")");
  if (!forwardCurrent_ || !prepared_)
    return invalidArgument("backward without its forward: " +
                           noForwardReason_ +
                           "; run the forward phase of the same call on this "
                           "runtime first (the backward reads its workspace, "
                           "o and lse)");
  ArgumentExtents extents;
  FLAMIA_RETURN_IF_ERROR(
      validateAttentionArgs(m, args, &extents, CallPhase::Backward));
  FLAMIA_RETURN_IF_ERROR(sameForwardCall(args));

  ScopedContext scope(d, context_);
  FLAMIA_RETURN_IF_ERROR(scope.status());
  if (options_.checkDevicePointers)
    for (const NamedTensor &t : argumentTensors(m, args, extents))
      if (t.gradient)
        FLAMIA_RETURN_IF_ERROR(checkDevicePointer(t.name, t.address, t.bytes));

  // cu_seqlens must still hold what the forward read: the schedule, the
  // workspace's extents and the forward's outputs follow from it.
  const bool capturing = d.capturing(stream);
  std::vector<int32_t> cu;
  FLAMIA_RETURN_IF_ERROR(readCuSeqlens(args, stream, capturing, cu));
  for (size_t i = 0; i < cu.size(); ++i)
    if (cu[i] != cuHost_[i])
      return invalidArgument(
          "backward: cu_seqlens differs from the forward phase's: "
          "cu_seqlens[" +
          std::to_string(i) + "] = " + std::to_string(cu[i]) +
          " but the forward read " + std::to_string(cuHost_[i]) +
          "; the backward phase reads the forward phase's workspace and "
          "schedule and must be given the forward's call");

  // Bind the gradients and pack the backward's kernels.
  for (size_t i = 0; i < m.buffers.size(); ++i)
    for (const GradientArgument &g : kGradientArguments)
      if (m.buffers[i].name == g.name && plan_.offsets[i] == kNotInArena)
        bound_[i].address = args.*g.address;
  if (!emptyCall_)
    for (size_t k = 0; k < m.kernels.size(); ++k)
      if (m.kernels[k].phase == KernelPhase::Backward)
        FLAMIA_RETURN_IF_ERROR(packKernelLocked(k));
  if (lastLaunchRecorded_ && !capturing)
    FLAMIA_RETURN_IF_ERROR(d.check(d.streamWaitEvent(stream, lastLaunch_, 0),
                                   "cuStreamWaitEvent (the forward phase)"));
  return launchPhaseLocked(KernelPhase::Backward, stream);
}

Status AttentionRuntime::buffer(const std::string &name,
                                BufferView &out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!prepared_)
    return Status::error(ErrorCode::NotFound,
                         "no prepared call: buffers are bound by prepare or "
                         "forward");
  int i = manifest_.findBuffer(name);
  if (i < 0) {
    std::string names;
    for (const ManifestBuffer &b : manifest_.buffers)
      names += (names.empty() ? "" : ", ") + b.name;
    return Status::error(ErrorCode::NotFound, "no buffer '" + name +
                                                  "' in the manifest (" +
                                                  names + ")");
  }
  const ManifestBuffer &b = manifest_.buffers[i];
  out.name = b.name;
  out.role = b.role;
  out.dtype = b.dtype;
  out.shape = plan_.shapes[i];
  out.address = bound_[i].address;
  out.bytes = bound_[i].bytes;
  return Status::success();
}

} // namespace flamia::runtime
