//===- ReferenceCAPITest.cpp - flamia/CAPI/Reference.h, checked ---*- C++ -*-===//
//
// libflamia_reference.so against the numerics library it wraps (the same
// results bit for bit, GQA and documents included), and its errors: every bad
// argument is a status plus a message naming it, never a crash.
//
//===----------------------------------------------------------------------===//
#include "flamia/CAPI/Reference.h"

#include "flamia/Numerics/RecipeConfig.h"
#include "flamia/Numerics/ReferenceAttention.h"
#include "flamia/Numerics/SyntheticInputs.h"
#include "flamia/Support/Version.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace flamia;
using namespace flamia::numerics;

namespace {

struct Call {
  AttentionTensors t;
  std::vector<int32_t> cu;
  std::vector<float> o, lse, dq, dk, dv;
  flamia_reference_args a;

  Call(std::vector<int32_t> cuSeqlens, int64_t hq, int64_t hkv, int64_t d)
      : cu(std::move(cuSeqlens)) {
    DocumentLayout docs;
    EXPECT_TRUE(DocumentLayout::fromCuSeqlens(cu, std::nullopt, docs));
    t = makeSyntheticInputs(docs, hq, hkv, d, InputKind::Random, 5);
    const int64_t T = cu.back();
    o.resize(T * hq * d);
    lse.resize(hq * T);
    dq.resize(T * hq * d);
    dk.resize(T * hkv * d);
    dv.resize(T * hkv * d);
    flamia_reference_args_init(&a);
    a.num_tokens = T;
    a.num_q_heads = static_cast<int32_t>(hq);
    a.num_kv_heads = static_cast<int32_t>(hkv);
    a.head_dim = static_cast<int32_t>(d);
    a.num_docs = static_cast<int32_t>(cu.size()) - 1;
    a.cu_seqlens = cu.data();
    a.q = t.q.data();
    a.k = t.k.data();
    a.v = t.v.data();
    a.o = o.data();
    a.lse = lse.data();
    a.grad_o = t.dO.data();
    a.dq = dq.data();
    a.dk = dk.data();
    a.dv = dv.data();
  }
};

std::string error() { return flamia_reference_last_error(); }

TEST(ReferenceCAPI, InitSetsTheDocumentedDefaults) {
  flamia_reference_args a;
  flamia_reference_args_init(&a);
  EXPECT_EQ(a.struct_size, sizeof a);
  EXPECT_STREQ(a.recipe, "mxfp8");
  EXPECT_EQ(a.safe_block, -1);
  EXPECT_EQ(a.causal, 1);
  EXPECT_EQ(a.softmax_scale, 0.0f);
  EXPECT_EQ(a.q, nullptr);
  flamia_reference_args_init(nullptr); // a no-op
}

TEST(ReferenceCAPI, SameBitsAsTheNumericsLibrary) {
  Call c({0, 100, 100, 101, 230}, 4, 2, 64);
  ASSERT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_OK) << error();
  ASSERT_EQ(flamia_reference_backward(&c.a), FLAMIA_STATUS_OK) << error();
  RecipeConfig recipe;
  ASSERT_TRUE(recipeFromName("mxfp8", recipe));
  ForwardOutputs f;
  BackwardOutputs g;
  ASSERT_TRUE(runAttention(c.t.inputs(), recipe, c.t.dO.data(), f, &g));
  EXPECT_EQ(c.o, f.o);
  EXPECT_EQ(c.lse, f.lse);
  EXPECT_EQ(c.dq, g.dq);
  EXPECT_EQ(c.dk, g.dk);
  EXPECT_EQ(c.dv, g.dv);
}

TEST(ReferenceCAPI, RecipeSafeBlockAndCausalAreHonoured) {
  Call c({0, 160}, 2, 2, 64);
  ASSERT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_OK) << error();
  const std::vector<float> causal128 = c.o;
  c.a.safe_block = 0;
  ASSERT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_OK) << error();
  EXPECT_NE(c.o, causal128);
  c.a.safe_block = -1;
  c.a.causal = 0;
  ASSERT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_OK) << error();
  EXPECT_NE(c.o, causal128);
  c.a.causal = 1;
  c.a.recipe = "none";
  ASSERT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_OK) << error();
  EXPECT_NE(c.o, causal128);
  ASSERT_EQ(flamia_reference_backward(&c.a), FLAMIA_STATUS_OK) << error();
}

struct BadCase {
  const char *what;
  void (*spoil)(Call &);
  const char *message;
};

TEST(ReferenceCAPI, BadArgumentsAreNamed) {
  const BadCase cases[] = {
      {"struct_size", [](Call &c) { c.a.struct_size = 8; },
       "args->struct_size is 8"},
      {"recipe", [](Call &c) { c.a.recipe = "fp4ever"; }, "fp4ever"},
      {"safe block", [](Call &c) { c.a.safe_block = 100; },
       "safe_block must be -1 (the recipe's), 0 (none) or a positive "
       "multiple of 32 up to 2^20, got 100"},
      {"safe block of none",
       [](Call &c) {
         c.a.recipe = "none";
         c.a.safe_block = 128;
       },
       "safe_block does not apply to recipe none"},
      {"causal", [](Call &c) { c.a.causal = 2; }, "causal must be 0 or 1"},
      {"heads", [](Call &c) { c.a.num_kv_heads = 3; }, "3"},
      {"head dim", [](Call &c) { c.a.head_dim = 0; }, "head_dim must be >= 1"},
      {"documents", [](Call &c) { c.a.num_docs = 0; },
       "num_docs must be >= 1"},
      {"cu_seqlens NULL", [](Call &c) { c.a.cu_seqlens = nullptr; },
       "cu_seqlens is NULL"},
      {"cu_seqlens end", [](Call &c) { c.cu.back() = 50; }, "cu_seqlens"},
      {"cu_seqlens order", [](Call &c) { c.cu[1] = 150; }, "cu_seqlens"},
      {"q NULL", [](Call &c) { c.a.q = nullptr; }, "q is NULL"},
      {"lse NULL", [](Call &c) { c.a.lse = nullptr; }, "lse is NULL"},
      {"softmax scale", [](Call &c) { c.a.softmax_scale = -1.0f; },
       "softmax"},
  };
  for (const BadCase &bad : cases) {
    Call c({0, 80, 144}, 2, 2, 64);
    bad.spoil(c);
    EXPECT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_INVALID_ARGUMENT)
        << bad.what;
    EXPECT_NE(error().find(bad.message), std::string::npos)
        << bad.what << ": " << error();
  }
  EXPECT_EQ(flamia_reference_forward(nullptr), FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "args is NULL");
}

TEST(ReferenceCAPI, ALargerStructNeedsZeroBytesPastThisVersion) {
  // A newer caller's struct: accepted while the fields this library does
  // not know are zero, refused (named) otherwise.
  struct Newer {
    flamia_reference_args a;
    int64_t unknown;
  };
  Call c({0, 64}, 2, 2, 64);
  Newer n{c.a, 0};
  n.a.struct_size = sizeof n;
  EXPECT_EQ(flamia_reference_forward(&n.a), FLAMIA_STATUS_OK) << error();
  n.unknown = 7;
  EXPECT_EQ(flamia_reference_forward(&n.a), FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(error().find("are not zero (fields of a newer version)"),
            std::string::npos)
      << error();
}

TEST(ReferenceCAPI, TheBackwardNamesAMissingGradient) {
  Call c({0, 64}, 2, 2, 64);
  ASSERT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_OK) << error();
  c.a.dk = nullptr;
  EXPECT_EQ(flamia_reference_backward(&c.a), FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(error(), "dk is NULL (the backward needs it)");
}

TEST(ReferenceCAPI, HeadDimMustFitTheScaleBlocks) {
  Call c({0, 64}, 2, 2, 48);
  EXPECT_EQ(flamia_reference_forward(&c.a), FLAMIA_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(error().find("48"), std::string::npos) << error();
}

TEST(ReferenceCAPI, VersionIsTheProjectVersion) {
  EXPECT_STREQ(flamia_reference_version(), FLAMIA_VERSION_STRING);
}

} // namespace
