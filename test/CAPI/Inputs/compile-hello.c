/* A C caller of libflamia_compiler.so (flamia/CAPI/Compiler.h), C99:
 *   compile-hello OUT_DIR [PTXAS]
 * compiles sm_90a attention with 8 query and 2 key/value heads, PTX only
 * (with PTXAS: cubins), into OUT_DIR; then shows bad arguments' errors. */
#include "flamia/CAPI/Compiler.h"

#include <stdio.h>
#include <string.h>

static void report(const char *what, flamia_status st, const char *err) {
  printf("%s: status %d: %s\n", what, (int)st, err);
}

int main(int argc, char **argv) {
  flamia_compile_spec s;
  char err[1024];
  flamia_status st;
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUT_DIR [PTXAS]\n", argv[0]);
    return 2;
  }
  printf("abi %d, version %s\n", flamia_compiler_abi_version(),
         flamia_compiler_version());
  flamia_compile_spec_init(&s);
  s.target = "sm_90a";
  s.heads = 8;
  s.kv_heads = 2;
  if (argc > 2)
    s.ptxas = argv[2];
  else
    s.assemble = 0;
  st = flamia_compile_attention(&s, argv[1], err, sizeof err);
  report("compile", st, err);
  if (st != FLAMIA_STATUS_OK)
    return 1;

  s.head_dim = 96;
  report("head dim 96", flamia_compile_attention(&s, argv[1], err, sizeof err),
         err);
  s.head_dim = 128;
  report("NULL spec", flamia_compile_attention(NULL, argv[1], err, sizeof err),
         err);
  report("NULL dir", flamia_compile_attention(&s, NULL, err, sizeof err), err);
  s.struct_size = 4;
  st = flamia_compile_attention(&s, argv[1], NULL, 0); /* err NULL: allowed */
  report("struct_size 4", st, flamia_compiler_last_error());
  return 0;
}
