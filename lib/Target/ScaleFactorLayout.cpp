//===- ScaleFactorLayout.cpp - The 128x4 tiled scale-factor layout --------===//
#include "flamia/Target/ScaleFactorLayout.h"

namespace flamia {

namespace {
bool checkView(const ScaleTensorView &v, uint32_t head, const char *what,
               std::string &error) {
  if (!v.data || !v.heads || !v.channelBlocks) {
    error = std::string(what) + " scale tensor is empty";
    return false;
  }
  if (head >= v.heads) {
    error = std::string(what) + " scales: head " + std::to_string(head) +
            " is outside [0, " + std::to_string(v.heads) + ")";
    return false;
  }
  return true;
}
} // namespace

bool fillKeyScaleTile(const ScaleTensorView &k, uint32_t head,
                      uint64_t firstKeyBlock, uint32_t validKeys,
                      uint32_t firstChannelBlock, uint8_t pad, uint8_t *tile,
                      std::string &error) {
  if (!checkView(k, head, "K", error))
    return false;
  if (validKeys > kSfTileRows) {
    error = "a key tile holds at most 128 keys, not " + std::to_string(validKeys);
    return false;
  }
  uint64_t lastBlock = firstKeyBlock + (validKeys ? (validKeys - 1) / kScaleBlock : 0);
  if (validKeys && lastBlock >= k.rows) {
    error = "K scales: key blocks [" + std::to_string(firstKeyBlock) + ", " +
            std::to_string(lastBlock) + "] are outside the " +
            std::to_string(k.rows) + " token blocks";
    return false;
  }
  if (firstChannelBlock >= k.channelBlocks) {
    error = "K scales: channel block " + std::to_string(firstChannelBlock) +
            " is outside [0, " + std::to_string(k.channelBlocks) + ")";
    return false;
  }
  fillSfTile(tile, [&](uint32_t r, uint32_t kb) -> uint8_t {
    uint32_t c = firstChannelBlock + kb;
    if (r >= validKeys || c >= k.channelBlocks)
      return pad;
    // Row r is key firstKeyBlock * 32 + r of the document: its token block is
    // firstKeyBlock + r / 32, whose one scale covers all 32 of its rows.
    return k.at(firstKeyBlock + r / kScaleBlock, head, c);
  });
  return true;
}

bool fillValueScaleTile(const ScaleTensorView &v, uint32_t head,
                        uint32_t firstChannel, uint64_t firstKeyBlock,
                        uint32_t validKeyBlocks, uint8_t pad, uint8_t *tile,
                        std::string &error) {
  if (!checkView(v, head, "V", error))
    return false;
  if (firstChannel % kScaleBlock) {
    error = "V scales: the first channel " + std::to_string(firstChannel) +
            " of a tile must be a multiple of 32";
    return false;
  }
  if (firstChannel / kScaleBlock >= v.channelBlocks) {
    error = "V scales: channel " + std::to_string(firstChannel) +
            " is past the head dim " + std::to_string(v.channelBlocks * kScaleBlock);
    return false;
  }
  if (validKeyBlocks > kSfTileKBlocks) {
    error = "a value scale tile covers at most 4 key blocks, not " +
            std::to_string(validKeyBlocks);
    return false;
  }
  if (validKeyBlocks && firstKeyBlock + validKeyBlocks > v.rows) {
    error = "V scales: key blocks [" + std::to_string(firstKeyBlock) + ", " +
            std::to_string(firstKeyBlock + validKeyBlocks - 1) +
            "] are outside the " + std::to_string(v.rows) + " token blocks";
    return false;
  }
  fillSfTile(tile, [&](uint32_t n, uint32_t kb) -> uint8_t {
    uint32_t c = (firstChannel + n) / kScaleBlock;
    if (kb >= validKeyBlocks || c >= v.channelBlocks)
      return pad;
    return v.at(firstKeyBlock + kb, head, c);
  });
  return true;
}

bool fillQueryScaleTile(const ScaleTensorView &q, uint32_t head,
                        uint64_t firstToken, uint32_t validQueries,
                        uint32_t firstChannelBlock, uint8_t pad, uint8_t *tile,
                        std::string &error) {
  if (!checkView(q, head, "Q", error))
    return false;
  if (validQueries > kSfTileRows) {
    error = "a query tile holds at most 128 queries, not " +
            std::to_string(validQueries);
    return false;
  }
  if (validQueries && firstToken + validQueries > q.rows) {
    error = "Q scales: tokens [" + std::to_string(firstToken) + ", " +
            std::to_string(firstToken + validQueries - 1) +
            "] are outside the " + std::to_string(q.rows) + " tokens";
    return false;
  }
  if (firstChannelBlock >= q.channelBlocks) {
    error = "Q scales: channel block " + std::to_string(firstChannelBlock) +
            " is outside [0, " + std::to_string(q.channelBlocks) + ")";
    return false;
  }
  fillSfTile(tile, [&](uint32_t r, uint32_t kb) -> uint8_t {
    uint32_t c = firstChannelBlock + kb;
    if (r >= validQueries || c >= q.channelBlocks)
      return pad;
    return q.at(firstToken + r, head, c);
  });
  return true;
}

bool documentTokenBlock(const int32_t *cuSeqlens, uint32_t numDocs,
                        uint64_t token, uint32_t blockTokens, uint64_t &block,
                        std::string &error) {
  if (!cuSeqlens || numDocs == 0 || cuSeqlens[0] != 0 || blockTokens == 0) {
    error = "cu_seqlens must hold numDocs + 1 offsets starting at 0, and the "
            "block size must be positive";
    return false;
  }
  for (uint32_t d = 0; d < numDocs; ++d)
    if (cuSeqlens[d + 1] < cuSeqlens[d]) {
      error = "cu_seqlens decreases at document " + std::to_string(d);
      return false;
    }
  uint64_t blocksBefore = 0;
  for (uint32_t d = 0; d < numDocs; ++d) {
    uint64_t begin = uint64_t(cuSeqlens[d]), end = uint64_t(cuSeqlens[d + 1]);
    if (token < end) {
      block = blocksBefore + (token - begin) / blockTokens;
      return true;
    }
    blocksBefore += (end - begin + blockTokens - 1) / blockTokens;
  }
  error = "token " + std::to_string(token) + " is past the last document (" +
          std::to_string(cuSeqlens[numDocs]) + " tokens)";
  return false;
}

} // namespace flamia
