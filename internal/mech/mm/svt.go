package mm

import "github.com/dpproxy/dpproxy/internal/mech/noise"

// The easy/hard test of the median mechanism: the Sparse Vector Technique
// (AboveThreshold, Dwork & Roth §3.6, Alg. 1) restarted after every hard
// query, on integer counts with exact discrete Laplace noise.
//
// Statistic. For query φ with true count c and public pool median fraction
// μ, the gap is s = |c − round(n̂·μ)|. round(n̂·μ) is a function of the
// released transcript, n̂ and the public pool randomness, so adding or
// removing one row changes s by at most 1 (reverse triangle inequality):
// sensitivity Δ = 1 in rows, whether or not the row lies in φ.
//
// One run (ε₀ = ε_test/H): draw ρ ~ DLap(2/ε₀) once; for each query draw a
// fresh ν ~ DLap(4/ε₀) and answer "hard" (⊤) iff s + ν ≥ T + ρ; the run
// ends at the first ⊤. Privacy of a run, for neighbours D, D' and queries
// chosen adaptively from earlier outputs: fix the ν of the ⊥ queries; the
// run outputs ⊥…⊥⊤ on D iff ρ > g(D) := max_{i<j}(s_i(D) + ν_i − T) and
// s_j(D) + ν_j ≥ T + ρ. The shift ρ' = ρ + 1, ν_j' = ν_j + 2 maps that event
// on D into the same event on D' (g(D') ≤ g(D) + 1 and s_j(D') + ν_j' ≥
// s_j(D) + ν_j + 1 ≥ T + ρ'); the shifts are integers, so the discrete
// densities change by at most e^(ε₀/2) each: ε₀-DP. (A run with no ⊤ is
// the event ρ > g alone.) Digest §7.11 [REVIEWED c] notes the same.
//
// Across runs: ρ is redrawn after every ⊤, so the transcript is an
// adaptive sequential composition of at most H AboveThreshold runs
// (ε_test in total) and at most H hard answers c + DLap(H/ε_ans) (ε_ans in
// total, sensitivity 1): ε_test + ε_ans, for any number of queries.
//
// Rules that keep it so (Lyu, Su & Li, VLDB 2017): a fresh ν for every
// test, also of a repeated query unless it is served from the cache; ρ, ν,
// s and the noisy comparison value are never released (only the answer,
// which reveals the bit); ρ is redrawn after every hard query and
// persisted with the state before anything derived from it is released.

// isHard runs one test: it reports s + ν ≥ T + ρ for the gap s, drawing ν.
func (n mmNoise) isHard(src noise.Source, gap, threshold, rho int64) bool {
	return n.query.Release(src, gap) >= threshold+rho
}

// drawThreshold draws a run's threshold noise ρ.
func (n mmNoise) drawThreshold(src noise.Source) int64 {
	return n.threshold.Release(src, 0)
}

// hardAnswer releases the true count c with DLap(H/ε_ans) noise, clamped
// at 0 (post-processing, which only moves it toward c ≥ 0).
func (n mmNoise) hardAnswer(src noise.Source, c int64) int64 {
	return max(n.answer.Release(src, c), 0)
}
