/* y = A*x, A in CSR */
void spmv_csr(int n, const int *rowptr, const int *col, const double *val,
              const double *x, double *y)
{
  for (int i = 0; i < n; i++) {
    double sum = 0.0;
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
      sum += val[k] * x[col[k]];
    y[i] = sum;
  }
}
