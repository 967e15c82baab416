package piecewise

import "github.com/dpproxy/dpproxy/internal/mech"

// The inverse sensitivity mechanism (Asi and Duchi 2020; as the paper's
// M.2, digest §1.4): output y with probability ∝ exp(−(ε/2)·len_f(y; x)),
// where len_f(y; x) is the number of rows that must be added or removed to
// make f output y. With the breakpoints u_ℓ, d_ℓ of piecewise.go,
// len_f(y) = ℓ exactly on the pieces (u_{ℓ−1}, u_ℓ] and [d_ℓ, d_{ℓ−1}) (the
// paper's Corollary 4.1, for sample-monotone f such as the quantiles), and
// 0 at f(x) (with ρ-smoothing, on [f−ρ, f+ρ], Asi and Duchi's ρ-smooth
// inverse sensitivity). len_f changes by at most 1 between neighbours
// (Corollary 3.2), so the mechanism is ε-DP under add/remove with the
// add/remove breakpoints, δ = 0. It shares everything with the piecewise
// Laplace mechanism except the in-piece law: uniform instead of a
// truncated exponential, and the piece weights e^(−εℓ/2)·Δ_ℓ (centre 2ρ,
// weight e^0). It is the baseline PLM provably never loses to in the
// continuous setting with ρ = 0 (Theorem 2: |PLM − f| is stochastically
// smaller).
//
// Decision: the digest's pseudocode (§2.5, SAMPLE_INV) reuses PLM's piece
// probabilities, centre included at e^(−ε/2), and only swaps the in-piece
// draw. That is the inverse sensitivity mechanism only for ρ = 0; with
// ρ > 0 it is neither INV (whose ρ-smooth len is 0 on the centre) nor
// covered by Theorem 2. We implement the ρ-smooth INV itself, so with
// ρ > 0 INV can beat PLM on tied data (its flat centre weighs e^(ε/2) more);
// TestPiecewiseDominatesInverse checks the theorem at ρ = 0 only.

// NewInverseSensitivityQuantile returns the inverse sensitivity mechanism
// for quantile q ∈ [0, 1] of values clamped to b, ε ≥ 2^−16 and smoothing
// ρ ≥ 0: the same window and breakpoints as NewQuantile.
func NewInverseSensitivityQuantile(b mech.Bounds, q, epsilon, rho float64) (*Quantile, error) {
	return newBreakpointQuantile(invKind, b, q, epsilon, rho)
}
