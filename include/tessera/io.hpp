#pragma once
// Output and restart: PNG snapshots, HDF5 + XDMF series, checkpoints. See docs/io.md.

#include "tessera/io/checkpoint.hpp"
#include "tessera/io/colormap.hpp"
#include "tessera/io/hdf5.hpp"
#include "tessera/io/png.hpp"
#include "tessera/io/xdmf.hpp"
