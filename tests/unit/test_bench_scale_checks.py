"""``spf bench --only scale``, part ``checks``: the table of how each kernel verifies its
facts (``kernel.check_cost``), implied facts named."""

from __future__ import annotations

import spf
from spf.bench.common import Section
from spf.bench.scale_checks import _kept


def test_the_checks_part_lists_how_each_kernel_checks_its_facts() -> None:
    sec = Section("scale_checks")
    gs = spf.kernels.gauss_seidel_csr().compile().check_cost
    _kept(sec, {"gauss_seidel_csr": gs, "spmv_coo": spf.kernels.spmv_coo().compile().check_cost})
    text = "\n".join(sec.markdown)
    (row,) = [line for line in text.splitlines() if "`gauss_seidel_csr`" in line]
    assert "remembered (in loop): 3" in row
    assert "implied: 2" in row
    assert "col(k) < i" in row  # the lower part's fact, named
    (row,) = [line for line in text.splitlines() if "`spmv_coo`" in line]
    assert "no facts" in row
