"""Code generation: the UF-aware scanner (loop AST) and printers for C/OpenMP, CUDA, MPI and HLS."""
