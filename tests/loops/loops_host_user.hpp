#pragma once
#include <tessera/loops.hpp>

/// Records a loop whose kernel g++ compiled (loops_host_user.cpp).
void record_host_only_loop(tessera::loops::Block& grid, tessera::loops::Dataset<double>& u);
