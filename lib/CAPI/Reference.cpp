//===- Reference.cpp - C API of the CPU reference -------------------------===//
//
// flamia/CAPI/Reference.h over flamia::numerics (ReferenceAttention.h): the
// arguments are checked here (pointers, sizes, the recipe and safe block) or
// by validateAttentionInputs (heads, documents, softmax scale), and every
// failure is a status plus a message naming the argument.
//
//===----------------------------------------------------------------------===//
#include "flamia/CAPI/Reference.h"

#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/ReferenceAttention.h"
#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Support/Version.h"

#include "StructSize.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace flamia;
using namespace flamia::numerics;

namespace {

thread_local std::string lastError;

flamia_status fail(flamia_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

flamia_status fail(const Status &s) {
  return fail(s.code == ErrorCode::InvalidArgument
                  ? FLAMIA_STATUS_INVALID_ARGUMENT
                  : FLAMIA_STATUS_INTERNAL,
              s.message);
}

/// What both calls share: the struct, the recipe, the sizes, the documents.
struct Checked {
  RecipeConfig recipe;
  DocumentLayout docs;
  AttentionInputs in;
};

flamia_status check(const flamia_reference_args *a, Checked &c) {
  if (!a)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT, "args is NULL");
  if (a->struct_size < sizeof(flamia_reference_args))
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                "args->struct_size is " + std::to_string(a->struct_size) +
                    ", expected at least " +
                    std::to_string(sizeof(flamia_reference_args)) +
                    " (call flamia_reference_args_init)");
  if (!flamia::capi::tailIsZero(a, a->struct_size, sizeof(flamia_reference_args)))
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                "args->struct_size is " + std::to_string(a->struct_size) +
                    " and the bytes past this library's " +
                    std::to_string(sizeof(flamia_reference_args)) +
                    " are not zero (fields of a newer version)");
  const std::string name = a->recipe ? a->recipe : "mxfp8";
  if (Status s = recipeFromName(name, c.recipe); !s)
    return fail(s);
  if (a->safe_block != -1) {
    if (c.recipe.float64Reference && a->safe_block != 0)
      return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                  "safe_block does not apply to recipe none (got " +
                      std::to_string(a->safe_block) + "; use -1 or 0)");
    if (a->safe_block < 0 || a->safe_block % 32 != 0 ||
        a->safe_block > (int64_t{1} << 20))
      return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                  "safe_block must be -1 (the recipe's), 0 (none) or a "
                  "positive multiple of 32 up to 2^20, got " +
                      std::to_string(a->safe_block));
    if (!c.recipe.float64Reference)
      c.recipe.safeBlock = a->safe_block;
  }
  if (a->causal != 0 && a->causal != 1)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                "causal must be 0 or 1, got " + std::to_string(a->causal));
  if (a->num_tokens < 0)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                "num_tokens must be >= 0, got " +
                    std::to_string(a->num_tokens));
  if (a->head_dim < 1)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                "head_dim must be >= 1, got " + std::to_string(a->head_dim));
  if (a->num_docs < 1)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                "num_docs must be >= 1, got " + std::to_string(a->num_docs));
  if (!a->cu_seqlens)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT, "cu_seqlens is NULL");
  if (Status s = DocumentLayout::fromCuSeqlens(
          a->cu_seqlens, int64_t{a->num_docs} + 1, a->num_tokens, c.docs);
      !s)
    return fail(s);
  if (!c.recipe.float64Reference)
    if (Status s = c.recipe.validate(a->head_dim); !s)
      return fail(s);
  c.in.numTokens = a->num_tokens;
  c.in.numHeads = a->num_q_heads;
  c.in.numKvHeads = a->num_kv_heads;
  c.in.headDim = a->head_dim;
  c.in.q = a->q;
  c.in.k = a->k;
  c.in.v = a->v;
  c.in.docs = &c.docs;
  c.in.causal = a->causal == 1;
  c.in.softmaxScale = a->softmax_scale;
  if (Status s = validateAttentionInputs(c.in); !s)
    return fail(s);
  const char *missing = !a->q     ? "q"
                        : !a->k   ? "k"
                        : !a->v   ? "v"
                        : !a->o   ? "o"
                        : !a->lse ? "lse"
                                  : nullptr;
  if (missing && a->num_tokens > 0)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                std::string(missing) + " is NULL");
  return FLAMIA_STATUS_OK;
}

size_t count(int64_t t, int64_t h, int64_t d) {
  return static_cast<size_t>(t) * static_cast<size_t>(h) *
         static_cast<size_t>(d);
}

void copyOut(const std::vector<float> &from, float *to) {
  if (!from.empty())
    std::memcpy(to, from.data(), from.size() * sizeof(float));
}

} // namespace

extern "C" {

void flamia_reference_args_init(flamia_reference_args *a) {
  if (!a)
    return;
  std::memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  a->recipe = "mxfp8";
  a->safe_block = -1;
  a->causal = 1;
}

flamia_status flamia_reference_forward(const flamia_reference_args *a) {
  Checked c;
  if (flamia_status s = check(a, c); s != FLAMIA_STATUS_OK)
    return s;
  ForwardOutputs f;
  if (Status s = runAttention(c.in, c.recipe, nullptr, f, nullptr); !s)
    return fail(s);
  if (f.o.size() != count(a->num_tokens, a->num_q_heads, a->head_dim) ||
      f.lse.size() != count(a->num_q_heads, a->num_tokens, 1))
    return fail(FLAMIA_STATUS_INTERNAL, "reference outputs have wrong sizes");
  copyOut(f.o, a->o);
  copyOut(f.lse, a->lse);
  return FLAMIA_STATUS_OK;
}

flamia_status flamia_reference_backward(const flamia_reference_args *a) {
  Checked c;
  if (flamia_status s = check(a, c); s != FLAMIA_STATUS_OK)
    return s;
  const char *missing = !a->grad_o ? "grad_o"
                        : !a->dq   ? "dq"
                        : !a->dk   ? "dk"
                        : !a->dv   ? "dv"
                                   : nullptr;
  if (missing && a->num_tokens > 0)
    return fail(FLAMIA_STATUS_INVALID_ARGUMENT,
                std::string(missing) + " is NULL (the backward needs it)");
  BackwardOutputs g;
  if (c.recipe.float64Reference) {
    ForwardOutputs f;
    if (Status s = float64Attention(c.in, a->grad_o, f, &g); !s)
      return fail(s);
  } else if (Status s = referenceBackward(c.in, c.recipe, a->grad_o, a->o,
                                          a->lse, g);
             !s) {
    return fail(s);
  }
  const size_t nq = count(a->num_tokens, a->num_q_heads, a->head_dim);
  const size_t nkv = count(a->num_tokens, a->num_kv_heads, a->head_dim);
  if (g.dq.size() != nq || g.dk.size() != nkv || g.dv.size() != nkv)
    return fail(FLAMIA_STATUS_INTERNAL, "reference gradients have wrong sizes");
  copyOut(g.dq, a->dq);
  copyOut(g.dk, a->dk);
  copyOut(g.dv, a->dv);
  return FLAMIA_STATUS_OK;
}

const char *flamia_reference_last_error(void) { return lastError.c_str(); }

const char *flamia_reference_version(void) { return versionString(); }

} // extern "C"
