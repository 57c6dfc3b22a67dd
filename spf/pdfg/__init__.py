"""Polyhedral dataflow graph: a networkx view of a ``Computation``, DOT output, graph operations."""
