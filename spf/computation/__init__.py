"""Computations: ``Computation``, ``Stmt``, ``DataSpace``; dependences, legality, interpreter."""
