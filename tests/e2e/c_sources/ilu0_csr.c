/* in-place ILU(0) of A in CSR (sorted columns), diag[i] the position of a_ii */
void ilu0_csr(int n, const int *rowptr, const int *col, const int *diag, double *val)
{
  int i, k, j, m;
  for (i = 1; i < n; i++) {
    for (k = rowptr[i]; k < diag[i]; k++) {
      val[k] = val[k] / val[diag[col[k]]];
      for (j = k + 1; j < rowptr[i + 1]; j++) {
        for (m = diag[col[k]] + 1; m < rowptr[col[k] + 1]; m++) {
          if (col[m] == col[j])
            val[j] -= val[k] * val[m];
        }
      }
    }
  }
}
