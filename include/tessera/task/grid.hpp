#pragma once
// Dim3 and Grid belong to the kernel engine (exec/grid.hpp), which every front end launches
// Group kernels through; the task front end names them here too.

#include <tessera/exec/grid.hpp>
