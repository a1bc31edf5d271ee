// The solver's targetDP kernels compiled by nvcc, for tessera-lb-cuda: TARGET_ENTRY is then
// __global__, TARGET_LAUNCH a CUDA launch on the target's stream and TARGET_CONST constant
// memory. The source is the one the host build compiles.
#include "targetdp_solver.cpp"
