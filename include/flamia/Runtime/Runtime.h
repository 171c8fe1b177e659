//===- Runtime.h - Run a manifest's kernels on packed attention --*- C++
//-*-===//
//
// AttentionRuntime owns one artifact directory loaded on one device: its
// manifest, the cubins (in the device's primary context, the one the CUDA
// runtime and PyTorch use), the workspace arena and the last call's schedule.
// It knows no kernel by name: everything comes from the manifest.
//
// A call is prepare + launch:
//   prepare  validates the arguments on the host (validateAttentionArgs:
//            nothing touches the device before they pass), checks that every
//            pointer is device memory of this device large enough for its
//            tensor, waits (on the stream, not the host) for the previous
//            call's kernels, copies cu_seqlens to the host (synchronizing the
//            caller's stream once), validates it, builds the schedule, sizes
//            and (re)allocates the workspace, uploads block_info and items,
//            encodes the tensor maps and packs every kernel's parameters;
//   launch   zeroes the work counter where a kernel takes it and launches the
//            kernels [first, first + count) in manifest order on the stream.
// forward = prepare + launch of every kernel. A prepared call can be launched
// again (benchmarks) as long as the bound buffers stay valid.
//
// A training step can also be run in its two phases (an autograd op: the
// forward now, the backward later), on one runtime:
//   runForward   prepare (gradient pointers optional) + launch of the
//                kernels of phase "forward", in manifest order;
//   runBackward  launch of the kernels of phase "backward", in manifest
//                order, on the workspace the last runForward wrote (the
//                quantized copies of q, k, v) and its o and lse. It must be
//                given the same call (see sameForwardCall in Runtime.cpp and
//                docs/runtime.md): the same T, Hq, Hkv, D, num_docs and
//                softmax scale, the same q, k, v, cu_seqlens, o and lse
//                pointers, and cu_seqlens holding what the forward read (it
//                is read again: one more synchronization of the stream);
//                grad_o, dq, dk and dv are required. Any other call on the
//                runtime in between (prepare, forward, a failed runForward)
//                ends the forward phase: runBackward then fails, launching
//                nothing. The backward may be run again (another grad_o)
//                while no other call intervenes. One runtime holds one
//                forward's workspace: one runtime per pending backward.
//
// Thread safety: calls on one runtime are serialized by a mutex. Work of
// consecutive calls is ordered on the device even across streams: each
// prepare makes its stream wait for the event recorded after the previous
// launch, because the workspace and schedule buffers are shared.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_RUNTIME_RUNTIME_H
#define FLAMIA_RUNTIME_RUNTIME_H

#include "flamia/Runtime/CudaDriver.h"
#include "flamia/Runtime/Launcher.h"
#include "flamia/Runtime/Manifest.h"
#include "flamia/Runtime/Module.h"
#include "flamia/Runtime/ScheduleBuffers.h"
#include "flamia/Runtime/Status.h"
#include "flamia/Runtime/Workspace.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace flamia::runtime {

/// One call: device pointers (packed layouts) and sizes. A training-step
/// manifest (backward kernels, docs/runtime-abi.md) also binds grad_o, dq, dk
/// and dv; they are ignored (may be 0) when the manifest lists no such
/// buffer.
struct AttentionArgs {
  CUdeviceptr q = 0;         // bf16 [T, Hq, D]
  CUdeviceptr k = 0;         // bf16 [T, Hkv, D]
  CUdeviceptr v = 0;         // bf16 [T, Hkv, D]
  CUdeviceptr cuSeqlens = 0; // int32 [num_docs + 1]
  CUdeviceptr o = 0;         // bf16 [T, Hq, D]
  CUdeviceptr lse = 0;       // f32 [Hq, T]
  CUdeviceptr gradO = 0;     // bf16 [T, Hq, D]: dL/dO (backward)
  CUdeviceptr dq = 0;        // [T, Hq, D], bf16 or f32 (the manifest's dtype)
  CUdeviceptr dk = 0;        // [T, Hkv, D], bf16 or f32
  CUdeviceptr dv = 0;        // [T, Hkv, D], bf16 or f32
  int64_t numTokens = 0;     // T
  int64_t numQHeads = 0;     // Hq
  int64_t numKVHeads = 0;    // Hkv
  int64_t headDim = 0;       // D
  int64_t numDocs = 0;       // NUM_DOCS >= 1
  float softmaxScale = 0.0f; // 0: the manifest's, else 1/sqrt(D)
  /// Optional: cu_seqlens' values on the host (numDocs + 1 entries, equal to
  /// the device array's). With it the runtime never reads cu_seqlens from the
  /// device (no synchronization) and a call can be captured in a CUDA graph.
  /// The kernels address memory only through the schedule built from these
  /// values, so a device array that differs gives wrong results for the
  /// documents, never an access out of bounds.
  const int32_t *cuSeqlensHost = nullptr;
};

struct RuntimeOptions {
  /// Zero the workspace and schedule buffers before every call (so that a
  /// sanitizer's initcheck sees defined memory, and stale data cannot pass
  /// for a result).
  bool zeroWorkspace = false;
  /// Synchronize the stream after every kernel and report its failure by
  /// name (debugging; slow).
  bool syncAfterEachKernel = false;
  /// Run FlamiaSchedule's invariant checks on every schedule (O(N log D)).
  bool checkSchedule = false;
  /// Check with cuPointerGetAttribute that every pointer is device memory of
  /// this device and that its allocation holds the whole tensor.
  bool checkDevicePointers = true;
  /// The order of the work lists, overriding the manifest's schedule.order
  /// (for A/B runs of one kernel set; every order computes the same result).
  std::optional<ScheduleOrder> scheduleOrder;
};

/// The bytes of each argument tensor (0 for T = 0), for validation.
struct ArgumentExtents {
  uint64_t q = 0, k = 0, v = 0, cuSeqlens = 0, o = 0, lse = 0;
  // The backward's tensors; 0 when the manifest does not list them.
  uint64_t gradO = 0, dq = 0, dk = 0, dv = 0;
};

/// The kernels a call launches: every kernel (forward), those of phase
/// "forward" (runForward) or those of phase "backward" (runBackward).
enum class CallPhase { All, Forward, Backward };

/// Host-only validation of `args` against `manifest` (no device call): sizes,
/// head counts, head dim, softmax scale, null pointers, alignment, overlap of
/// outputs with other tensors, and the manifest's input/output shapes against
/// the tensors the arguments describe. Fills `extents`. With
/// CallPhase::Forward the backward's tensors (grad_o, dq, dk, dv) may be null
/// (they are checked when given); otherwise every tensor the manifest lists
/// is required.
Status validateAttentionArgs(const Manifest &manifest,
                             const AttentionArgs &args,
                             ArgumentExtents *extents = nullptr,
                             CallPhase phase = CallPhase::All);

/// The softmax scale a call uses (see docs/runtime.md): the manifest's when it
/// has one (the argument must then be 0 or equal), else the argument, else
/// fl32(1 / sqrt(D)).
Status effectiveSoftmaxScale(const Manifest &manifest,
                             const AttentionArgs &args, float &out);

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  int numSms = 0;
  int driverVersion = 0;
  DeviceLimits limits;
};

/// A buffer of the last prepared call.
struct BufferView {
  std::string name;
  BufferRole role = BufferRole::Workspace;
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  CUdeviceptr address = 0;
  uint64_t bytes = 0;
};

class AttentionRuntime {
public:
  /// Loads DIR/manifest.json (errors here need no driver), then the driver,
  /// the device `deviceOrdinal`, its primary context, and every cubin.
  static Status create(const std::string &artifactDir, int deviceOrdinal,
                       const RuntimeOptions &options,
                       std::unique_ptr<AttentionRuntime> &out);
  ~AttentionRuntime();
  AttentionRuntime(const AttentionRuntime &) = delete;
  AttentionRuntime &operator=(const AttentionRuntime &) = delete;

  Status prepare(const AttentionArgs &args, CUstream stream);
  Status launch(size_t firstKernel, size_t numKernels, CUstream stream);
  Status forward(const AttentionArgs &args, CUstream stream);
  /// The forward phase of a training step (or the whole of a forward-only
  /// manifest): prepare + launch of the kernels of phase "forward".
  Status runForward(const AttentionArgs &args, CUstream stream);
  /// The backward phase after runForward of the same call (see above):
  /// validates, checks the call against the forward's, binds grad_o, dq, dk,
  /// dv and launches the kernels of phase "backward". InvalidArgument, with
  /// nothing launched, when the manifest has no backward kernels, when no
  /// forward phase is current, or when the call differs from the forward's.
  Status runBackward(const AttentionArgs &args, CUstream stream);
  /// Whether runBackward may follow: the last call was a successful
  /// runForward (or runBackward after one).
  bool forwardPhaseCurrent() const;

  const Manifest &manifest() const { return manifest_; }
  const DeviceInfo &device() const { return device_; }
  const std::string &artifactDir() const { return artifactDir_; }
  const CudaDriver &driver() const { return *driver_; }
  std::shared_ptr<const CudaDriver> sharedDriver() const { return driver_; }
  CUcontext context() const { return context_; }
  const LoadedKernel &loadedKernel(size_t i) const {
    return modules_.kernels()[i];
  }

  /// After a successful prepare: a buffer by name (NotFound otherwise).
  Status buffer(const std::string &name, BufferView &out) const;
  /// After a successful prepare: the schedule and the symbol values used.
  const ScheduleContents &schedule() const { return schedule_; }
  const SymbolValues &symbols() const { return symbols_; }
  float softmaxScale() const { return scalars_.softmaxScale; }
  bool prepared() const { return prepared_; }

private:
  AttentionRuntime() = default;
  Status prepareLocked(const AttentionArgs &args, CUstream stream,
                       CallPhase phase);
  Status launchLocked(size_t first, size_t count, CUstream stream);
  Status launchPhaseLocked(KernelPhase phase, CUstream stream);
  Status packKernelLocked(size_t kernel);
  Status sameForwardCall(const AttentionArgs &args) const;
  Status checkDevicePointer(const char *name, CUdeviceptr ptr,
                            uint64_t bytes) const;
  Status readCuSeqlens(const AttentionArgs &args, CUstream stream,
                       bool capturing, std::vector<int32_t> &cu) const;

  mutable std::mutex mutex_;
  std::shared_ptr<const CudaDriver> driver_;
  std::string artifactDir_;
  Manifest manifest_;
  RuntimeOptions options_;
  DeviceInfo device_;
  CUdevice cuDevice_ = 0;
  CUcontext context_ = nullptr;
  bool contextRetained_ = false;
  ModuleSet modules_;
  DeviceArena arena_;
  CUevent lastLaunch_ = nullptr;
  bool lastLaunchRecorded_ = false;

  // The last prepared call.
  bool prepared_ = false;
  bool emptyCall_ = false; // T == 0: nothing to launch
  SymbolValues symbols_;
  ScheduleContents schedule_;
  BufferPlan plan_;
  std::vector<BoundBuffer> bound_;
  NamedScalars scalars_;
  std::vector<KernelLaunch> launches_;
  std::vector<bool> packed_; // launches_[k] has its parameters
  std::vector<int32_t> cuHost_; // cu_seqlens as the last prepare read it
  // What the schedule buffers hold on the device (by manifest buffer index:
  // the address and the bytes last uploaded there), so that a call captured
  // in a CUDA graph can skip an upload that would change nothing. Cleared
  // when the arena is reallocated or zeroed.
  std::vector<std::pair<CUdeviceptr, std::vector<uint8_t>>> uploaded_;

  // The forward phase runBackward continues (valid while forwardCurrent_).
  bool forwardCurrent_ = false;
  std::string noForwardReason_ = "no forward phase has run on this runtime";
  AttentionArgs forwardArgs_;
};

} // namespace flamia::runtime

#endif // FLAMIA_RUNTIME_RUNTIME_H
