//===- Session.cpp - One batch on the device through the C API ------------===//

#include "Session.h"

#include "flamia/Validation/Gradients.h"

#include <cstring>

namespace flamia::run {

using runtime::ErrorCode;
using runtime::Status;

Status capiError(flamia_status status, const std::string &what) {
  return Status::error(static_cast<ErrorCode>(status),
                       what + ": " + flamia_last_error());
}

Session::~Session() { flamia_runtime_destroy(rt_); }

Status Session::open(const RunOptions &options, HostBatch &batch) {
  batch_ = &batch;
  softmaxScale_ = options.softmaxScale;
  flamia_runtime_options ro;
  flamia_runtime_options_init(&ro);
  ro.zero_workspace = options.sanitizeFriendly;
  ro.sync_after_each_kernel = options.sanitizeFriendly;
  ro.check_schedule = options.check || options.leakcheck;
  if (options.scheduleOrder)
    ro.schedule_order = *options.scheduleOrder == ScheduleOrder::L2Sections
                            ? FLAMIA_SCHEDULE_ORDER_L2_SECTIONS
                            : FLAMIA_SCHEDULE_ORDER_LPT;
  char err[4096];
  flamia_status s = flamia_runtime_create_with_options(
      options.artifacts.c_str(), options.device, &ro, &rt_, err, sizeof err);
  if (s != FLAMIA_STATUS_OK)
    return Status::error(static_cast<ErrorCode>(s), err);
  FLAMIA_RETURN_IF_ERROR(runtime::loadManifest(options.artifacts, manifest_));
  FLAMIA_RETURN_IF_ERROR(device_.open(options.device));

  // Sizes from the batch's dimensions (the host tensors may not exist yet:
  // the device memory comes first, so that a batch the device cannot hold
  // is reported before the inputs are made).
  const size_t qBytes = batch.qElements() * 2, kBytes = batch.kElements() * 2;
  FLAMIA_RETURN_IF_ERROR(device_.alloc(qBytes, q_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(kBytes, k_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(kBytes, v_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(batch.cu.size() * 4, cu_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(qBytes, o_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(batch.lseElements() * 4, lse_));
  if (!options.backward) {
    if (manifest_.hasBackward())
      return runtime::invalidArgument(
          "the manifest has backward kernels (a training step): run it with "
          "--backward (they need grad_o)");
    return Status::success();
  }
  if (!manifest_.hasBackward())
    return runtime::invalidArgument(
        "--backward: the manifest has no backward kernels (no \"phase\": "
        "\"backward\")");
  for (const char *name : {"grad_o", "dq", "dk", "dv"})
    if (manifest_.findBuffer(name) < 0)
      return runtime::invalidArgument(
          std::string("--backward: the manifest has backward kernels but no "
                      "buffer '") +
          name + "'");
  backward_ = true;
  auto bytesOf = [&](const char *name, size_t elements) {
    return elements * static_cast<size_t>(runtime::dtypeBytes(
                          manifest_.buffers[manifest_.findBuffer(name)].dtype));
  };
  dqBytes_ = bytesOf("dq", batch.qElements());
  dkBytes_ = bytesOf("dk", batch.kElements());
  if (bytesOf("dv", batch.kElements()) != dkBytes_)
    return runtime::invalidArgument(
        "--backward: dk and dv have different dtypes in the manifest");
  FLAMIA_RETURN_IF_ERROR(device_.alloc(qBytes, gradO_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(dqBytes_, dq_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(dkBytes_, dk_));
  FLAMIA_RETURN_IF_ERROR(device_.alloc(dkBytes_, dv_));
  return Status::success();
}

float Session::softmaxScale() const {
  return flamia_runtime_softmax_scale(rt_);
}

Status Session::downloadGradients(std::vector<float> &dq,
                                  std::vector<float> &dk,
                                  std::vector<float> &dv) {
  if (!backward_)
    return Status::error(ErrorCode::Internal, "no training step was run");
  auto fetch = [&](const char *name, CUdeviceptr src, size_t elements,
                   size_t bytes, std::vector<float> &out) -> Status {
    std::vector<uint8_t> raw(bytes);
    FLAMIA_RETURN_IF_ERROR(device_.download(raw.data(), src, bytes));
    out = validation::device::gradientValues(
        raw.data(), elements,
        manifest_.buffers[manifest_.findBuffer(name)].dtype);
    return Status::success();
  };
  FLAMIA_RETURN_IF_ERROR(fetch("dq", dq_, batch_->qElements(), dqBytes_, dq));
  FLAMIA_RETURN_IF_ERROR(fetch("dk", dk_, batch_->kElements(), dkBytes_, dk));
  return fetch("dv", dv_, batch_->kElements(), dkBytes_, dv);
}

Status Session::uploadInputs() {
  const HostBatch &batch = *batch_;
  if (batch.q.size() != batch.qElements() ||
      batch.k.size() != batch.kElements() || batch.v.size() != batch.kElements())
    return runtime::Status::error(ErrorCode::Internal,
                                  "the host inputs do not match the batch's "
                                  "dimensions");
  const size_t qBytes = batch.q.size() * 2, kBytes = batch.k.size() * 2;
  FLAMIA_RETURN_IF_ERROR(device_.upload(q_, batch.q.data(), qBytes));
  FLAMIA_RETURN_IF_ERROR(device_.upload(k_, batch.k.data(), kBytes));
  FLAMIA_RETURN_IF_ERROR(device_.upload(v_, batch.v.data(), kBytes));
  if (backward_) {
    if (batch.gradO.size() != batch.qElements())
      return runtime::Status::error(ErrorCode::Internal,
                                    "grad_o does not match the batch");
    FLAMIA_RETURN_IF_ERROR(device_.upload(gradO_, batch.gradO.data(), qBytes));
  }
  return device_.upload(cu_, batch.cu.data(), batch.cu.size() * 4);
}

flamia_attention_args Session::args() const {
  flamia_attention_args a;
  flamia_attention_args_init(&a);
  auto ptr = [](CUdeviceptr p) {
    return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
  };
  a.q = ptr(q_);
  a.k = ptr(k_);
  a.v = ptr(v_);
  a.cu_seqlens = static_cast<const int32_t *>(ptr(cu_));
  a.o = ptr(o_);
  a.lse = static_cast<float *>(ptr(lse_));
  a.num_tokens = batch_->T;
  a.num_q_heads = static_cast<int32_t>(batch_->Hq);
  a.num_kv_heads = static_cast<int32_t>(batch_->Hkv);
  a.head_dim = static_cast<int32_t>(batch_->D);
  a.num_docs = static_cast<int32_t>(batch_->numDocs());
  a.softmax_scale = softmaxScale_;
  if (backward_) {
    a.grad_o = ptr(gradO_);
    a.dq = ptr(dq_);
    a.dk = ptr(dk_);
    a.dv = ptr(dv_);
  }
  return a;
}

Status Session::forward(const std::vector<uint16_t> *baseO,
                        const std::vector<float> *baseLse) {
  FLAMIA_RETURN_IF_ERROR(device_.fill(o_, 0xFF, batch_->qElements() * 2));
  FLAMIA_RETURN_IF_ERROR(device_.fill(lse_, 0xFF, batch_->lseElements() * 4));
  flamia_attention_args a = args();
  if (backward_) {
    FLAMIA_RETURN_IF_ERROR(device_.fill(dq_, 0xFF, dqBytes_));
    FLAMIA_RETURN_IF_ERROR(device_.fill(dk_, 0xFF, dkBytes_));
    FLAMIA_RETURN_IF_ERROR(device_.fill(dv_, 0xFF, dkBytes_));
    // As an autograd op calls them: the forward phase (without the
    // gradients), then the backward phase of the same call.
    flamia_attention_args fa = a;
    fa.grad_o = nullptr;
    fa.dq = fa.dk = fa.dv = nullptr;
    flamia_status s =
        flamia_attention_forward_phase(rt_, &fa, device_.stream());
    if (s != FLAMIA_STATUS_OK)
      return capiError(s, "flamia_attention_forward_phase");
    if (baseO && baseLse) {
      if (baseO->size() != batch_->qElements() ||
          baseLse->size() != batch_->lseElements())
        return runtime::invalidArgument(
            "the O and LSE given to the backward are not of the batch's size");
      // After the forward's kernels: the uploads must overwrite what they
      // wrote.
      FLAMIA_RETURN_IF_ERROR(
          device_.synchronize().withContext("running the forward phase"));
      FLAMIA_RETURN_IF_ERROR(
          device_.upload(o_, baseO->data(), baseO->size() * 2));
      FLAMIA_RETURN_IF_ERROR(
          device_.upload(lse_, baseLse->data(), baseLse->size() * 4));
    }
    s = flamia_attention_backward_phase(rt_, &a, device_.stream());
    if (s != FLAMIA_STATUS_OK)
      return capiError(s, "flamia_attention_backward_phase");
    return device_.synchronize().withContext("running the kernels");
  }
  flamia_status s = flamia_attention_forward(rt_, &a, device_.stream());
  if (s != FLAMIA_STATUS_OK)
    return capiError(s, "flamia_attention_forward");
  return device_.synchronize().withContext("running the kernels");
}

Status Session::downloadOutputs(std::vector<uint16_t> &o,
                                std::vector<float> &lse) {
  o.resize(batch_->qElements());
  lse.resize(batch_->lseElements());
  FLAMIA_RETURN_IF_ERROR(device_.download(o.data(), o_, o.size() * 2));
  return device_.download(lse.data(), lse_, lse.size() * 4);
}

Status Session::bufferInfo(const std::string &name,
                           flamia_buffer_info &info) {
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  flamia_status s = flamia_runtime_get_buffer(rt_, name.c_str(), &info);
  if (s != FLAMIA_STATUS_OK)
    return capiError(s, "flamia_runtime_get_buffer");
  return Status::success();
}

Status Session::downloadBuffer(const std::string &name,
                               std::vector<uint8_t> &bytes,
                               flamia_buffer_info &info) {
  FLAMIA_RETURN_IF_ERROR(bufferInfo(name, info));
  bytes.resize(static_cast<size_t>(info.bytes));
  return device_.download(
      bytes.data(),
      static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(info.device_ptr)),
      bytes.size());
}

Status Session::uploadTokens(int64_t begin, int64_t end) {
  if (begin >= end)
    return Status::success();
  const HostBatch &b = *batch_;
  const size_t qRow = static_cast<size_t>(b.Hq * b.D),
               kRow = static_cast<size_t>(b.Hkv * b.D);
  const size_t n = static_cast<size_t>(end - begin);
  FLAMIA_RETURN_IF_ERROR(device_.upload(
      q_ + begin * qRow * 2, b.q.data() + begin * qRow, n * qRow * 2));
  FLAMIA_RETURN_IF_ERROR(device_.upload(
      k_ + begin * kRow * 2, b.k.data() + begin * kRow, n * kRow * 2));
  if (backward_)
    FLAMIA_RETURN_IF_ERROR(device_.upload(gradO_ + begin * qRow * 2,
                                          b.gradO.data() + begin * qRow,
                                          n * qRow * 2));
  return device_.upload(v_ + begin * kRow * 2, b.v.data() + begin * kRow,
                        n * kRow * 2);
}

} // namespace flamia::run
