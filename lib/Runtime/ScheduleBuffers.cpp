//===- ScheduleBuffers.cpp - Host contents of the schedule buffers --------===//

#include "flamia/Runtime/ScheduleBuffers.h"

#include "flamia/Schedule/DocumentLayout.h"
#include "flamia/Schedule/ScheduleInvariants.h"
#include "flamia/Schedule/VarlenSchedule.h"
#include "flamia/Support/Validation.h"

#include <string>

namespace flamia::runtime {

Status validateCuSeqlens(const int32_t *cuSeqlens, size_t count,
                         int64_t numTokens) {
  std::string error;
  if (!validation::validateCuSeqlens(cuSeqlens, count, numTokens, error))
    return invalidArgument(error);
  return Status::success();
}

int64_t countScaleBlocks(const int32_t *cuSeqlens, size_t count) {
  int64_t nb = 0;
  for (size_t d = 0; d + 1 < count; ++d) {
    int64_t length = int64_t{cuSeqlens[d + 1]} - cuSeqlens[d];
    nb += (length + kVarlenScaleBlock - 1) / kVarlenScaleBlock;
  }
  return nb;
}

std::vector<int32_t> makeBlockInfo(const int32_t *cuSeqlens, size_t count) {
  std::vector<int32_t> info;
  info.reserve(static_cast<size_t>(2 * countScaleBlocks(cuSeqlens, count)));
  for (size_t d = 0; d + 1 < count; ++d) {
    for (int64_t start = cuSeqlens[d]; start < cuSeqlens[d + 1];
         start += kVarlenScaleBlock) {
      int64_t length = cuSeqlens[d + 1] - start;
      if (length > kVarlenScaleBlock)
        length = kVarlenScaleBlock;
      info.push_back(static_cast<int32_t>(start));
      info.push_back(static_cast<int32_t>(length));
    }
  }
  return info;
}

int64_t sectionBytesPerToken(const Manifest &manifest, bool keyTileItems,
                             int32_t queryHeadsPerKVHead) {
  // Two tensors (K and V, or Q and dO) of head_dim elements.
  int64_t elements = 2 * manifest.headDim;
  int64_t bytes = manifest.target.major >= 10
                      ? elements + (elements + 31) / 32 // E4M3 + E8M0
                      : 2 * elements;                   // bf16 copies
  return keyTileItems ? bytes * queryHeadsPerKVHead : bytes;
}

Status buildScheduleContents(const Manifest &manifest,
                             const std::vector<int32_t> &cuSeqlens,
                             int32_t numQHeads, int32_t numKVHeads,
                             bool checkInvariants, ScheduleContents &out,
                             std::optional<ScheduleOrder> order) {
  out = ScheduleContents();
  FLAMIA_RETURN_IF_ERROR(
      validateCuSeqlens(cuSeqlens.data(), cuSeqlens.size(),
                        cuSeqlens.empty() ? 0 : cuSeqlens.back()));
  out.numBlocks = countScaleBlocks(cuSeqlens.data(), cuSeqlens.size());
  out.blockInfo = makeBlockInfo(cuSeqlens.data(), cuSeqlens.size());
  if (!manifest.schedule.present)
    return Status::success();

  VarlenScheduleParams params;
  params.numQHeads = numQHeads;
  params.numKVHeads = numKVHeads;
  params.headDim = static_cast<int32_t>(manifest.headDim);
  params.causal = manifest.causal;
  params.blockM = manifest.schedule.blockM;
  params.blockN = manifest.schedule.blockN;
  params.safeBlock = manifest.schedule.safeBlock;
  params.weights = manifest.schedule.weights;
  params.order = order ? *order : manifest.schedule.order;
  params.l2SectionBytes = manifest.schedule.l2SectionBytes;
  params.sectionBytesPerToken =
      sectionBytesPerToken(manifest, /*keyTileItems=*/false, 1);
  VarlenSchedule schedule;
  std::string error;
  if (!buildVarlenSchedule(cuSeqlens.data(), cuSeqlens.size(), params, schedule,
                           error))
    return invalidArgument("building the varlen schedule: " + error);
  if (schedule.items.size() > static_cast<size_t>(INT32_MAX))
    return invalidArgument("the schedule has " +
                           std::to_string(schedule.items.size()) +
                           " work items, more than int32 counts");
  if (checkInvariants && !checkVarlenSchedule(schedule, error))
    return Status::error(ErrorCode::Internal,
                         "the varlen schedule breaks an invariant: " + error);
  out.hasItems = true;
  out.items = std::move(schedule.items);
  out.costs = std::move(schedule.costs);
  if (manifest.findBuffer(kKvItemsBuffer) < 0)
    return Status::success();

  // The backward's key-tile items: the same parameters (block_n is the key
  // tile), validated by the same builder code.
  VarlenSchedule kv;
  params.sectionBytesPerToken = sectionBytesPerToken(
      manifest, /*keyTileItems=*/true, params.queryHeadsPerKVHead());
  if (!buildKvTileSchedule(cuSeqlens.data(), cuSeqlens.size(), params, kv,
                           error))
    return invalidArgument("building the key-tile schedule: " + error);
  if (checkInvariants && !checkKvTileSchedule(kv, error))
    return Status::error(ErrorCode::Internal,
                         "the key-tile schedule breaks an invariant: " + error);
  out.hasKvItems = true;
  out.kvItems = std::move(kv.items);
  out.kvCosts = std::move(kv.costs);
  return Status::success();
}

} // namespace flamia::runtime
