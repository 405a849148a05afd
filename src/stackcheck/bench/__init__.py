"""Backend regression suite: attention and GEMM paths checked for correctness and speed, recorded as evidence.

Submodules are imported where they are needed; torch only inside the functions that run cases."""
