// Unknown passes and bad options are rejected before the input is read.
// RUN: not kiln-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: kiln-opt: error: bad pass pipeline 'builtin.module(no-such-pass)':
// UNKNOWN-NEXT: 'no-such-pass' does not refer to a registered pass or pass pipeline

// RUN: not kiln-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: kiln-opt: error: bad pass pipeline 'builtin.module(canonicalize{no-such-option=1})':
// OPTION: no such option no-such-option

// RUN: not kiln-opt %s -p 'kiln-legalize-dynamic{bad=1}' 2>&1 | filecheck %s --check-prefix=KILN-OPTION
// KILN-OPTION: kiln-opt: error: pass 'kiln-legalize-dynamic' has no option 'bad' (accepted options: none)

// kiln passes run on the module, not nested in an op-anchored list.
// RUN: not kiln-opt %s -p 'func.func(kiln-legalize-dynamic)' 2>&1 | filecheck %s --check-prefix=NESTED
// NESTED: 'kiln-legalize-dynamic' does not refer to a registered pass
// NESTED: note: kiln pass 'kiln-legalize-dynamic' runs on the whole module; list it at the top level

// RUN: not kiln-opt %s -p 'canonicalize,func.func(cse' 2>&1 | filecheck %s --check-prefix=UNCLOSED
// UNCLOSED: kiln-opt: error: unclosed '(' or '{' in pass list

// RUN: not kiln-opt %s --pass-pipeline='func.func(cse)' 2>&1 | filecheck %s --check-prefix=ANCHOR
// ANCHOR: kiln-opt: error: --pass-pipeline must have the form 'builtin.module(...)'

// RUN: not kiln-opt %s --stage no-such-stage 2>&1 | filecheck %s --check-prefix=STAGE
// STAGE: kiln-opt: error: unknown stage 'no-such-stage'; stages are mlir, functionalized, stablehlo, linalg, bufferized, llvm

// A pass that fails reports MLIR's diagnostic at the op and names the pass.
// RUN: not kiln-opt %s -p one-shot-bufferize 2>&1 | filecheck %s --check-prefix=FAIL
func.func @not_legalized(%x: tensor<?xf32>) -> tensor<?xf32> {
  // FAIL: pass-errors-invalid.mlir:[[# @LINE + 3]]:8: error: op was not bufferized
  // FAIL-NEXT: pass-errors-invalid.mlir:[[# @LINE + 2]]:8: note: see current operation: {{.*}}"stablehlo.exponential"
  // FAIL-NEXT: pass-errors-invalid.mlir: note: while running one-shot-bufferize
  %0 = stablehlo.exponential %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
