package bench

// findingsText is the analysis at the head of the report, written from the
// full run (the tables after it are generated; the rule is Recommend).
const findingsText = `
**Quantiles (median, p10, p90): the column type decides, and it is public.**
On integer columns whose planner grid is unit bins (the seven dpcomp
datasets, pums-age, ties: integer bounds less than 2^16 apart) the grid
exponential mechanism (` + "`exponential`" + `) is exact in nearly every trial:
a block of tied values holds the target rank with a margin of many rows, and
every other bin is that many rows away. It wins most of these datasets at
every ε, which is why it leads the win counts. On the same columns the
rank-window exponential mechanism collapses on most dpcomp datasets (errors
of 1000–2000, up to half the range, and more often at larger ε, whose
narrower window k clips sooner: a tied block gets no mass, so the output
spreads over the gaps), and piecewise and inverse pay their
smoothing ρ = ½ (mean error about 0.25). On the other columns (real values,
or an integer range too wide for unit bins: pums-income) piecewise, inverse
and the window mechanism are within a few tens of percent of each other and
beat the grid as n grows, because the grid's resolution (U−L)/2^14 becomes
its error floor (lognormal, n = 10^6: about 28 for the grid against 0.07–1.4
for the others at ε = 1). Smooth sensitivity wins a few medians at n ≤ 1000
(normal, lognormal, bimodal). Global-sensitivity Laplace is useless for
quantiles (errors of the order of the range).

**The papers' claims.** Preprocessing beats smooth sensitivity on the median
(compared by median |error|, Cauchy noise) on the uniform data, the ramp of
the paper's Theorem 1.6, with an advantage that grows as ε shrinks (as the
digest's benchmark B1 predicts), and almost nowhere else: on tied data the
smooth-sensitivity median is essentially exact (its local sensitivity stays 0
for many steps, the paper's own "all ones" example), and on concentrated
real data preprocessing's Δ = (U−L)/ñ ignores how dense the data are while
smooth sensitivity adapts to it. Preprocessing's median is also biased on
heavily tied data (patent: off by 0.63 at every ε, the deterministic g(D) ≠
median). Piecewise ≤ inverse (Theorem 2) holds on every real-valued column
at every ε, on the analytic expected errors (the differences, 0–10%, are
invisible in 200 trials). On integer columns ρ = ½ gives inverse
sensitivity a flat centre weighted e^(ε/2) more than piecewise's, and
inverse is ahead there by up to about 20% (usually by less than 1%):
outside the theorem, as mech/inverse.go documents. Both are far better
than global-sensitivity Laplace everywhere.

**Mean and variance: the rule changed (issue 15).** The two paragraphs
below are the analysis behind the earlier rule (preprocessing for AVG at
ñ·ε ≥ 100, piecewise for VARIANCE). Measured against Google's library on
its own rows (RESULTS-google.md), both lost cells; a rule centred on a
private grid median (` + "`centred`" + `) then lost at n·ε ≈ 100. The rule is now
` + "`edges`" + `: the sums (AVG) or the squares (VARIANCE) measured from both
bounds in one Laplace release with all of ε, no probe and no branch; it
is the best mechanism on 112 of 136 mean cells and 114 of 136 variance
cells here, within 1.5× of the best on every one (the table above).

**Mean.** Preprocessing wins most datasets at every ε ≥ 0.5: its noise is
about (U−L)/(0.9·nε) whatever the data, while the Laplace baseline adds to
its sum noise (U−L)/(nε) a count term proportional to |mean − (L+U)/2|, so
preprocessing wins when the mean is off-centre and loses by at most about
1.5× (once n·ε ≥ 100) when it is centred. It breaks down when n·ε is
small: ñ, released with ε/10, is then too noisy for Δ = (U−L)/ñ (n = 100,
ε = 0.1: 17–32× worse than Laplace). Hence the threshold ñ·ε ≥ 100 in the rule.

**Variance.** Preprocessing (Δ = (U−L)²/ñ) wins by about 1.5× on
concentrated data (normal, lognormal, ties, most dpcomp datasets); piecewise
wins by 2–3× on spread data (uniform, bimodal, patent, pums-age, hepth);
Laplace rarely wins. Which case applies is a property of the data, not of
any public fact, so the rule takes piecewise: the best geometric mean of
the rules considered (table below), with a worst case (×2.6 the best
mechanism's error) close to the smallest (Laplace always: ×2.2, but ×1.44
in geometric mean). With the default Δ the preprocessing variance never hit
its O(n²) worst case: pruning keeps the trim depth small (about 15 ms for
10^6 values spanning the bounds, in the timing table). Preprocessing's
slowest releases are on the 20.8-million-row income column (0.8 s on
average, up to about 3 s for the mean), which is why its cells there ran
fewer trials.

**Recommended default rule** (` + "`bench.Recommend`" + `; public facts only; the
` + "`rule`" + ` column runs it end to end, budget included):

- MEDIAN, PERCENTILE_CONT: ` + "`exponential`" + ` (grid) when the column is
  integer with integer bounds less than 2^16 apart (unit bins); otherwise
  ` + "`piecewise`" + ` with ρ = DefaultRho, all of ε, but for the MEDIAN with
  ε ≥ 2 ` + "`smooth`" + ` (the smooth-sensitivity median; RESULTS-smooth-median.md).
- AVG, VARIANCE, STDDEV: ` + "`edges`" + ` (the sums, or the squares, from both
  bounds in one Laplace release, all of ε; the planner's auto-mean and
  auto-variance).

Against the grid everywhere the rule removes the grid's resolution floor
on real-valued columns, and the smooth median removes piecewise's spread
over an empty gap next to the median (bimodal data at ε = 2); see "Rules
considered". The win counts credit every mechanism that ties for the
smallest error (several are exact on tied data). In the rule column,
"picks" and "wins" apply the rule with the true n in place of ñ; the ratios
use the rule candidate's own releases (noisy ñ, budget included).
`
