"""gradeline's analysis toolbox (pandas/numpy/scipy): scaling S(N), inflation factors,
USL fits, repetitions with confidence intervals, and the operational laws.

The formulas follow the originating thesis (S(N) = X_max(N) / X_max(1), eq. 2.1;
inflation Count(N) / (N * Count(1)), eq. 8.1) and the methodology notes in
shared/seeds. Campaign runners, L3 metrics and the HTML report build on these.
"""
