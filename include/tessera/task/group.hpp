#pragma once
// Group and Item belong to the kernel engine (exec/group.hpp), which every front end launches
// Group kernels through; the task front end names them here too.

#include <tessera/exec/group.hpp>
