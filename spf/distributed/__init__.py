"""Row-distributed sparse loops over MPI with generated communication (API.md §19)."""
