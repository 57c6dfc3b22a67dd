/* one Gauss-Seidel sweep for A x = b, A in CSR, diag[i] the position of a_ii */
void gauss_seidel_csr(int n, const int *rowptr, const int *col, const int *diag,
                      const double *val, const double *b, double *x)
{
  for (int i = 0; i < n; i++) {
    double sum = b[i];
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
      int j = col[k];
      if (j != i)
        sum -= val[k] * x[j];
    }
    x[i] = sum / val[diag[i]];
  }
}
