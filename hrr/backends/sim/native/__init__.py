"""Native kernels for the sim: a program's own HIP C++ compiled for the CPU and run by a
(sandboxed) worker process over the sim's shared device memory.

Layers: ``abi`` (the launch contract with the image, ``hrr_abi.h``), ``toolchain`` (the
C++ compiler and the device header), ``elfimage`` (an image's layout, kernels and
relocation), ``arena`` (device and pinned memory shared with the worker), ``worker``
(the process that runs kernels, and its client).
"""
