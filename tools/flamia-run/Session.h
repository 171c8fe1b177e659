//===- Session.h - One batch on the device through the C API ----*- C++ -*-===//
#ifndef FLAMIA_TOOLS_FLAMIARUN_SESSION_H
#define FLAMIA_TOOLS_FLAMIARUN_SESSION_H

#include "Device.h"
#include "Options.h"
#include "Workload.h"

#include "flamia/CAPI/Runtime.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Runtime.h"

#include <memory>

#include <string>
#include <vector>

namespace flamia::run {

/// An error of the C API: its status and flamia_last_error().
runtime::Status capiError(flamia_status status, const std::string &what);

class Session {
public:
  ~Session();
  /// Creates the runtime (C API) first, so that "CUDA driver not available"
  /// and manifest errors come from it; then allocates the device tensors
  /// for the batch's dimensions (T, Hq, Hkv, D, cu), which must be set; its
  /// host tensors need not exist yet.
  runtime::Status open(const RunOptions &options, HostBatch &batch);
  /// Uploads the batch's q, k, v and cu_seqlens (after open).
  runtime::Status uploadInputs();

  flamia_runtime *runtime() const { return rt_; }
  Device &device() { return device_; }
  const HostBatch &batch() const { return *batch_; }
  /// The manifest, parsed by the tool itself (the C API keeps its own).
  const runtime::Manifest &manifest() const { return manifest_; }
  flamia_attention_args args() const;

  /// Fills O and LSE (and the gradients) with NaN (0xFF bytes), runs every
  /// kernel, waits: flamia_attention_forward, or with --backward
  /// flamia_attention_forward_phase then flamia_attention_backward_phase.
  /// With `baseO` and `baseLse` (--backward only), those are written over
  /// the forward's O and LSE between the two phases: the backward reads
  /// them (flamia-run's L3 check holds the backward's O and LSE fixed).
  runtime::Status forward(const std::vector<uint16_t> *baseO = nullptr,
                          const std::vector<float> *baseLse = nullptr);
  /// --backward: dq, dk, dv as float32 (by the manifest's dtypes).
  runtime::Status downloadGradients(std::vector<float> &dq,
                                    std::vector<float> &dk,
                                    std::vector<float> &dv);
  /// The softmax scale of the last call (the runtime's, after the
  /// manifest's default).
  float softmaxScale() const;
  /// --backward: a training step (its forward phase, then its backward).
  bool backward() const { return backward_; }
  runtime::Status downloadOutputs(std::vector<uint16_t> &o,
                                  std::vector<float> &lse);
  /// Where a workspace (or any) buffer of the last call lives, and its size.
  runtime::Status bufferInfo(const std::string &name, flamia_buffer_info &info);
  /// A workspace (or any) buffer of the last call.
  runtime::Status downloadBuffer(const std::string &name,
                                 std::vector<uint8_t> &bytes,
                                 flamia_buffer_info &info);
  /// Re-uploads tokens [begin, end) of q, k and v (and grad_o) from the host
  /// batch.
  runtime::Status uploadTokens(int64_t begin, int64_t end);

  CUdeviceptr o() const { return o_; }
  CUdeviceptr lse() const { return lse_; }

private:
  flamia_runtime *rt_ = nullptr;
  Device device_;
  runtime::Manifest manifest_;
  HostBatch *batch_ = nullptr;
  float softmaxScale_ = 0.0f;
  CUdeviceptr q_ = 0, k_ = 0, v_ = 0, cu_ = 0, o_ = 0, lse_ = 0;
  // --backward: the training step runs through the C API like the forward
  // (flamia_attention_forward_phase, then flamia_attention_backward_phase);
  // args() carries grad_o, dq, dk, dv.
  bool backward_ = false;
  CUdeviceptr gradO_ = 0, dq_ = 0, dk_ = 0, dv_ = 0;
  size_t dqBytes_ = 0, dkBytes_ = 0;
};

} // namespace flamia::run

#endif // FLAMIA_TOOLS_FLAMIARUN_SESSION_H
