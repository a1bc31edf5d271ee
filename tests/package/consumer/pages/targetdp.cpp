// DOC targetdp-page begin
#include <tessera/targetdp.h>

#include <cstdio>
#include <vector>

TARGET_CONST double t_a;

// field[iDim * n + site] *= a for a 3-vector field stored SoA.
TARGET_ENTRY void scale(double* t_field, size_t n) {
  size_t baseIndex;
  TARGET_TLP(baseIndex, n) {  // this launch's chunks of VVL sites
    int iDim, vecIndex;
    for (iDim = 0; iDim < 3; iDim++) {
      TARGET_ILP(vecIndex) t_field[iDim * n + baseIndex + vecIndex] *= t_a;  // vectorised over sites
    }
  }
}

int main() {
  targetInit("");         // the first accelerator TESSERA_DEVICES selects, else the host
  const size_t n = 1001;  // not a multiple of VVL: the last chunk is shorter
  std::vector<double> field(3 * n);
  for (size_t i = 0; i < field.size(); ++i) field[i] = static_cast<double>(i);

  double* t_field;
  const double a = 3.0;
  targetMalloc((void**)&t_field, 3 * n * sizeof(double));
  copyToTarget(t_field, field.data(), 3 * n * sizeof(double));
  copyConstantDoubleToTarget(&t_a, &a, sizeof(double));
  scale TARGET_LAUNCH(n)(t_field, n);
  syncTarget();
  copyFromTarget(field.data(), t_field, 3 * n * sizeof(double));
  targetFree(t_field);

  size_t wrong = 0;
  for (size_t i = 0; i < field.size(); ++i) wrong += field[i] != 3.0 * static_cast<double>(i);
  std::printf("targetdp: 3 x %zu values scaled on %s, %zu wrong\n", n, tdp_target_name(), wrong);
  targetFinalize();
  return wrong == 0 ? 0 : 1;
}
// DOC targetdp-page end
