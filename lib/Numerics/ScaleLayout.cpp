//===- ScaleLayout.cpp - Token-block x channel-block scale layouts --------===//
#include "flamia/Numerics/ScaleLayout.h"

#include <algorithm>

namespace flamia::numerics {

std::string ScaleLayout::name() const {
  if (blocking == TokenBlocking::PerTensor)
    return "tensor";
  std::string s = std::to_string(tokenBlock) + "x" + std::to_string(channelBlock);
  if (blocking == TokenBlocking::Packed && tokenBlock > 1)
    s += " packed";
  return s;
}

Status ScaleLayout::validate(int64_t headDim) const {
  if (blocking == TokenBlocking::PerTensor)
    return Status::success();
  if (tokenBlock < 1 || channelBlock < 1)
    return Status::error("block sizes must be positive, got " + name());
  if (headDim % channelBlock != 0)
    return Status::error("head dim " + std::to_string(headDim) +
                         " is not divisible by the channel block " +
                         std::to_string(channelBlock));
  return Status::success();
}

TokenBlocks makeTokenBlocks(const DocumentLayout &docs, int64_t blockSize,
                            TokenBlocking blocking) {
  TokenBlocks blocks;
  const int64_t T = docs.numTokens();
  blocks.blockOfToken.resize(static_cast<size_t>(T));
  auto addBlock = [&blocks](int64_t b, int64_t e) {
    int32_t id = static_cast<int32_t>(blocks.begin.size());
    blocks.begin.push_back(b);
    blocks.end.push_back(e);
    for (int64_t t = b; t < e; ++t)
      blocks.blockOfToken[t] = id;
  };
  switch (blocking) {
  case TokenBlocking::PerTensor:
    addBlock(0, T);
    break;
  case TokenBlocking::Packed:
    for (int64_t b = 0; b < T; b += blockSize)
      addBlock(b, std::min(b + blockSize, T));
    break;
  case TokenBlocking::DocumentLocal:
    for (int d = 0; d < docs.numDocuments(); ++d)
      for (int64_t b = docs.begin(d); b < docs.end(d); b += blockSize)
        addBlock(b, std::min(b + blockSize, docs.end(d)));
    break;
  }
  return blocks;
}

TokenBlocks makeTokenBlocks(const DocumentLayout &docs,
                            const ScaleLayout &layout) {
  return makeTokenBlocks(docs, layout.tokenBlock, layout.blocking);
}

} // namespace flamia::numerics
