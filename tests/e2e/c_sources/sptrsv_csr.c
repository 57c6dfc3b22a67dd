/* solve L x = b, L lower triangular in CSR, diagonal last in each row */
void sptrsv_csr(int n, const int *rowptr, const int *col, const double *val,
                const double *b, double *x)
{
  int i, k;
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (k = rowptr[i]; k < rowptr[i + 1] - 1; k++)
      x[i] -= val[k] * x[col[k]];
    x[i] /= val[rowptr[i + 1] - 1];
  }
}
