/* A C caller of the FLAMIA runtime's C API (capi-shared-library.test). */
#include "flamia/CAPI/Runtime.h"

#include <stdio.h>

int main(int argc, char **argv) {
  flamia_runtime *rt = NULL;
  char err[512];
  flamia_status status;
  printf("abi %d\n", flamia_runtime_abi_version());
  /* The struct versions of flamia_attention_args (the C header's macro). */
  printf("args v1 %zu, v2 %zu, v3 %zu\n", (size_t)FLAMIA_ATTENTION_ARGS_SIZE_V1,
         (size_t)FLAMIA_ATTENTION_ARGS_SIZE_V2, sizeof(flamia_attention_args));
  if (argc < 2)
    return 2;
  status = flamia_runtime_create(argv[1], 0, &rt, err, sizeof err);
  if (status != FLAMIA_STATUS_OK) {
    printf("create: %s (%d): %s\n", flamia_status_string(status), (int)status,
           err);
    return 0;
  }
  printf("create: ok, %zu kernels\n", flamia_runtime_num_kernels(rt));
  flamia_runtime_destroy(rt);
  return 0;
}
