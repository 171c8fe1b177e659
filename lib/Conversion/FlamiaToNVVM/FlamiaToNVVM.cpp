//===- FlamiaToNVVM.cpp - convert-flamia-to-nvvm --------------------------===//
//
// Lowers each flamia.kernel to an NVVM kernel in a gpu.module:
//  1. plan shared memory and parameters (KernelPlan);
//  2. roles -> warpgroup branches with setmaxnreg (one thread for a
//     single-thread role);
//  3. the kernel -> llvm.func: tensor-map parameters byval + grid_constant,
//     global pointers, the mbarrier-initialization prologue;
//  4. flamia ops -> LLVM/NVVM by conversion patterns (fragments become the
//     target's registers; scf loops carry them);
//  5. scf, arith, cf, gpu -> LLVM/NVVM by the upstream conversions.
// Each kernel's parameters and resources are recorded in the module
// attribute `flamia.kernel_infos` for the runtime manifest.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "KernelPlan.h"
#include "Patterns.h"

#include "flamia/Conversion/Passes.h"
#include "flamia/Transforms/PassOrder.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

namespace flamia {
#define GEN_PASS_DEF_CONVERTFLAMIATONVVM
#include "flamia/Conversion/Passes.h.inc"
} // namespace flamia

using namespace mlir;
using namespace flamia;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

FlamiaTypeConverter::FlamiaTypeConverter(MLIRContext *ctx,
                                         const TargetInfo &target)
    : target(target) {
  addConversion([](Type t) { return t; });
  addConversion([ctx](GlobalType) {
    return LLVM::LLVMPointerType::get(ctx, AddressSpace::Generic);
  });
  addConversion([ctx](SmemType) {
    return LLVM::LLVMPointerType::get(ctx, AddressSpace::Shared);
  });
  addConversion([ctx](PipelineType) {
    return LLVM::LLVMPointerType::get(ctx, AddressSpace::Shared);
  });
  addConversion([ctx](QueueType) {
    return LLVM::LLVMStructType::getLiteral(
        ctx, {LLVM::LLVMPointerType::get(ctx, AddressSpace::Generic),
              LLVM::LLVMPointerType::get(ctx, AddressSpace::Shared)});
  });
  addConversion([ctx](FragmentType t) -> Type {
    // The 128 threads of a warpgroup share the fragment: on sm_90a 64 rows
    // in wgmma's layouts, on sm_100a 128 rows, one per thread. Narrow
    // elements are packed into 32-bit registers, the lower column in the
    // low bits.
    int64_t perThread = t.getRows() * t.getCols() / 128;
    if (t.getElementType().isF32())
      return LLVM::LLVMStructType::getLiteral(
          ctx, SmallVector<Type>(perThread, Float32Type::get(ctx)));
    int64_t perWord = 32 / t.getElementType().getIntOrFloatBitWidth();
    return LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(perThread / perWord, IntegerType::get(ctx, 32)));
  });
  int64_t rowsPerThread = target.getFragmentLayout().rowsPerThread();
  addConversion([ctx, rowsPerThread](RowsType) {
    // One value per row the thread holds (two of a wgmma accumulator on
    // sm_90a, one on sm_100a).
    return LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(rowsPerThread, Float32Type::get(ctx)));
  });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs).getResult(0);
  };
  addSourceMaterialization(cast);
  addTargetMaterialization(cast);
}

namespace {

struct SelectOfFlamiaValues : OpConversionPattern<arith::SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::SelectOp>(
        op, adaptor.getCondition(), adaptor.getTrueValue(),
        adaptor.getFalseValue());
    return success();
  }
};

std::string dtypeName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  return "u8"; // FP8/FP4 codes and scale bytes
}

/// The registers every thread of a warp-specialized kernel starts with:
/// the 64K registers of a multiprocessor shared out among `threads`, in
/// granules of 8 (168 for the 384 threads of three warpgroups, 128 for
/// four). A role's setmaxnreg increases from there or decreases to it.
/// Smaller kernels (the one-warpgroup kernels of the lit tests) are held to
/// the three-warpgroup count.
int64_t launchRegisters(int64_t threads) {
  return std::min<int64_t>(65536 / threads / 8 * 8, 168);
}

/// Roles become an if / else-if chain on the warpgroup index. The chain
/// (rather than one `if` per role) keeps each role's code unreachable from
/// the others, so that ptxas applies each role's setmaxnreg budget to its
/// own code only.
void lowerRoles(KernelOp kernel) {
  SmallVector<RoleOp> roles(kernel.getBody().front().getOps<RoleOp>());
  if (roles.empty())
    return;
  OpBuilder chain(roles.front());
  for (RoleOp role : roles) {
    OpBuilder &b = chain;
    Location loc = role.getLoc();
    Emitter e(b, loc);
    Value tid = e.tid();
    Value wg = e.udiv(tid, e.i32c(128));
    Value inRole = e.band(
        e.icmp(LLVM::ICmpPredicate::uge, wg, e.i32c(role.getFirstWarpgroup())),
        e.icmp(LLVM::ICmpPredicate::ult, wg, e.i32c(role.getEndWarpgroup())));
    auto ifOp = scf::IfOp::create(b, loc, inRole, /*withElse=*/true);
    ifOp->setAttr(kRoleRegionAttr, b.getUnitAttr());
    OpBuilder tb = ifOp.getThenBodyBuilder();
    int64_t regs = role.getRegisters();
    NVVM::SetMaxRegisterOp::create(
        tb, loc, regs,
        regs > launchRegisters(kernel.getThreads())
            ? NVVM::SetMaxRegisterAction::increase
            : NVVM::SetMaxRegisterAction::decrease);
    Block *dest = ifOp.thenBlock();
    if (role.getSingleThread()) {
      Emitter te(tb, loc);
      Value leader = te.icmp(LLVM::ICmpPredicate::eq, te.urem(tid, te.i32c(128)),
                             te.i32c(0));
      auto inner = scf::IfOp::create(tb, loc, leader, /*withElse=*/false);
      dest = inner.thenBlock();
    }
    // Move the role's body (without its terminator) into the branch.
    Block &body = role.getBody().front();
    body.getTerminator()->erase();
    dest->getOperations().splice(dest->getTerminator()->getIterator(),
                                 body.getOperations());
    // The warpgroup index within the role.
    Value wgInRole;
    dest->walk([&](Operation *op) {
      if (auto id = dyn_cast<WarpgroupIdOp>(op)) {
        OpBuilder ib(id);
        Emitter ie(ib, id.getLoc());
        id.replaceAllUsesWith(
            ie.sub(ie.udiv(ie.tid(), ie.i32c(128)), ie.i32c(role.getFirstWarpgroup())));
        id.erase();
      } else if (isa<WarpgroupMmaOp, TurnOp>(op)) {
        op->setAttr(kRoleFirstAttr, b.getI64IntegerAttr(role.getFirstWarpgroup()));
      } else if (isa<SmemZeroRowsOp, TmemDeallocOp>(op)) {
        op->setAttr(kRoleFirstAttr, b.getI64IntegerAttr(role.getFirstWarpgroup()));
        // A single-thread role's one thread (thread 0 of its first
        // warpgroup) does all the work.
        op->setAttr(kRoleThreadsAttr,
                    b.getI64IntegerAttr(role.getSingleThread()
                                            ? 1
                                            : 128 * (role.getEndWarpgroup() -
                                                     role.getFirstWarpgroup())));
      }
    });
    (void)wgInRole;
    role.erase();
    // The next role goes in the else branch.
    chain.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  }
}

/// Each role reads the address of the dynamic shared memory itself, once,
/// with an asm statement LLVM neither merges nor moves: otherwise LLVM
/// computes it once before the roles and ptxas, which keeps no value in a
/// register across setmaxnreg when the new budget is tight, spills it to a
/// stack slot and reloads it all over the roles (the four-warpgroup sm_100a
/// backward kernels did: 7 stores and 36 loads of one slot).
/// (The asm text names the role, so that LLVM cannot merge the roles'
/// statements into one before the branch either.)
void readSmemBasePerRole(gpu::GPUModuleOp gm) {
  int64_t index = 0;
  gm.walk<WalkOrder::PreOrder>([&](scf::IfOp role) {
    if (!role->hasAttr(kRoleRegionAttr))
      return;
    // After the role's setmaxnreg, the first op of its branch; made only
    // for a role that uses shared memory.
    Block *entry = role.thenBlock();
    OpBuilder b(entry, std::next(entry->begin()));
    Location loc = role.getLoc();
    Value base;
    int64_t roleIndex = index++;
    auto roleBase = [&]() -> Value {
      if (base)
        return base;
      auto asmOp = LLVM::InlineAsmOp::create(
          b, loc, b.getI64Type(), ValueRange{},
          (Twine("mov.u64 $0, ") + kDynamicSmemSymbol + "; // role " +
           Twine(roleIndex))
              .str(),
          "=l", /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          ArrayAttr());
      base = LLVM::IntToPtrOp::create(
          b, loc,
          LLVM::LLVMPointerType::get(b.getContext(), AddressSpace::Shared),
          asmOp.getResult(0));
      return base;
    };
    Region &region = role.getThenRegion();
    region.walk([&](LLVM::AddressOfOp addr) {
      if (addr.getGlobalName() != kDynamicSmemSymbol)
        return;
      addr.replaceAllUsesWith(roleBase());
      addr.erase();
    });
    // Shared-memory buffers (flamia.smem.alloc) and barriers are addresses
    // computed before the roles: the role recomputes the ones it uses from
    // its own base (base + constant offset).
    DenseMap<Value, Value> rebased;
    std::function<Value(Value)> rebase = [&](Value v) -> Value {
      if (auto it = rebased.find(v); it != rebased.end())
        return it->second;
      Operation *def = v.getDefiningOp();
      Value r;
      if (auto addr = dyn_cast_or_null<LLVM::AddressOfOp>(def)) {
        if (addr.getGlobalName() == kDynamicSmemSymbol)
          r = roleBase();
      } else if (auto gep = dyn_cast_or_null<LLVM::GEPOp>(def)) {
        if (Value inner = rebase(gep.getBase())) {
          IRMapping map;
          map.map(gep.getBase(), inner);
          r = b.clone(*gep, map)->getResult(0);
        }
      }
      rebased[v] = r;
      return r;
    };
    region.walk([&](Operation *op) {
      for (OpOperand &use : op->getOpOperands()) {
        Value v = use.get();
        if (region.isAncestor(v.getParentRegion()))
          continue;
        if (Value r = rebase(v))
          use.set(r);
      }
    });
  });
}

struct ConvertFlamiaToNVVMPass
    : public flamia::impl::ConvertFlamiaToNVVMBase<ConvertFlamiaToNVVMPass> {
  using Base::Base;

  /// One gpu.module per kernel (one PTX/cubin file per kernel), named
  /// `<kernel>_module`.
  gpu::GPUModuleOp createGpuModule(ModuleOp module, StringRef kernel, Chip chip) {
    std::string name = (kernel + "_module").str();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    StringRef features = TargetInfo::get(chip).getPtxFeatures();
    auto target = NVVM::NVVMTargetAttr::get(
        b.getContext(), /*optLevel=*/3, "nvptx64-nvidia-cuda",
        stringifyChip(chip), features);
    auto gm = gpu::GPUModuleOp::create(b, module.getLoc(), name,
                                       b.getArrayAttr({target}));
    OpBuilder gb = OpBuilder::atBlockBegin(gm.getBody());
    LLVM::GlobalOp::create(
        gb, module.getLoc(), LLVM::LLVMArrayType::get(gb.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kDynamicSmemSymbol,
        Attribute(), /*alignment=*/1024, AddressSpace::Shared);
    return gm;
  }

  /// Creates the llvm.func of `kernel` in `gm` and moves the body into it.
  FailureOr<LLVM::LLVMFuncOp> createKernelFunc(KernelOp kernel,
                                               const KernelPlan &plan,
                                               gpu::GPUModuleOp gm,
                                               SmallVectorImpl<Attribute> &infos) {
    MLIRContext *ctx = kernel.getContext();
    Location loc = kernel.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(gm.getBody());
    Block &body = kernel.getBody().front();
    SmallVector<Type> argTypes;
    SmallVector<Attribute> paramInfos;
    for (BlockArgument arg : body.getArguments()) {
      // Every parameter is named for the manifest (flamia-varlen-schedule
      // names them); a hand-written kernel may have forgotten.
      StringAttr name;
      if (ArrayAttr argAttrs = kernel.getArgAttrsAttr())
        if (auto dict = dyn_cast_or_null<DictionaryAttr>(
                argAttrs[arg.getArgNumber()]))
          name = dict.getAs<StringAttr>("flamia.param");
      if (!name)
        return kernel.emitOpError()
               << "parameter " << arg.getArgNumber()
               << " has no {flamia.param = \"<name>\"}: the runtime "
                  "manifest names every kernel parameter";
      SmallVector<NamedAttribute> info = {b.getNamedAttr("name", name)};
      if (auto g = dyn_cast<GlobalType>(arg.getType())) {
        info.push_back(b.getNamedAttr("dtype", b.getStringAttr(dtypeName(g.getElementType()))));
        auto it = plan.tensorMaps.find(arg.getArgNumber());
        if (it != plan.tensorMaps.end()) {
          argTypes.push_back(LLVM::LLVMPointerType::get(ctx, AddressSpace::Generic));
          info.push_back(b.getNamedAttr("kind", b.getStringAttr("tensormap")));
          info.push_back(b.getNamedAttr("box_rows", b.getI64IntegerAttr(it->second.boxRows)));
          info.push_back(b.getNamedAttr("box_cols", b.getI64IntegerAttr(it->second.boxCols)));
          info.push_back(b.getNamedAttr("swizzle", b.getI64IntegerAttr(it->second.swizzleBytes)));
        } else {
          argTypes.push_back(LLVM::LLVMPointerType::get(ctx, AddressSpace::Global));
          info.push_back(b.getNamedAttr("kind", b.getStringAttr("ptr")));
        }
      } else if (arg.getType().isInteger(32) || arg.getType().isF32()) {
        argTypes.push_back(arg.getType());
        info.push_back(b.getNamedAttr(
            "kind", b.getStringAttr(arg.getType().isF32() ? "f32" : "i32")));
      } else {
        return kernel.emitOpError() << "parameter " << arg.getArgNumber()
                                    << " has a type a kernel cannot take: "
                                    << arg.getType();
      }
      paramInfos.push_back(b.getDictionaryAttr(info));
    }
    auto funcType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), argTypes);
    auto func = LLVM::LLVMFuncOp::create(b, loc, kernel.getSymName(), funcType);
    func->setAttr("nvvm.kernel", b.getUnitAttr());
    func->setAttr("nvvm.maxntid", b.getDenseI32ArrayAttr(
                                      {static_cast<int32_t>(kernel.getThreads()), 1, 1}));
    if (kernel.getLaunch() == LaunchKind::persistent)
      func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
    for (auto &[index, view] : plan.tensorMaps) {
      func.setArgAttr(index, "llvm.byval", TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
      func.setArgAttr(index, "llvm.align", b.getI64IntegerAttr(64));
      func.setArgAttr(index, "nvvm.grid_constant", b.getUnitAttr());
    }

    Block *entry = func.addEntryBlock(b);
    OpBuilder eb = OpBuilder::atBlockEnd(entry);
    Emitter e(eb, loc);
    // Parameters as the body sees them (flamia types through casts that the
    // conversion folds away).
    SmallVector<Value> bodyArgs;
    for (BlockArgument arg : body.getArguments()) {
      Value v = entry->getArgument(arg.getArgNumber());
      if (isa<GlobalType>(arg.getType()) &&
          !plan.tensorMaps.count(arg.getArgNumber()))
        v = LLVM::AddrSpaceCastOp::create(
            eb, loc, LLVM::LLVMPointerType::get(ctx, AddressSpace::Generic), v);
      if (v.getType() != arg.getType())
        v = UnrealizedConversionCastOp::create(eb, loc, arg.getType(), v).getResult(0);
      bodyArgs.push_back(v);
    }
    // Prologue: thread 0 initializes every mbarrier, then the CTA syncs.
    SmallVector<std::pair<int64_t, int64_t>> barriers; // (offset, count)
    for (auto p : body.getOps<PipelineCreateOp>()) {
      int64_t base = cast<IntegerAttr>(p->getAttr(kSmemOffsetAttr)).getInt();
      int64_t stages = p.getPipeline().getType().getStages();
      for (int64_t s = 0; s < stages; ++s) {
        barriers.push_back({base + KernelPlan::fullBarrier(s), p.getProducers()});
        barriers.push_back({base + KernelPlan::emptyBarrier(stages, s),
                            p.getConsumers()});
      }
    }
    for (auto q : body.getOps<QueueCreateOp>()) {
      int64_t base = cast<IntegerAttr>(q->getAttr(kSmemOffsetAttr)).getInt();
      int64_t receivers = std::max<int64_t>(q.getReceivers(), 1);
      for (int64_t s = 0; s < 2; ++s) {
        barriers.push_back({base + KernelPlan::queueFull(s), 1});
        barriers.push_back({base + KernelPlan::queueEmpty(s), receivers});
      }
    }
    if (!barriers.empty()) {
      Value first = e.icmp(LLVM::ICmpPredicate::eq, e.tid(), e.i32c(0));
      auto ifOp = scf::IfOp::create(eb, loc, first, /*withElse=*/false);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      Emitter te(tb, loc);
      Value smem = te.smemBase();
      for (auto [offset, count] : barriers)
        te.mbarrierInit(te.gep(smem, offset), count);
      NVVM::FenceMbarrierInitOp::create(tb, loc);
      NVVM::Barrier0Op::create(eb, loc);
    }
    int64_t tmemColumns = 0;
    for (auto alloc : body.getOps<TmemAllocOp>())
      tmemColumns += alloc.getColumns();
    // The body follows the prologue.
    Block *bodyBlock = &body;
    bodyBlock->getParent()->getBlocks().remove(bodyBlock);
    entry->getOperations().splice(entry->end(), bodyBlock->getOperations());
    for (auto [arg, v] : llvm::zip(bodyBlock->getArguments(), bodyArgs))
      arg.replaceAllUsesWith(v);
    delete bodyBlock;

    SmallVector<NamedAttribute> info = {
        b.getNamedAttr("name", kernel.getSymNameAttr()),
        b.getNamedAttr("target", b.getStringAttr(stringifyChip(kernel.getTarget().getChip()))),
        // The manifest reads the launch back as a string (Compile.cpp).
        b.getNamedAttr("launch",
                       b.getStringAttr(stringifyLaunchKind(kernel.getLaunch()))),
        b.getNamedAttr("threads", kernel.getThreadsAttr()),
        b.getNamedAttr("smem_bytes", b.getI64IntegerAttr(plan.smemBytes)),
        b.getNamedAttr("tmem_columns", b.getI64IntegerAttr(tmemColumns)),
        b.getNamedAttr("params", b.getArrayAttr(paramInfos))};
    for (StringRef extra : {"schedule", "tile"})
      if (Attribute a = kernel->getAttr(extra))
        info.push_back(b.getNamedAttr(extra, a));
    infos.push_back(b.getDictionaryAttr(info));
    return func;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (failed(requireLoweredTo(module, "convert-flamia-to-nvvm",
                                LoweringStage::Tiled)))
      return signalPassFailure();
    if (!chip.empty() && !symbolizeChip(chip)) {
      module.emitError() << "convert-flamia-to-nvvm: unknown chip '" << chip
                         << "' (expected sm_90a or sm_100a)";
      return signalPassFailure();
    }
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    module->setAttr("gpu.container_module", UnitAttr::get(ctx));
    SmallVector<Attribute> infos;
    if (auto existing = module->getAttrOfType<ArrayAttr>("flamia.kernel_infos"))
      infos.append(existing.begin(), existing.end());
    SetVector<gpu::GPUModuleOp> gpuModules;
    DenseMap<Operation *, Chip> chipOf;
    for (KernelOp kernel : kernels) {
      Chip c = kernel.getTarget().getChip();
      if (!chip.empty() && stringifyChip(c) != chip) {
        kernel.emitOpError() << "targets " << stringifyChip(c)
                             << " but convert-flamia-to-nvvm was asked for "
                             << chip;
        return signalPassFailure();
      }
      const TargetInfo &targetInfo = TargetInfo::get(c);
      if (kernel.walk([&](Operation *op) {
                  return failed(targetInfo.checkLowers(op))
                             ? WalkResult::interrupt()
                             : WalkResult::advance();
                }).wasInterrupted())
        return signalPassFailure();
      FailureOr<KernelPlan> plan =
          KernelPlan::build(kernel, targetInfo.getSmemLimitBytes());
      if (failed(plan))
        return signalPassFailure();
      lowerRoles(kernel);
      gpu::GPUModuleOp gm = createGpuModule(module, kernel.getSymName(), c);
      if (failed(createKernelFunc(kernel, *plan, gm, infos)))
        return signalPassFailure();
      // Launches now name the kernel in its gpu.module.
      auto newRef = SymbolRefAttr::get(
          gm.getSymNameAttr(), {FlatSymbolRefAttr::get(kernel.getSymNameAttr())});
      module.walk([&](LaunchOp launch) {
        if (launch.getKernelAttr() == SymbolRefAttr::get(kernel.getSymNameAttr()))
          launch.setKernelAttr(newRef);
      });
      kernel.erase();
      gpuModules.insert(gm);
      chipOf[gm] = c;
    }
    module->setAttr("flamia.kernel_infos", ArrayAttr::get(ctx, infos));

    for (gpu::GPUModuleOp gm : gpuModules) {
      Chip c = chipOf[gm];
      FlamiaTypeConverter converter(ctx, TargetInfo::get(c));
      RewritePatternSet patterns(ctx);
      populateFlamiaMemoryPatterns(converter, patterns);
      populateFragmentPatterns(converter, patterns);
      populateGradientPatterns(converter, patterns);
      // The MMAs and (sm_100a) tensor memory: the target's own ops.
      if (c == Chip::sm_90a)
        populateSm90WarpgroupMmaPatterns(converter, patterns);
      else
        populateSm100TensorMemoryPatterns(converter, patterns);
      populateQuantizeBlockPatterns(converter, patterns);
      populateSmemMxRoundPatterns(converter, patterns);
      ConversionTarget target(*ctx);
      target.addIllegalDialect<FlamiaDialect>();
      target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                             arith::ArithDialect, cf::ControlFlowDialect>();
      target.addLegalOp<gpu::GPUModuleOp>();
      target.addLegalOp<UnrealizedConversionCastOp>();
      // arith.select between flamia values (the Q tile of a key tile:
      // original or dequantized) selects their converted forms.
      patterns.add<SelectOfFlamiaValues>(converter, ctx);
      target.addDynamicallyLegalOp<arith::SelectOp>(
          [&](arith::SelectOp op) { return converter.isLegal(op.getType()); });
      scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                           target);
      if (failed(applyPartialConversion(gm, target, std::move(patterns))))
        return signalPassFailure();
      if (TargetInfo::get(c).readsSmemBasePerRole())
        readSmemBasePerRole(gm);

    }
    // scf/arith/cf/gpu/index to LLVM and NVVM (the host launch plan has none
    // of these ops, so running the module-level conversions is safe).
    OpPassManager pm(ModuleOp::getOperationName());
    OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
    gpuPm.addPass(createSCFToControlFlowPass());
    pm.addPass(createArithToLLVMConversionPass());
    pm.addPass(createConvertControlFlowToLLVMPass());
    pm.addPass(createConvertIndexToLLVMPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
  }
};

} // namespace
