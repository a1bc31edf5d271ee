// tessera-poisson-cuda: the same program compiled by nvcc, so that loops placed on CUDA devices
// (--devices cuda) run as GPU kernels; a plain C++ build runs them on the host and sim devices
// only, and says so if asked for a GPU.
#include "main.cpp"
