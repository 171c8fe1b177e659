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

TEST(RecipeRegistry, Nvfp4MixedIsNotInTheNumericsLibraryYet) {
  RecipeConfig r;
  Status s = contractRecipe(*findRecipeKind("nvfp4-mixed"), false, 128, r);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "recipe nvfp4-mixed is not implemented by the numerics "
                       "library (it implements mxfp8)");
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
  s = checkKernels(*findRecipeKind("nvfp4-mixed"), false, "sm_100a", 128);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "no sm_100a kernels implement recipe nvfp4-mixed yet "
                       "(they implement mxfp8)");
  EXPECT_EQ(kernelTargets(), (std::vector<std::string>{"sm_90a", "sm_100a"}));
}

TEST(RecipeRegistry, BackwardKernelsOnSm90Only) {
  const RecipeKind &mx = *findRecipeKind("mxfp8");
  for (int64_t d : {64, 128})
    EXPECT_TRUE(checkBackwardKernels(mx, false, "sm_90a", d)) << "D=" << d;
  Status s = checkBackwardKernels(mx, false, "sm_100a", 128);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "no sm_100a backward kernels implement recipe mxfp8 "
                       "yet (they exist for sm_90a); the forward kernels do");
  // The forward's checks come first.
  s = checkBackwardKernels(mx, false, "sm_90a", 96);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message, "head dim 96 is not implemented by the kernels (64, 128)");
}

} // namespace
