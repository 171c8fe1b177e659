//===- RecipeRegistryTest.cpp - The recipe registry -----------------------===//
#include "flamia/Numerics/RecipeRegistry.h"

#include "gtest/gtest.h"

using namespace flamia::numerics;

namespace {

TEST(RecipeRegistry, SpellingsOfEveryKind) {
  ASSERT_EQ(recipeKinds().size(), 2u);
  const RecipeKind *mx = findRecipeKind("mxfp8");
  ASSERT_NE(mx, nullptr);
  EXPECT_EQ(findRecipeKindByDialectName("mxfp8"), mx);
  const RecipeKind *nv = findRecipeKind("nvfp4-mixed");
  ASSERT_NE(nv, nullptr);
  EXPECT_EQ(nv->dialectName, "nvfp4_mixed");
  EXPECT_EQ(findRecipeKindByDialectName("nvfp4_mixed"), nv);
  // One spelling per context: the dialect's is not the manifest's.
  EXPECT_EQ(findRecipeKind("nvfp4_mixed"), nullptr);
  EXPECT_EQ(findRecipeKindByDialectName("nvfp4-mixed"), nullptr);
  EXPECT_EQ(findRecipeKind("MXFP8"), nullptr);
  EXPECT_EQ(recipeKindNames(), "mxfp8, nvfp4-mixed");
  const RecipeKind *found = nullptr;
  ASSERT_TRUE(lookupRecipeKindByDialectName("nvfp4_mixed", found));
  EXPECT_EQ(found, nv);
  Status s = lookupRecipeKindByDialectName("fp6", found);
  ASSERT_FALSE(s);
  EXPECT_EQ(found, nullptr);
  EXPECT_EQ(s.message, "recipe fp6 is not in the recipe registry");
}

TEST(RecipeRegistry, ContractOfMxfp8IsThePreset) {
  RecipeConfig r;
  ASSERT_TRUE(contractRecipe(*findRecipeKind("mxfp8"), false, 256, r));
  EXPECT_EQ(r.safeBlock, 256);
  EXPECT_FALSE(r.strict);
  EXPECT_EQ(r.operand(OperandUse::QInQK).layout.tokenBlock, 1);
  for (OperandUse u : {OperandUse::KInQK, OperandUse::VInPV, OperandUse::DOInDOV,
                       OperandUse::VInDOV, OperandUse::KInDSK, OperandUse::QInDSQ,
                       OperandUse::DOInPDO}) {
    EXPECT_TRUE(r.operand(u).quantized) << operandUseName(u);
    EXPECT_EQ(r.operand(u).layout.tokenBlock, 32) << operandUseName(u);
    EXPECT_EQ(r.operand(u).element, ElementFormat::E4M3) << operandUseName(u);
  }
  RecipeConfig strict;
  ASSERT_TRUE(contractRecipe(*findRecipeKind("mxfp8"), true, 0, strict));
  EXPECT_TRUE(strict.strict);
  EXPECT_EQ(strict.safeBlock, 0);
  // L3: every head-dim-contracted operand per token; token-contracted ones
  // keep 32x32 blocks.
  for (OperandUse u : {OperandUse::QInQK, OperandUse::KInQK,
                       OperandUse::DOInDOV, OperandUse::VInDOV})
    EXPECT_EQ(strict.operand(u).layout.tokenBlock, 1) << operandUseName(u);
  EXPECT_EQ(strict.operand(OperandUse::VInPV).layout.tokenBlock, 32);
}

TEST(RecipeRegistry, Nvfp4MixedQuantizesEachGemmByItsContractionAxis) {
  for (bool strict : {false, true}) {
    RecipeConfig r;
    ASSERT_TRUE(contractRecipe(*findRecipeKind("nvfp4-mixed"), strict, 128, r));
    EXPECT_EQ(r.name, strict ? "nvfp4-mixed-strict" : "nvfp4-mixed");
    EXPECT_EQ(r.strict, strict);
    EXPECT_TRUE(r.validate(128));
    EXPECT_TRUE(r.validate(64));
    for (int u = 0; u < kNumOperandUses; ++u) {
      const OperandUse use = static_cast<OperandUse>(u);
      const OperandQuantization &op = r.operand(use);
      ASSERT_TRUE(op.quantized) << operandUseName(use);
      if (contractsOverHeadDim(use)) {
        // Q, K in Q K^T and dO, V in dO V^T: NVFP4 per token, 1x16, in
        // strict mode too.
        EXPECT_EQ(op.element, ElementFormat::E2M1) << operandUseName(use);
        EXPECT_EQ(op.scale, ScaleFormat::UE4M3) << operandUseName(use);
        EXPECT_EQ(op.layout, ScaleLayout::perToken(16)) << operandUseName(use);
        EXPECT_EQ(op.describe(), "NVFP4 1x16");
      } else {
        EXPECT_EQ(op.element, ElementFormat::E4M3) << operandUseName(use);
        EXPECT_EQ(op.scale, ScaleFormat::E8M0) << operandUseName(use);
        EXPECT_EQ(op.layout, ScaleLayout::documentLocal(32, 32))
            << operandUseName(use);
      }
    }
    EXPECT_TRUE(r.quantizeP);
    EXPECT_TRUE(r.dS.quantized);
    EXPECT_EQ(r.dS.block, 32);
    EXPECT_EQ(r.safeBlock, 128);
  }
}

// The contraction axis of every operand use, by hand: the two GEMMs that
// contract over the head dim read both operands K-major (Q K^T, dO V^T);
// the other four contract over tokens and read theirs MN-major. The recipe
// checks (NVFP4 only on head-dim-contracted operands) rest on this table.
TEST(RecipeConfig, ContractionAxisOfEveryOperandUse) {
  struct Expected {
    OperandUse use;
    const char *name;
    bool overHeadDim;
  } table[] = {{OperandUse::QInQK, "Q in QK^T", true},
               {OperandUse::KInQK, "K in QK^T", true},
               {OperandUse::VInPV, "V in PV", false},
               {OperandUse::DOInDOV, "dO in dO V^T", true},
               {OperandUse::VInDOV, "V in dO V^T", true},
               {OperandUse::KInDSK, "K in dS K", false},
               {OperandUse::QInDSQ, "Q in dS^T Q", false},
               {OperandUse::DOInPDO, "dO in P^T dO", false}};
  static_assert(sizeof(table) / sizeof(table[0]) == kNumOperandUses,
                "one row per operand use");
  for (const Expected &e : table) {
    EXPECT_STREQ(operandUseName(e.use), e.name);
    EXPECT_EQ(contractsOverHeadDim(e.use), e.overHeadDim) << e.name;
  }
}

TEST(RecipeConfig, Ue4m3ScalesNeedE2M1InBlocksOf16) {
  RecipeConfig r;
  ASSERT_TRUE(recipeFromName("nvfp4-mixed", r));
  r.operand(OperandUse::KInQK).layout = ScaleLayout::perToken(32);
  Status s = r.validate(128);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "K in QK^T: UE4M3 (NVFP4) scales need E2M1 elements "
                       "in blocks of 16 channels, got NVFP4 1x32");
  ASSERT_TRUE(recipeFromName("nvfp4-mixed", r));
  r.operand(OperandUse::QInQK).element = ElementFormat::E4M3;
  s = r.validate(128);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message.find("Q in QK^T: UE4M3 (NVFP4) scales need E2M1"),
            std::string::npos)
      << s.message;
  // D = 40 is not a multiple of 16.
  ASSERT_TRUE(recipeFromName("nvfp4-mixed", r));
  EXPECT_FALSE(r.validate(40));
}

TEST(RecipeRegistry, KernelsOfEachTargetAndHeadDim) {
  const RecipeKind &mx = *findRecipeKind("mxfp8");
  for (const char *target : {"sm_90a", "sm_100a"})
    for (int64_t d : {64, 128})
      EXPECT_TRUE(checkKernels(mx, false, target, d)) << target << " D=" << d;
  Status s = checkKernels(mx, false, "sm_90a", 96);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "head dim 96 is not implemented by the kernels (64, 128)");
  s = checkKernels(mx, false, "sm_80", 128);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "unsupported target 'sm_80' (sm_90a, sm_100a)");
  s = checkKernels(mx, true, "sm_100a", 128);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message.find("no sm_100a kernels implement strict mxfp8"),
            std::string::npos)
      << s.message;
  // nvfp4-mixed: sm_100a has its forward (both head dims, strict preset
  // too); its backward: BackwardKernels below.
  for (int64_t d : {64, 128})
    for (bool strict : {false, true})
      EXPECT_TRUE(checkKernels(*findRecipeKind("nvfp4-mixed"), strict,
                               "sm_100a", d))
          << "D=" << d;
  s = checkKernels(*findRecipeKind("nvfp4-mixed"), false, "sm_100a", 96);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "head dim 96 is not implemented by the kernels (64, 128)");
  EXPECT_EQ(kernelTargets(), (std::vector<std::string>{"sm_90a", "sm_100a"}));
}

TEST(RecipeRegistry, BackwardKernels) {
  const RecipeKind &mx = *findRecipeKind("mxfp8");
  for (const char *target : {"sm_90a", "sm_100a"})
    for (int64_t d : {64, 128})
      EXPECT_TRUE(checkBackwardKernels(mx, false, target, d))
          << target << " D=" << d;
  // nvfp4-mixed has backward kernels on both targets, both head dims (its
  // strict preset has the same kernels).
  const RecipeKind &nv = *findRecipeKind("nvfp4-mixed");
  for (const char *target : {"sm_90a", "sm_100a"})
    for (int64_t d : {64, 128})
      for (bool strict : {false, true})
        EXPECT_TRUE(checkBackwardKernels(nv, strict, target, d))
            << target << " D=" << d << " strict=" << strict;
  // Strict mxfp8 has backward kernels on sm_90a only, and no sm_100a
  // forward either (said first).
  EXPECT_TRUE(checkBackwardKernels(mx, true, "sm_90a", 128));
  Status s = checkBackwardKernels(mx, true, "sm_100a", 128);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "no sm_100a kernels implement strict mxfp8 (L3 "
                       "causality: K quantized per token) yet; they quantize "
                       "K in 32x32 token blocks");
  s = checkBackwardKernels(nv, false, "sm_100a", 96);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "head dim 96 is not implemented by the kernels (64, 128)");
  s = checkBackwardKernels(mx, false, "sm_90a", 96);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "head dim 96 is not implemented by the kernels (64, 128)");
}

// A target with forward kernels only (as sm_100a was before its backward):
// the error says where the backward exists.
TEST(RecipeRegistry, ForwardOnlyTarget) {
  RecipeKind kind{"mxfp8", "mxfp8", "mxfp8", "mxfp8-strict",
                  {{"sm_90a", {64, 128}, true, true},
                   {"sm_100a", {64, 128}, false, false}}};
  EXPECT_TRUE(checkKernels(kind, false, "sm_100a", 128));
  Status s = checkBackwardKernels(kind, false, "sm_100a", 128);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "no sm_100a backward kernels implement recipe mxfp8 "
                       "yet (they exist for sm_90a); the forward kernels do");
}

} // namespace
