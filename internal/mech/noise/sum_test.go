package noise

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLaplaceSumQuantileVectors checks the quantile of a sum of m iid
// Laplace(1) against values derived by hand: m = 1, P[|X| > t] = e^(−t),
// so t = ln(1/α); m = 2, P[|X₁ + X₂| > t] = e^(−t)·(1 + t/2), solved here
// by bisection in closed form; large m, the normal limit z·√(2m).
func TestLaplaceSumQuantileVectors(t *testing.T) {
	for _, c := range []float64{0.5, 0.9, 0.95, 0.99} {
		if got, want := laplaceSumQuantile(1, c), math.Log(1/(1-c)); got != want {
			t.Errorf("m=1, c=%v: got %v, want %v", c, got, want)
		}
		lo, hi := 0.0, 100.0
		for range 200 {
			mid := (lo + hi) / 2
			if math.Exp(-mid)*(1+mid/2) > 1-c {
				lo = mid
			} else {
				hi = mid
			}
		}
		if got := laplaceSumQuantile(2, c); math.Abs(got-hi) > 1e-9*hi || got < hi*(1-1e-12) {
			t.Errorf("m=2, c=%v: got %.15g, want %.15g", c, got, hi)
		}
	}
	// 95%: m = 2 gives 4.1130 (e^(−4.1130)·3.0565 = 0.0500), by hand.
	if got := laplaceSumQuantile(2, 0.95); math.Abs(got-4.1130) > 1e-4 {
		t.Errorf("m=2, 95%%: got %v, want 4.1130", got)
	}
	// The normal limit: the excess kurtosis of the sum is 3/m, so at
	// m = 10,000 the quantile is within 0.1% of 1.959964·√(2m).
	for _, m := range []int{2500, 10000} {
		want := 1.959964 * math.Sqrt(2*float64(m))
		if got := laplaceSumQuantile(m, 0.95); math.Abs(got/want-1) > 2e-3 {
			t.Errorf("m=%d: got %v, normal limit %v", m, got, want)
		}
	}
	// Between, the quantile grows like √m from above the normal one.
	prev := 0.0
	for m := 1; m <= 64; m *= 2 {
		got := laplaceSumQuantile(m, 0.95)
		if normal := 1.959964 * math.Sqrt(2*float64(m)); got < prev || got < normal*0.97 {
			t.Errorf("m=%d: %v after %v, normal %v", m, got, prev, normal)
		}
		prev = got
	}
}

// TestDlapSumHalfWidthExact checks the exact discrete quantile against
// the discrete Laplace's closed form for m = 1 and a brute-force
// convolution of the probability mass functions for m = 2 and 5.
func TestDlapSumHalfWidthExact(t *testing.T) {
	for _, beta := range []float64{0.5, 1, 2, 10, 37.5} {
		d := Dlap{t: uint64(beta * 2), s: 2}
		if got, ok := dlapSumHalfWidth(1, beta, 0.95); !ok || got != d.halfWidth(0.95) {
			t.Errorf("β=%v, m=1: got %v (%v), want %v", beta, got, ok, d.halfWidth(0.95))
		}
		for _, m := range []int{2, 5} {
			want := convolvedHalfWidth(m, beta, 0.95)
			if got, ok := dlapSumHalfWidth(m, beta, 0.95); !ok || got != want {
				t.Errorf("β=%v, m=%d: got %v (%v), want %v", beta, m, got, ok, want)
			}
		}
	}
	if _, ok := dlapSumHalfWidth(10000, 1e5, 0.95); ok {
		t.Errorf("β√m = 10^7: computed exactly, want the continuous bound")
	}
}

// convolvedHalfWidth is the smallest w with P[|ΣZ| > w] ≤ 1 − c, ΣZ the
// sum of m DLap(β) computed by convolving the mass function on ±K.
func convolvedHalfWidth(m int, beta, c float64) float64 {
	r := math.Exp(-1 / beta)
	k := int(40*beta*math.Sqrt(float64(m))) + 60
	one := make([]float64, 2*k+1)
	for z := -k; z <= k; z++ {
		one[z+k] = (1 - r) / (1 + r) * math.Pow(r, math.Abs(float64(z)))
	}
	sum := one
	for range m - 1 {
		next := make([]float64, 2*k+1)
		for i, a := range sum {
			for j, b := range one {
				if z := i + j - k; z >= 0 && z <= 2*k {
					next[z] += a * b
				}
			}
		}
		sum = next
	}
	inside := sum[k]
	for w := 0; ; w++ {
		if w > 0 {
			inside += sum[k+w] + sum[k-w]
		}
		if 1-inside <= 1-c {
			return float64(w)
		}
	}
}

// TestSumHalfWidth checks Sum's choices: one release keeps its own
// half-width, DiscreteLaplace terms of one scale the exact law, mixed
// scales the continuous bound at the largest, and grid Laplace terms the
// continuous quantile plus 1.5 grid steps each.
func TestSumHalfWidth(t *testing.T) {
	d, err := NewDiscreteLaplace(1, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Sum().HalfWidth(0.95), d.HalfWidth(0.95); got != want {
		t.Errorf("one count: got %v, want %v", got, want)
	}
	two := d.Sum().Plus(d.Sum())
	want, _ := dlapSumHalfWidth(2, d.Scale(), 0.95)
	if got := two.HalfWidth(0.95); two.Count() != 2 || got != want {
		t.Errorf("two counts: got %v of %d, want %v", got, two.Count(), want)
	}
	wide, err := NewDiscreteLaplace(1, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	mixed := two.Plus(wide.Sum())
	want = math.Floor(wide.Scale()*laplaceSumQuantile(3, 0.95) + 3)
	if got := mixed.HalfWidth(0.95); got != want {
		t.Errorf("mixed scales: got %v, want %v", got, want)
	}
	l, err := NewLaplace(3, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Sum().HalfWidth(0.9), l.HalfWidth(0.9); got != want {
		t.Errorf("one sum: got %v, want %v", got, want)
	}
	var s Sum
	for range 4 {
		s = s.Plus(l.Sum())
	}
	want = l.Scale()*laplaceSumQuantile(4, 0.9) + 4*1.5*l.Granularity()
	if got := s.HalfWidth(0.9); got != want {
		t.Errorf("four sums: got %v, want %v", got, want)
	}
}

// TestSumHalfWidthCoverage releases sums of m noises with a seeded
// source and counts how often the error exceeds Sum.HalfWidth(0.95).
// With N trials the count of misses is Binomial(N, ≤ 0.05); the test
// fails above 0.05·N + 4.5·√(N·0.05·0.95), a false rejection rate below
// 10^−5 per case for a correct bound. It also fails if the bound misses
// less than 3.5% of the time (far wider than the truth's 5%; for the
// discrete case the bound is exact up to the lattice, so the check is
// made only where the integer step is small against the width).
func TestSumHalfWidthCoverage(t *testing.T) {
	src := rand.NewChaCha8([32]byte{7, 1, 2, 6})
	const trials = 20000
	limit := 0.05*trials + 4.5*math.Sqrt(trials*0.05*0.95)
	for _, tc := range []struct {
		m        int
		discrete bool
		eps      float64
	}{
		{2, false, 1}, {7, false, 0.3}, {40, false, 2},
		{2, true, 0.1}, {7, true, 0.05}, {40, true, 0.2}, {3, true, 1},
	} {
		var s Sum
		var release func() float64
		if tc.discrete {
			d, err := NewDiscreteLaplace(1, tc.eps)
			if err != nil {
				t.Fatal(err)
			}
			release = func() float64 { return float64(d.Release(src, 1000)) - 1000 }
			for range tc.m {
				s = s.Plus(d.Sum())
			}
		} else {
			l, err := NewLaplace(2.5, tc.eps)
			if err != nil {
				t.Fatal(err)
			}
			release = func() float64 { return l.Release(src, 1000.3) - 1000.3 }
			for range tc.m {
				s = s.Plus(l.Sum())
			}
		}
		w := s.HalfWidth(0.95)
		misses := 0
		for range trials {
			total := 0.0
			for range tc.m {
				total += release()
			}
			if math.Abs(total) > w {
				misses++
			}
		}
		t.Logf("m=%d discrete=%v ε=%v: half-width %v, %d of %d outside", tc.m, tc.discrete, tc.eps, w, misses, trials)
		if float64(misses) > limit {
			t.Errorf("m=%d discrete=%v ε=%v: %d of %d outside ±%v, more than %.0f", tc.m, tc.discrete, tc.eps, misses, trials, w, limit)
		}
		if tc.eps < 1 && float64(misses) < 0.035*trials {
			t.Errorf("m=%d discrete=%v ε=%v: %d of %d outside ±%v: the bound is far too wide", tc.m, tc.discrete, tc.eps, misses, trials, w)
		}
	}
}
