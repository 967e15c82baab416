package sqlrewrite

import "testing"

// TestKleeneTables checks truth's NOT, AND and OR on single values
// against Kleene's tables, and that on sets they are the union over
// their members.
func TestKleeneTables(t *testing.T) {
	values := []truth{isTrue, isFalse, isUnknown}
	and := map[[2]truth]truth{
		{isTrue, isTrue}: isTrue, {isTrue, isFalse}: isFalse, {isTrue, isUnknown}: isUnknown,
		{isFalse, isTrue}: isFalse, {isFalse, isFalse}: isFalse, {isFalse, isUnknown}: isFalse,
		{isUnknown, isTrue}: isUnknown, {isUnknown, isFalse}: isFalse, {isUnknown, isUnknown}: isUnknown,
	}
	or := map[[2]truth]truth{
		{isTrue, isTrue}: isTrue, {isTrue, isFalse}: isTrue, {isTrue, isUnknown}: isTrue,
		{isFalse, isTrue}: isTrue, {isFalse, isFalse}: isFalse, {isFalse, isUnknown}: isUnknown,
		{isUnknown, isTrue}: isTrue, {isUnknown, isFalse}: isUnknown, {isUnknown, isUnknown}: isUnknown,
	}
	not := map[truth]truth{isTrue: isFalse, isFalse: isTrue, isUnknown: isUnknown}
	for _, a := range values {
		if got := a.not(); got != not[a] {
			t.Errorf("NOT %b = %b, want %b", a, got, not[a])
		}
		for _, b := range values {
			if got := a.and(b); got != and[[2]truth{a, b}] {
				t.Errorf("%b AND %b = %b, want %b", a, b, got, and[[2]truth{a, b}])
			}
			if got := a.or(b); got != or[[2]truth{a, b}] {
				t.Errorf("%b OR %b = %b, want %b", a, b, got, or[[2]truth{a, b}])
			}
		}
	}
	for s := truth(1); s <= anyTruth; s++ {
		for u := truth(1); u <= anyTruth; u++ {
			var wantAnd, wantOr truth
			for _, a := range values {
				for _, b := range values {
					if s&a != 0 && u&b != 0 {
						wantAnd |= and[[2]truth{a, b}]
						wantOr |= or[[2]truth{a, b}]
					}
				}
			}
			if got := s.and(u); got != wantAnd {
				t.Errorf("%b AND %b = %b, want %b", s, u, got, wantAnd)
			}
			if got := s.or(u); got != wantOr {
				t.Errorf("%b OR %b = %b, want %b", s, u, got, wantOr)
			}
		}
	}
}
