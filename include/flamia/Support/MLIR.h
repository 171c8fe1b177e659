//===- MLIR.h - MLIR and LLVM names used unqualified in flamia --*- C++ -*-===//
//
// The dialect, its passes, the conversion, the compiler and the interpreter
// live in namespace ::flamia, next to the plain libraries (numerics, runtime,
// schedule, validation), and not in mlir::flamia. The MLIR and LLVM names
// they use unqualified are brought into ::flamia here, one using-declaration
// each (the model of circt/Support/LLVM.h): add a name here rather than
// `using namespace mlir;` in a header. Only the MLIR half includes this
// header; the plain libraries never see it.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SUPPORT_MLIR_H
#define FLAMIA_SUPPORT_MLIR_H

// The LLVM names (ArrayRef, StringRef, SmallVector, cast, LogicalResult, ...)
// as MLIR re-exports them into namespace mlir.
#include "mlir/Support/LLVM.h"
// Value and TypedValue (an alias template, which cannot be forward-declared).
#include "mlir/IR/Value.h"

// Forward declarations of the MLIR classes named below, so that this header
// stays cheap; whoever uses one includes its header.
namespace mlir {
class AsmParser;
class AsmPrinter;
class Attribute;
class Block;
class BlockArgument;
class ConversionPatternRewriter;
class Builder;
class DialectRegistry;
class ImplicitLocOpBuilder;
class InFlightDiagnostic;
class IntegerAttr;
class IntegerType;
class FloatType;
class Location;
class MLIRContext;
class ModuleOp;
class NamedAttribute;
class OpAsmParser;
class OpAsmPrinter;
class OpBuilder;
class OpOperand;
class OpPassManager;
class OpResult;
class Operation;
struct OperationState;
class Pass;
class PatternRewriter;
class RankedTensorType;
class Region;
class RewritePatternSet;
class ShapedType;
class StringAttr;
class SymbolTable;
class Type;
class TypeRange;
class Value;
class TypeConverter;
class ValueRange;
class WalkResult;

namespace arith {}
namespace cf {}
namespace func {}
namespace gpu {}
namespace LLVM {}
namespace NVVM {}
namespace scf {}
template <typename T>
class PassPipelineOptions;
} // namespace mlir

namespace flamia {

// LLVM casting and error handling.
using mlir::cast;
using mlir::cast_if_present;
using mlir::cast_or_null;
using mlir::dyn_cast;
using mlir::dyn_cast_if_present;
using mlir::dyn_cast_or_null;
using mlir::isa;
using mlir::isa_and_nonnull;
using mlir::isa_and_present;

using mlir::failed;
using mlir::failure;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::ParseResult;
using mlir::succeeded;
using mlir::success;

// LLVM containers and strings.
using mlir::APFloat;
using mlir::APInt;
using mlir::ArrayRef;
using mlir::BitVector;
using mlir::DenseMap;
using mlir::DenseSet;
using mlir::function_ref;
using mlir::iterator_range;
using mlir::MutableArrayRef;
using mlir::raw_ostream;
using mlir::SetVector;
using mlir::SmallPtrSet;
using mlir::SmallString;
using mlir::SmallVector;
using mlir::SmallVectorImpl;
using mlir::StringLiteral;
using mlir::StringRef;
using mlir::StringSwitch;
using mlir::Twine;
using mlir::TypeSwitch;

// MLIR IR, builders, passes.
using mlir::AsmParser;
using mlir::AsmPrinter;
using mlir::Attribute;
using mlir::Block;
using mlir::BlockArgument;
using mlir::Builder;
using mlir::ConversionPatternRewriter;
using mlir::DialectRegistry;
using mlir::FloatType;
using mlir::ImplicitLocOpBuilder;
using mlir::InFlightDiagnostic;
using mlir::IntegerAttr;
using mlir::IntegerType;
using mlir::Location;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::NamedAttribute;
using mlir::OpAsmParser;
using mlir::OpAsmPrinter;
using mlir::OpBuilder;
using mlir::OpOperand;
using mlir::OpPassManager;
using mlir::OpResult;
using mlir::Operation;
using mlir::OperationState;
using mlir::Pass;
using mlir::PassPipelineOptions;
using mlir::PatternRewriter;
using mlir::RankedTensorType;
using mlir::Region;
using mlir::RewritePatternSet;
using mlir::ShapedType;
using mlir::StringAttr;
using mlir::SymbolTable;
using mlir::Type;
using mlir::TypedValue;
using mlir::TypeConverter;
using mlir::TypeRange;
using mlir::Value;
using mlir::ValueRange;
using mlir::WalkResult;

// The upstream dialects, as `arith::CmpIOp`, `LLVM::LLVMPointerType`.
namespace arith = mlir::arith;
namespace cf = mlir::cf;
namespace func = mlir::func;
namespace gpu = mlir::gpu;
namespace LLVM = mlir::LLVM;
namespace NVVM = mlir::NVVM;
namespace scf = mlir::scf;

} // namespace flamia

#endif // FLAMIA_SUPPORT_MLIR_H
