//===- Checks.cpp - flamia-run's checks against the CPU reference ---------===//
//
// The logic lives in FlamiaValidation (include/flamia/Validation); here the
// Session supplies the device's buffers and perturbed runs.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "flamia/Numerics/SyntheticInputs.h"

#include "flamia/Support/FileOutput.h"
#include "flamia/Support/Npy.h"
#include "flamia/Validation/Gradients.h"
#include "flamia/Validation/Leaks.h"
#include "flamia/Validation/QuantizedCopies.h"
#include "flamia/Validation/Reference.h"

#include <algorithm>
#include <cstring>

namespace flamia::run {

using runtime::Status;
namespace vd = flamia::validation::device;

namespace {

void addAll(const std::vector<vd::Check> &checks, Report &report) {
  for (const vd::Check &c : checks)
    report.add(c);
}

vd::BatchView view(const HostBatch &b) {
  vd::BatchView v;
  v.cu = b.cu.data();
  v.numDocs = b.numDocs();
  v.T = b.T;
  v.Hq = b.Hq;
  v.Hkv = b.Hkv;
  v.D = b.D;
  v.q = b.q.data();
  v.k = b.k.data();
  v.v = b.v.data();
  v.gradO = b.gradO.empty() ? nullptr : b.gradO.data();
  return v;
}

/// A float32 array of `shape` holding `x`, for --dump.
std::pair<std::string, NpyArray> dumpFile(const std::string &dir,
                                          const std::string &name,
                                          const std::vector<float> &x,
                                          std::vector<int64_t> shape) {
  NpyArray a = makeNpyArray(NpyDType::Float32, std::move(shape));
  memcpy(a.bytes.data(), x.data(), x.size() * 4);
  return {dir + "/" + name + ".npy", std::move(a)};
}

} // namespace

void checkOutputsWritten(const std::vector<uint16_t> &o,
                         const std::vector<float> &lse, Report &report) {
  addAll({vd::checkOutputsWritten(o.data(), o.size(), lse.data(), lse.size())},
         report);
}

Status checkQuantizedCopies(Session &session, const RunOptions &options,
                            const std::vector<uint16_t> &o, Report &report) {
  (void)options;
  std::vector<vd::Check> checks;
  Status s = vd::checkQuantizedCopies(
      view(session.batch()), session.manifest(),
      [&](const std::string &name, std::vector<uint8_t> &bytes) {
        flamia_buffer_info info;
        return session.downloadBuffer(name, bytes, info);
      },
      checks, o.data());
  addAll(checks, report);
  return s;
}

Status checkReference(Session &session, const RunOptions &options,
                      const std::vector<uint16_t> &o,
                      const std::vector<float> &lse, Report &report) {
  const HostBatch &b = session.batch();
  const runtime::Manifest &m = session.manifest();
  // --ref-heads in the option's words (the library checks it again).
  numerics::RecipeConfig recipe;
  std::string rule;
  if (options.refHeads > 0 && vd::referenceRecipe(m, recipe).ok() &&
      !vd::validReferenceHeads(options.refHeads, b.Hq, b.Hkv, rule))
    return runtime::invalidArgument(
        "--ref-heads " + std::to_string(options.refHeads) + " " + rule);

  vd::ReferenceOptions ro;
  ro.heads = options.refHeads;
  ro.budget = options.refBudget;
  ro.softmaxScale = session.softmaxScale();
  std::vector<vd::Check> checks;
  vd::ReferenceArrays arrays;
  FLAMIA_RETURN_IF_ERROR(vd::checkReference(view(b), m, ro,
                                            {o.data(), lse.data()}, checks,
                                            &arrays));
  addAll(checks, report);

  if (!options.dumpDir.empty() && !arrays.skipped) {
    // Every file or none (docs/runtime.md): a failed write is an error.
    const std::string &dir = options.dumpDir;
    const int64_t heads = arrays.heads;
    std::vector<std::pair<std::string, NpyArray>> files;
    files.push_back(dumpFile(dir, "q", toFloat(b.q), {b.T, b.Hq, b.D}));
    files.push_back(dumpFile(dir, "k", toFloat(b.k), {b.T, b.Hkv, b.D}));
    files.push_back(dumpFile(dir, "v", toFloat(b.v), {b.T, b.Hkv, b.D}));
    files.push_back(dumpFile(dir, "o", arrays.o, {b.T, b.Hq, b.D}));
    files.push_back(dumpFile(dir, "lse", lse, {b.Hq, b.T}));
    files.push_back(dumpFile(dir, "o_ref", arrays.refO, {b.T, heads, b.D}));
    files.push_back(dumpFile(dir, "lse_ref", arrays.refLse, {heads, b.T}));
    files.push_back(dumpFile(dir, "o_f64", arrays.f64O, {b.T, heads, b.D}));
    files.push_back(dumpFile(dir, "lse_f64", arrays.f64Lse, {heads, b.T}));
    NpyArray cu =
        makeNpyArray(NpyDType::Int32, {static_cast<int64_t>(b.cu.size())});
    memcpy(cu.bytes.data(), b.cu.data(), b.cu.size() * 4);
    files.push_back({dir + "/cu_seqlens.npy", std::move(cu)});
    std::string error;
    if (!writeNpyFilesAtomically(files, error))
      return runtime::invalidArgument("--dump: " + error);
  }
  return Status::success();
}

Status checkLeaks(Session &session, HostBatch &b, const RunOptions &options,
                  const std::vector<uint16_t> &o0, const std::vector<float> &l0,
                  Report &report) {
  // Perturbs tokens [begin, end) of Q, K and V (fresh values with an outlier
  // at `begin`, or all NaN), runs, downloads, restores.
  auto run = [&](const vd::Perturbation &p, std::vector<uint16_t> &o1,
                 std::vector<float> &l1) -> Status {
    const int64_t qr = b.Hq * b.D, kr = b.Hkv * b.D;
    const std::vector<uint16_t> savedQ(b.q.begin() + p.begin * qr,
                                       b.q.begin() + p.end * qr),
        savedK(b.k.begin() + p.begin * kr, b.k.begin() + p.end * kr),
        savedV(b.v.begin() + p.begin * kr, b.v.begin() + p.end * kr);
    if (p.allNaN) {
      // Every element of the tokens' Q, K and V a quiet NaN (bf16 0x7FC0).
      auto fill = [&](std::vector<uint16_t> &x, int64_t H) {
        std::fill(x.begin() + p.begin * H * b.D, x.begin() + p.end * H * b.D,
                  uint16_t(0x7FC0));
      };
      fill(b.q, b.Hq);
      fill(b.k, b.Hkv);
      fill(b.v, b.Hkv);
    } else {
      numerics::perturbPackedBf16Tokens(b.q, b.Hq, b.D, p.begin, p.end, p.seed ^ 0x51, true);
      numerics::perturbPackedBf16Tokens(b.k, b.Hkv, b.D, p.begin, p.end, p.seed ^ 0x4B, true);
      numerics::perturbPackedBf16Tokens(b.v, b.Hkv, b.D, p.begin, p.end, p.seed ^ 0x56, true);
    }
    FLAMIA_RETURN_IF_ERROR(session.uploadTokens(p.begin, p.end));
    Status s = session.forward();
    if (s.ok())
      s = session.downloadOutputs(o1, l1);
    std::copy(savedQ.begin(), savedQ.end(), b.q.begin() + p.begin * qr);
    std::copy(savedK.begin(), savedK.end(), b.k.begin() + p.begin * kr);
    std::copy(savedV.begin(), savedV.end(), b.v.begin() + p.begin * kr);
    FLAMIA_RETURN_IF_ERROR(session.uploadTokens(p.begin, p.end));
    return s;
  };
  std::vector<vd::Check> checks;
  Status s = vd::checkLeaks(view(b), session.manifest().causal, options.seed,
                            {o0.data(), l0.data()}, run, checks);
  addAll(checks, report);
  return s;
}

Status runTraining(Session &session, vd::TrainingOutputs &out) {
  FLAMIA_RETURN_IF_ERROR(session.forward());
  FLAMIA_RETURN_IF_ERROR(session.downloadOutputs(out.o, out.lse));
  return session.downloadGradients(out.dq, out.dk, out.dv);
}

void checkGradientsWritten(const vd::TrainingOutputs &run, Report &report) {
  report.add(vd::checkGradientsWritten({run.dq.data(), run.dk.data(),
                                        run.dv.data()},
                                       run.dq.size(), run.dk.size()));
}

Status checkGradients(Session &session, const RunOptions &options,
                      const vd::TrainingOutputs &run, Report &report) {
  const HostBatch &b = session.batch();
  vd::ReferenceOptions ro;
  ro.heads = options.refHeads;
  ro.budget = options.refBudget;
  ro.softmaxScale = session.softmaxScale();
  std::vector<vd::Check> checks;
  vd::GradientArrays arrays;
  Status s = vd::checkGradients(view(b), session.manifest(), ro,
                                {run.o.data(), run.lse.data()},
                                {run.dq.data(), run.dk.data(), run.dv.data()},
                                checks, &arrays);
  // (An invalid --ref-heads was refused by checkReference, which runs first.)
  FLAMIA_RETURN_IF_ERROR(s);
  addAll(checks, report);

  if (!options.dumpDir.empty() && !arrays.skipped) {
    const std::string &dir = options.dumpDir;
    const int64_t heads = arrays.heads, kvHeads = heads / (b.Hq / b.Hkv);
    std::vector<std::pair<std::string, NpyArray>> files;
    files.push_back(dumpFile(dir, "grad_o", toFloat(b.gradO), {b.T, b.Hq, b.D}));
    files.push_back(dumpFile(dir, "dq", run.dq, {b.T, b.Hq, b.D}));
    files.push_back(dumpFile(dir, "dk", run.dk, {b.T, b.Hkv, b.D}));
    files.push_back(dumpFile(dir, "dv", run.dv, {b.T, b.Hkv, b.D}));
    files.push_back(dumpFile(dir, "dq_ref", arrays.refDq, {b.T, heads, b.D}));
    files.push_back(dumpFile(dir, "dk_ref", arrays.refDk, {b.T, kvHeads, b.D}));
    files.push_back(dumpFile(dir, "dv_ref", arrays.refDv, {b.T, kvHeads, b.D}));
    std::string error;
    if (!writeNpyFilesAtomically(files, error))
      return runtime::invalidArgument("--dump: " + error);
  }
  return Status::success();
}

Status checkRecomputedScores(Session &session, Report &report) {
  const runtime::Manifest &m = session.manifest();
  const int fwdIndex = m.findBuffer("s_fwd"), dqIndex = m.findBuffer("s_dq");
  if (fwdIndex < 0 || dqIndex < 0)
    return Status::success();
  int64_t blockN = 0;
  if (m.buffers[fwdIndex].shape.size() != 3 ||
      !m.buffers[fwdIndex].shape[2].constantValue(blockN))
    return runtime::invalidArgument(
        "buffer s_fwd: expected the shape [T, Hq, block_n] of a debug build");
  // The step that ran allocated both; fill them with NaN and run it again,
  // so that an entry no kernel writes is NaN, never a stale value.
  flamia_buffer_info fwdInfo, dqInfo;
  FLAMIA_RETURN_IF_ERROR(session.bufferInfo("s_fwd", fwdInfo));
  FLAMIA_RETURN_IF_ERROR(session.bufferInfo("s_dq", dqInfo));
  for (const flamia_buffer_info *info : {&fwdInfo, &dqInfo})
    FLAMIA_RETURN_IF_ERROR(session.device().fill(
        static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(info->device_ptr)),
        0xFF, static_cast<size_t>(info->bytes)));
  FLAMIA_RETURN_IF_ERROR(session.forward());
  std::vector<uint8_t> fwd, dq;
  FLAMIA_RETURN_IF_ERROR(session.downloadBuffer("s_fwd", fwd, fwdInfo));
  FLAMIA_RETURN_IF_ERROR(session.downloadBuffer("s_dq", dq, dqInfo));
  if (fwd.size() != dq.size())
    return runtime::invalidArgument("buffers s_fwd and s_dq differ in size");
  const HostBatch &b = session.batch();
  report.add(vd::checkRecomputedScores(
      reinterpret_cast<const float *>(fwd.data()),
      reinterpret_cast<const float *>(dq.data()), fwd.size() / 4, b.cu, b.Hq,
      blockN));
  return Status::success();
}

namespace {

/// The training step with `p` applied to q, k, v and grad_o (as checkLeaks'
/// run, with grad_o perturbed too); with `baseO` and `baseLse`, the
/// backward reads those (Session::forward). The batch is restored, on the
/// host and the device, before it returns.
Status runPerturbedTraining(Session &session, HostBatch &b,
                            const vd::Perturbation &p, vd::TrainingOutputs &out,
                            const std::vector<uint16_t> *baseO = nullptr,
                            const std::vector<float> *baseLse = nullptr) {
  const int64_t qr = b.Hq * b.D, kr = b.Hkv * b.D;
  struct Saved {
    std::vector<uint16_t> *x;
    int64_t row;
    uint64_t salt;
    std::vector<uint16_t> copy;
  } saved[] = {{&b.q, qr, 0x51, {}},
               {&b.k, kr, 0x4B, {}},
               {&b.v, kr, 0x56, {}},
               {&b.gradO, qr, 0x47, {}}};
  for (Saved &s : saved) {
    s.copy.assign(s.x->begin() + p.begin * s.row, s.x->begin() + p.end * s.row);
    if (p.allNaN)
      std::fill(s.x->begin() + p.begin * s.row, s.x->begin() + p.end * s.row,
                uint16_t(0x7FC0));
    else
      numerics::perturbPackedBf16Tokens(*s.x, s.row / b.D, b.D, p.begin, p.end,
                                        p.seed ^ s.salt, true);
  }
  FLAMIA_RETURN_IF_ERROR(session.uploadTokens(p.begin, p.end));
  Status s = session.forward(baseO, baseLse);
  if (s.ok())
    s = session.downloadOutputs(out.o, out.lse);
  if (s.ok())
    s = session.downloadGradients(out.dq, out.dk, out.dv);
  for (Saved &sv : saved)
    std::copy(sv.copy.begin(), sv.copy.end(), sv.x->begin() + p.begin * sv.row);
  FLAMIA_RETURN_IF_ERROR(session.uploadTokens(p.begin, p.end));
  return s;
}

} // namespace

Status checkTrainingLeaks(Session &session, HostBatch &b,
                          const RunOptions &options,
                          const vd::TrainingOutputs &base, Report &report) {
  auto run = [&](const vd::Perturbation &p, vd::TrainingOutputs &out) {
    return runPerturbedTraining(session, b, p, out);
  };
  std::vector<vd::Check> checks;
  Status s = vd::checkTrainingLeaks(view(b), options.seed, base, run, checks);
  addAll(checks, report);
  if (!s.ok() || !(session.manifest().recipe.strict || options.l3))
    return s;
  auto runStrict = [&](const vd::Perturbation &p, bool baseOutputs,
                       vd::TrainingOutputs &out) {
    return baseOutputs
               ? runPerturbedTraining(session, b, p, out, &base.o, &base.lse)
               : runPerturbedTraining(session, b, p, out);
  };
  checks.clear();
  s = vd::checkStrictCausality(view(b), session.manifest().causal, options.seed,
                               base, runStrict, checks);
  addAll(checks, report);
  return s;
}

} // namespace flamia::run
