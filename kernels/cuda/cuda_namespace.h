// The namespace of the CUDA backend's code. The host grid (tests/cuda_host/host_grid.h) compiles
// the same files for the CPU with OFL_CUDA_HOST_GRID defined; its copies go to an inline namespace
// of their own, so that they link next to the library's CUDA build without a clash while every
// file still names them ofl::kernels::cuda::X.
#pragma once

// (The host grid's planted-defect copies name their own: tests/cuda_host/CMakeLists.txt.)
#if defined(OFL_CUDA_BUILD)
#elif defined(OFL_CUDA_HOST_GRID)
#define OFL_CUDA_BUILD host_grid
#else
#define OFL_CUDA_BUILD device
#endif
