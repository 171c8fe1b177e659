//===- Runtime.cpp - C API of the FLAMIA runtime --------------------------===//

#include "flamia/CAPI/Runtime.h"

#include "flamia/Runtime/Runtime.h"

#include "StructSize.h"

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

using namespace flamia::runtime;

struct flamia_runtime {
  std::unique_ptr<AttentionRuntime> impl;
};

static_assert(
    static_cast<int>(ErrorCode::InvalidArgument) ==
            FLAMIA_STATUS_INVALID_ARGUMENT &&
        static_cast<int>(ErrorCode::DriverUnavailable) ==
            FLAMIA_STATUS_DRIVER_UNAVAILABLE &&
        static_cast<int>(ErrorCode::DeviceUnavailable) ==
            FLAMIA_STATUS_DEVICE_UNAVAILABLE &&
        static_cast<int>(ErrorCode::InvalidManifest) ==
            FLAMIA_STATUS_INVALID_MANIFEST &&
        static_cast<int>(ErrorCode::InvalidArtifact) ==
            FLAMIA_STATUS_INVALID_ARTIFACT &&
        static_cast<int>(ErrorCode::CudaError) == FLAMIA_STATUS_CUDA_ERROR &&
        static_cast<int>(ErrorCode::OutOfMemory) ==
            FLAMIA_STATUS_OUT_OF_MEMORY &&
        static_cast<int>(ErrorCode::NotFound) == FLAMIA_STATUS_NOT_FOUND &&
        static_cast<int>(ErrorCode::Internal) == FLAMIA_STATUS_INTERNAL,
    "flamia_status mirrors ErrorCode");

namespace {

thread_local std::string lastError;

flamia_status record(const Status &s) {
  if (s.ok())
    return FLAMIA_STATUS_OK;
  lastError = s.message;
  return static_cast<flamia_status>(s.code);
}

flamia_status fail(ErrorCode code, const std::string &message) {
  return record(Status::error(code, message));
}

/// A caller's struct of `size` bytes, this library's being `known` bytes:
/// too small is an error; extra bytes must be zero (fields this version does
/// not know, left unset).
Status checkStructSize(const void *s, size_t size, size_t known,
                       const char *what) {
  if (size < known)
    return invalidArgument(std::string(what) + ".struct_size is " +
                           std::to_string(size) + ", less than " +
                           std::to_string(known) +
                           " (call the _init function first)");
  if (!flamia::capi::tailIsZero(s, size, known))
    return invalidArgument(std::string(what) +
                           " has fields this library (ABI version " +
                           std::to_string(FLAMIA_RUNTIME_ABI_VERSION) +
                           ") does not know, set to non-zero values");
  return Status::success();
}

CUdeviceptr devicePointer(const void *p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

// Version 1 (up to softmax_scale) was 88 bytes on LP64, and grad_o starts
// right there: a version-1 struct is the prefix of this one.
static_assert(sizeof(void *) != 8 || FLAMIA_ATTENTION_ARGS_SIZE_V1 == 88,
              "grad_o must start where version 1 of flamia_attention_args "
              "ended");

Status convertArgs(const flamia_attention_args *args, AttentionArgs &out) {
  if (!args)
    return invalidArgument("args is NULL");
  // A caller built against the header of version 1 (before grad_o, dq, dk,
  // dv) passes FLAMIA_ATTENTION_ARGS_SIZE_V1, one of version 2 (before
  // cu_seqlens_host) FLAMIA_ATTENTION_ARGS_SIZE_V2: those bytes are read, the
  // rest is zero. Sizes between the versions are not a struct of any version.
  const size_t size = args->struct_size;
  if (size != FLAMIA_ATTENTION_ARGS_SIZE_V1 &&
      size != FLAMIA_ATTENTION_ARGS_SIZE_V2)
    FLAMIA_RETURN_IF_ERROR(checkStructSize(args, size,
                                           sizeof(flamia_attention_args),
                                           "flamia_attention_args"));
  flamia_attention_args copy;
  memset(&copy, 0, sizeof copy);
  memcpy(&copy, args, size < sizeof copy ? size : sizeof copy);
  const flamia_attention_args *a = &copy;
  out.q = devicePointer(a->q);
  out.k = devicePointer(a->k);
  out.v = devicePointer(a->v);
  out.cuSeqlens = devicePointer(a->cu_seqlens);
  out.o = devicePointer(a->o);
  out.lse = devicePointer(a->lse);
  out.gradO = devicePointer(a->grad_o);
  out.dq = devicePointer(a->dq);
  out.dk = devicePointer(a->dk);
  out.dv = devicePointer(a->dv);
  out.numTokens = a->num_tokens;
  out.numQHeads = a->num_q_heads;
  out.numKVHeads = a->num_kv_heads;
  out.headDim = a->head_dim;
  out.numDocs = a->num_docs;
  out.softmaxScale = a->softmax_scale;
  out.cuSeqlensHost = a->cu_seqlens_host;
  return Status::success();
}

/// The calls that take attention arguments: a null runtime or arguments
/// that do not convert fail with their message; else `call` on the runtime.
flamia_status callWithArgs(flamia_runtime *rt, const flamia_attention_args *args,
                           flamia_stream stream,
                           Status (AttentionRuntime::*call)(const AttentionArgs &,
                                                            CUstream)) {
  if (!rt)
    return fail(ErrorCode::InvalidArgument, "runtime is NULL");
  AttentionArgs a;
  Status s = convertArgs(args, a);
  if (!s.ok())
    return record(s);
  return record(((*rt->impl).*call)(a, static_cast<CUstream>(stream)));
}

} // namespace

extern "C" {

int flamia_runtime_abi_version(void) { return FLAMIA_RUNTIME_ABI_VERSION; }

const char *flamia_status_string(flamia_status status) {
  if (status < FLAMIA_STATUS_OK || status > FLAMIA_STATUS_INTERNAL)
    return "unknown status";
  return errorCodeString(static_cast<ErrorCode>(status));
}

const char *flamia_last_error(void) { return lastError.c_str(); }

void flamia_runtime_options_init(flamia_runtime_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->check_device_pointers = 1;
}

void flamia_attention_args_init(flamia_attention_args *args) {
  if (!args)
    return;
  memset(args, 0, sizeof *args);
  args->struct_size = sizeof *args;
}

flamia_status
flamia_runtime_create_with_options(const char *artifact_dir, int device_ordinal,
                                   const flamia_runtime_options *options,
                                   flamia_runtime **out, char *err,
                                   size_t errlen) {
  auto finish = [&](flamia_status status) {
    if (err && errlen > 0) {
      const std::string &message =
          status == FLAMIA_STATUS_OK ? std::string() : lastError;
      size_t n = message.size() < errlen - 1 ? message.size() : errlen - 1;
      memcpy(err, message.data(), n);
      err[n] = '\0';
    }
    return status;
  };
  if (!out)
    return finish(fail(ErrorCode::InvalidArgument, "out is NULL"));
  *out = nullptr;
  if (!artifact_dir)
    return finish(fail(ErrorCode::InvalidArgument, "artifact_dir is NULL"));
  RuntimeOptions opts;
  if (options) {
    // Version 1 (before schedule_order) is a prefix of this struct.
    const size_t size = options->struct_size;
    if (size != FLAMIA_RUNTIME_OPTIONS_SIZE_V1) {
      Status s = checkStructSize(options, size, sizeof(flamia_runtime_options),
                                 "flamia_runtime_options");
      if (!s.ok())
        return finish(record(s));
    }
    flamia_runtime_options o;
    memset(&o, 0, sizeof o);
    memcpy(&o, options, size < sizeof o ? size : sizeof o);
    opts.zeroWorkspace = o.zero_workspace != 0;
    opts.syncAfterEachKernel = o.sync_after_each_kernel != 0;
    opts.checkSchedule = o.check_schedule != 0;
    opts.checkDevicePointers = o.check_device_pointers != 0;
    switch (o.schedule_order) {
    case 0:
      break;
    case FLAMIA_SCHEDULE_ORDER_LPT:
      opts.scheduleOrder = flamia::ScheduleOrder::LongestFirst;
      break;
    case FLAMIA_SCHEDULE_ORDER_L2_SECTIONS:
      opts.scheduleOrder = flamia::ScheduleOrder::L2Sections;
      break;
    default:
      return finish(fail(ErrorCode::InvalidArgument,
                         "flamia_runtime_options.schedule_order is " +
                             std::to_string(o.schedule_order) +
                             " (expected 0, FLAMIA_SCHEDULE_ORDER_LPT or "
                             "FLAMIA_SCHEDULE_ORDER_L2_SECTIONS)"));
    }
  }
  std::unique_ptr<AttentionRuntime> impl;
  Status s = AttentionRuntime::create(artifact_dir, device_ordinal, opts, impl);
  if (!s.ok())
    return finish(record(s));
  flamia_runtime *rt = new flamia_runtime();
  rt->impl = std::move(impl);
  *out = rt;
  return finish(FLAMIA_STATUS_OK);
}

flamia_status flamia_runtime_create(const char *artifact_dir,
                                    int device_ordinal, flamia_runtime **out,
                                    char *err, size_t errlen) {
  return flamia_runtime_create_with_options(artifact_dir, device_ordinal,
                                            nullptr, out, err, errlen);
}

void flamia_runtime_destroy(flamia_runtime *rt) { delete rt; }

flamia_status flamia_attention_prepare(flamia_runtime *rt,
                                       const flamia_attention_args *args,
                                       flamia_stream stream) {
  return callWithArgs(rt, args, stream, &AttentionRuntime::prepare);
}

flamia_status flamia_attention_forward(flamia_runtime *rt,
                                       const flamia_attention_args *args,
                                       flamia_stream stream) {
  return callWithArgs(rt, args, stream, &AttentionRuntime::forward);
}

flamia_status flamia_attention_forward_phase(flamia_runtime *rt,
                                             const flamia_attention_args *args,
                                             flamia_stream stream) {
  return callWithArgs(rt, args, stream, &AttentionRuntime::runForward);
}

flamia_status flamia_attention_backward_phase(
    flamia_runtime *rt, const flamia_attention_args *args,
    flamia_stream stream) {
  return callWithArgs(rt, args, stream, &AttentionRuntime::runBackward);
}

flamia_status flamia_runtime_launch(flamia_runtime *rt, size_t first_kernel,
                                    size_t num_kernels, flamia_stream stream) {
  if (!rt)
    return fail(ErrorCode::InvalidArgument, "runtime is NULL");
  return record(rt->impl->launch(first_kernel, num_kernels,
                                 static_cast<CUstream>(stream)));
}

size_t flamia_runtime_num_kernels(const flamia_runtime *rt) {
  return rt ? rt->impl->manifest().kernels.size() : 0;
}

const char *flamia_runtime_kernel_name(const flamia_runtime *rt, size_t index) {
  if (!rt || index >= rt->impl->manifest().kernels.size())
    return nullptr;
  return rt->impl->manifest().kernels[index].name.c_str();
}

size_t flamia_runtime_num_buffers(const flamia_runtime *rt) {
  return rt ? rt->impl->manifest().buffers.size() : 0;
}

const char *flamia_runtime_buffer_name(const flamia_runtime *rt, size_t index) {
  if (!rt || index >= rt->impl->manifest().buffers.size())
    return nullptr;
  return rt->impl->manifest().buffers[index].name.c_str();
}

flamia_status flamia_runtime_get_buffer(const flamia_runtime *rt,
                                        const char *name,
                                        flamia_buffer_info *out) {
  if (!rt)
    return fail(ErrorCode::InvalidArgument, "runtime is NULL");
  if (!name)
    return fail(ErrorCode::InvalidArgument, "buffer name is NULL");
  if (!out)
    return fail(ErrorCode::InvalidArgument, "out is NULL");
  Status s = checkStructSize(out, out->struct_size, sizeof(flamia_buffer_info),
                             "flamia_buffer_info");
  if (!s.ok())
    return record(s);
  BufferView view;
  s = rt->impl->buffer(name, view);
  if (!s.ok())
    return record(s);
  if (view.shape.size() > FLAMIA_MAX_BUFFER_RANK)
    return fail(ErrorCode::Internal, "buffer rank above 8");
  const Manifest &m = rt->impl->manifest();
  out->name = m.buffers[m.findBuffer(name)].name.c_str();
  out->role = static_cast<flamia_buffer_role>(view.role);
  out->dtype = static_cast<flamia_dtype>(view.dtype);
  out->rank = static_cast<int32_t>(view.shape.size());
  for (int i = 0; i < FLAMIA_MAX_BUFFER_RANK; ++i)
    out->shape[i] = i < out->rank ? view.shape[i] : 0;
  out->device_ptr =
      reinterpret_cast<void *>(static_cast<uintptr_t>(view.address));
  out->bytes = view.bytes;
  return FLAMIA_STATUS_OK;
}

flamia_status flamia_runtime_get_device_info(const flamia_runtime *rt,
                                             flamia_device_info *out) {
  if (!rt)
    return fail(ErrorCode::InvalidArgument, "runtime is NULL");
  if (!out)
    return fail(ErrorCode::InvalidArgument, "out is NULL");
  Status s = checkStructSize(out, out->struct_size, sizeof(flamia_device_info),
                             "flamia_device_info");
  if (!s.ok())
    return record(s);
  const DeviceInfo &d = rt->impl->device();
  out->ordinal = d.ordinal;
  out->compute_major = d.computeMajor;
  out->compute_minor = d.computeMinor;
  out->num_sms = d.numSms;
  out->driver_version = d.driverVersion;
  memset(out->name, 0, sizeof out->name);
  strncpy(out->name, d.name.c_str(), sizeof out->name - 1);
  return FLAMIA_STATUS_OK;
}

const char *flamia_runtime_target(const flamia_runtime *rt) {
  return rt ? rt->impl->manifest().target.name.c_str() : "";
}

const char *flamia_runtime_recipe(const flamia_runtime *rt) {
  return rt ? rt->impl->manifest().recipe.kind.c_str() : "";
}

float flamia_runtime_softmax_scale(const flamia_runtime *rt) {
  return rt && rt->impl->prepared() ? rt->impl->softmaxScale() : 0.0f;
}

} // extern "C"

static_assert(
    static_cast<int>(BufferRole::Input) == FLAMIA_BUFFER_INPUT &&
        static_cast<int>(BufferRole::Output) == FLAMIA_BUFFER_OUTPUT &&
        static_cast<int>(BufferRole::Workspace) == FLAMIA_BUFFER_WORKSPACE &&
        static_cast<int>(BufferRole::Schedule) == FLAMIA_BUFFER_SCHEDULE,
    "flamia_buffer_role mirrors BufferRole");
static_assert(static_cast<int>(DType::BF16) == FLAMIA_DTYPE_BF16 &&
                  static_cast<int>(DType::F32) == FLAMIA_DTYPE_F32 &&
                  static_cast<int>(DType::I32) == FLAMIA_DTYPE_I32 &&
                  static_cast<int>(DType::U8) == FLAMIA_DTYPE_U8,
              "flamia_dtype mirrors DType");
