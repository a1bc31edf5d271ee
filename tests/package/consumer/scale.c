/* A C user of the installed targetDP header: the paper's scale kernel on the host target. */
#include <tessera/targetdp.h>

#include <stdio.h>

TARGET_CONST double t_a;

struct scale_args {
  double* t_field;
  size_t n;
};

TARGET_ENTRY static void scale(void* p) {
  const struct scale_args* args = (const struct scale_args*)p;
  size_t base;
  TARGET_TLP(base, args->n) {
    int v;
    TARGET_ILP(v) args->t_field[base + v] *= t_a;
  }
}

int main(void) {
  double field[100], *t_field = NULL;
  const double a = 2.0;
  struct scale_args args;
  int i, ok = 1;
  for (i = 0; i < 100; i++) field[i] = i;
  targetInit("host");
  targetMalloc((void**)&t_field, sizeof field);
  copyToTarget(t_field, field, sizeof field);
  copyConstantDoubleToTarget(&t_a, &a, sizeof a);
  args.t_field = t_field;
  args.n = 100;
  targetLaunch(scale, 100, &args);
  syncTarget();
  copyFromTarget(field, t_field, sizeof field);
  targetFree(t_field);
  targetFinalize();
  for (i = 0; i < 100; i++) ok = ok && field[i] == 2.0 * i;
  printf("consumer (C, targetDP): %s\n", ok ? "scaled" : "WRONG");
  return ok ? 0 : 1;
}
