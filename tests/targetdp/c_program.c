/* tessera/targetdp.h from C99: allocation, copies, a constant, a launch over a partial last
 * chunk, masked copies, and the error statuses of the tdp_* interface. Exits non-zero, naming
 * the check, on any difference. The target comes from TESSERA_DEVICES. */

#include <tessera/targetdp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                 \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                   \
    }                                                               \
  } while (0)

TARGET_CONST double t_a;

struct scale_args {
  double* t_field;
  size_t n;
};

/* The paper's scale kernel, in the C launch form: one argument struct. */
TARGET_ENTRY static void scale(void* p) {
  const struct scale_args* args = (const struct scale_args*)p;
  size_t baseIndex;
  TARGET_TLP(baseIndex, args->n) {
    int iDim, vecIndex;
    for (iDim = 0; iDim < 3; iDim++) {
      TARGET_ILP(vecIndex) {
        args->t_field[iDim * args->n + baseIndex + vecIndex] *= t_a;
      }
    }
  }
}

int main(void) {
  const size_t n = 1003; /* not a multiple of VVL: the last chunk is partial */
  const size_t bytes = 3 * n * sizeof(double);
  double* field = (double*)malloc(bytes);
  double* back = (double*)malloc(bytes);
  double* t_field = NULL;
  const double a = 3.0;
  struct scale_args args;
  char* mask = (char*)calloc(n, 1);
  size_t i;
  void* unused = NULL;

  printf("targetDP C program on %s\n", tdp_target_name());
  for (i = 0; i < 3 * n; i++) field[i] = (double)i;

  targetMalloc((void**)&t_field, bytes);
  copyToTarget(t_field, field, bytes);
  copyConstantDoubleToTarget(&t_a, &a, sizeof(double));
  args.t_field = t_field;
  args.n = n;
  targetLaunch(scale, n, &args);
  args.t_field = NULL; /* the launch copied the arguments */
  syncTarget();
  copyFromTarget(back, t_field, bytes);
  for (i = 0; i < 3 * n; i++) CHECK(back[i] == 3.0 * (double)i);

  /* Masked: every fifth site comes back from the target; the rest keep their host values. */
  for (i = 0; i < n; i++) mask[i] = (char)(i % 5 == 0);
  for (i = 0; i < 3 * n; i++) back[i] = -1.0;
  copyFromTargetMasked(back, t_field, n, 3, mask, n);
  for (i = 0; i < 3 * n; i++) CHECK(back[i] == (mask[i % n] ? 3.0 * (double)i : -1.0));

  /* Errors come back as statuses with a message naming the call. */
  CHECK(tdp_copy_to_target(t_field, field, bytes + 8) == tdpErrorInvalidValue);
  CHECK(strstr(tdp_last_error(), "copyToTarget") != NULL);
  CHECK(tdp_copy_from_target_masked(back, t_field, n, 3, mask, n - 1) == tdpErrorInvalidValue);
  CHECK(strstr(tdp_last_error(), "mask has 1002 entries") != NULL);
  CHECK(tdp_free(field) == tdpErrorInvalidValue);
  CHECK(strstr(tdp_last_error(), "targetFree") != NULL);
  CHECK(tdp_malloc(&unused, (size_t)-1 / 2) == tdpErrorMemory);
  CHECK(strstr(tdp_last_error(), "do not fit") != NULL);

  targetFree(t_field);
  targetFinalize();
  free(field);
  free(back);
  free(mask);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("targetDP C program: all checks passed\n");
  return 0;
}
