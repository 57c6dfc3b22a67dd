/* y += A*x, A in CSC */
void spmv_csc(int m, const int *colptr, const int *row, const double *val,
              const double *x, double *y)
{
  int j, k;
  for (j = 0; j < m; j++)
    for (k = colptr[j]; k < colptr[j + 1]; k++)
      y[row[k]] += val[k] * x[j];
}
