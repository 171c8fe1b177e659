//===- Compiler.cpp - C API of the FLAMIA compiler ------------------------===//
//
// flamia/CAPI/Compiler.h over flamia::compileAttention and writeArtifacts
// (flamia/Compiler/Compile.h): the struct is checked here (pointers, size,
// the 0/1 flags), the spec by validateSpec (target, recipe, head dim, heads,
// safe block, scale), and every failure is a status plus a message.
//
//===----------------------------------------------------------------------===//
#include "flamia/CAPI/Compiler.h"

#include "flamia/Compiler/Compile.h"
#include "flamia/Support/Version.h"

#include "StructSize.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace {

thread_local std::string lastError;

flamia_status fail(flamia_status status, std::string message, char *err,
                   size_t errlen) {
  lastError = std::move(message);
  if (err && errlen) {
    size_t n = std::min(lastError.size(), errlen - 1);
    std::memcpy(err, lastError.data(), n);
    err[n] = '\0';
  }
  return status;
}

} // namespace

extern "C" {

int flamia_compiler_abi_version(void) { return FLAMIA_COMPILER_ABI_VERSION; }

const char *flamia_compiler_version(void) { return flamia::versionString(); }

const char *flamia_compiler_last_error(void) { return lastError.c_str(); }

void flamia_compile_spec_init(flamia_compile_spec *spec) {
  if (!spec)
    return;
  const flamia::AttentionSpec d;
  const flamia::CompileOptions o;
  std::memset(spec, 0, sizeof *spec);
  spec->struct_size = sizeof *spec;
  spec->head_dim = d.headDim;
  spec->heads = d.heads;
  spec->kv_heads = d.kvHeads;
  spec->causal = d.causal;
  spec->varlen = d.varlen;
  spec->safe_block = d.safeBlock;
  spec->softmax_scale = 0;
  spec->backward = d.backward;
  spec->overlap_softmax = d.overlapSoftmax;
  spec->scale_tiles = d.scaleTiles;
  spec->assemble = o.assemble;
  spec->require_cubin = o.requireCubin;
}

flamia_status flamia_compile_attention(const flamia_compile_spec *s,
                                       const char *outDir, char *err,
                                       size_t errlen) {
  auto invalid = [&](std::string message) {
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT, std::move(message), err,
                errlen);
  };
  if (!s)
    return invalid("spec is NULL");
  if (s->struct_size < sizeof(flamia_compile_spec))
    return invalid("spec->struct_size is " + std::to_string(s->struct_size) +
                   ", expected at least " +
                   std::to_string(sizeof(flamia_compile_spec)) +
                   " (call flamia_compile_spec_init)");
  if (!flamia::capi::tailIsZero(s, s->struct_size,
                                 sizeof(flamia_compile_spec)))
    return invalid("spec->struct_size is " + std::to_string(s->struct_size) +
                   " and the bytes past this library's " +
                   std::to_string(sizeof(flamia_compile_spec)) +
                   " are not zero (fields of a newer version)");
  if (!outDir || !*outDir)
    return invalid("out_dir is NULL or empty");
  struct Flag {
    const char *name;
    int32_t value;
  };
  for (Flag f :
       {Flag{"causal", s->causal}, Flag{"varlen", s->varlen},
        Flag{"backward", s->backward},
        Flag{"overlap_softmax", s->overlap_softmax},
        Flag{"scale_tiles", s->scale_tiles}, Flag{"assemble", s->assemble},
        Flag{"require_cubin", s->require_cubin}, Flag{"write_ir", s->write_ir}})
    if (f.value != 0 && f.value != 1)
      return invalid(std::string(f.name) + " must be 0 or 1, got " +
                     std::to_string(f.value));

  flamia::AttentionSpec spec;
  if (s->target)
    spec.target = s->target;
  if (s->recipe)
    spec.recipe = s->recipe;
  spec.headDim = s->head_dim;
  spec.heads = s->heads;
  spec.kvHeads = s->kv_heads;
  spec.causal = s->causal;
  spec.varlen = s->varlen;
  spec.safeBlock = s->safe_block;
  if (s->softmax_scale != 0)
    spec.softmaxScale = s->softmax_scale;
  spec.backward = s->backward;
  if (s->grad_dtype)
    spec.gradDtype = s->grad_dtype;
  spec.overlapSoftmax = s->overlap_softmax;
  spec.scaleTiles = s->scale_tiles;

  std::string error;
  if (!flamia::validateSpec(spec, error))
    return invalid(std::move(error));

  flamia::CompileOptions options;
  if (s->ptxas)
    options.ptxas = s->ptxas;
  options.assemble = s->assemble;
  options.requireCubin = s->require_cubin;
  flamia::CompileResult result;
  if (!flamia::compileAttention(spec, options, result, error)) {
    // The spec was valid: what fails now is ptxas or the compiler itself.
    flamia_status status = error.find("ptxas") != std::string::npos
                               ? FLAMIA_STATUS_INVALID_ARTIFACT
                               : FLAMIA_STATUS_INTERNAL;
    return fail(status, std::move(error), err, errlen);
  }
  if (!flamia::writeArtifacts(result, outDir, error, s->write_ir))
    return fail(FLAMIA_STATUS_INVALID_ARTIFACT, std::move(error), err, errlen);
  if (err && errlen)
    err[0] = '\0';
  return FLAMIA_STATUS_OK;
}

} // extern "C"
