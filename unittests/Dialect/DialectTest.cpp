//===- DialectTest.cpp - flamia dialect registration ------------*- C++ -*-===//
#include "flamia/Dialect/FlamiaDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;

TEST(FlamiaDialect, LoadsUnderItsNamespace) {
  MLIRContext ctx;
  EXPECT_EQ(ctx.getLoadedDialect("flamia"), nullptr);
  auto *dialect = ctx.getOrLoadDialect<flamia::FlamiaDialect>();
  ASSERT_NE(dialect, nullptr);
  EXPECT_EQ(dialect->getNamespace(), "flamia");
  EXPECT_EQ(ctx.getLoadedDialect("flamia"), dialect);
}
