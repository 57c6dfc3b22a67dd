/* y += A*x, A in COO */
void spmv_coo(int nnz, const int *row, const int *col, const double *val,
              const double *x, double *y)
{
  for (int k = 0; k < nnz; k++)
    y[row[k]] += val[k] * x[col[k]];
}
