package sqlrewrite

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

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

// TestRowTruthExactConstants: comparisons and truth values of constants
// are decided as MySQL decides them, exactly (DECIMAL literals and their
// + - *), or not at all (any value) where a float64 would guess: the
// float64 reading found 0.1 + 0.2 = 0.3 FALSE, NOT (1 = 1.0000000000000001)
// FALSE and 2/3 = 0.6667 FALSE where MySQL finds them TRUE, so such a
// WHERE was answered as keeping no row.
func TestRowTruthExactConstants(t *testing.T) {
	p := parser.New()
	for _, tc := range []struct {
		where string
		want  truth
	}{
		{"0.1 + 0.2 = 0.3", isTrue},
		{"0.1 + 0.2 <> 0.3", isFalse},
		{"0.1 + 0.2 = 0.4", isFalse},
		{"NOT (1 = 1.0000000000000001)", isTrue},
		{"1 < 1.0000000000000001", isTrue},
		{"9007199254740993 <> 9007199254740992", isTrue},
		{"9007199254740993 = 9007199254740992", isFalse},
		{"18446744073709551615 > 18446744073709551614", isTrue},
		{"3 * 0.1 = 0.3", isTrue},
		{"1 - 1", isFalse},
		{"0.1 - 0.1", isFalse},
		{"0.0000000000000000000000000000000000000001", anyTruth},
		{"1 = 0", isFalse},
		{"FALSE", isFalse},
		{"TRUE", isTrue},
		{"1 = 0 AND c > 3", isFalse},
		{"c BETWEEN 0.1 + 0.2 AND 0.3", anyTruth},
		{"CASE WHEN 0.1 + 0.2 = 0.3 THEN c END", anyTruth},
		{"CASE WHEN 0.1 + 0.2 = 0.4 THEN c END", isUnknown},
		{"c = NULL", isUnknown},
		// Not known exactly: division, float literals, integer overflow.
		{"2/3 = 0.6667", anyTruth},
		{"1/3*3 - 1", anyTruth},
		{"1/3*3 = 1", anyTruth},
		{"1e0 = 1.0000000000000001", anyTruth},
		{"0.5e0", anyTruth},
		{"9223372036854775807 + 1 > 0", anyTruth},
		{"-9223372036854775807 - 2 < 0", anyTruth},
		{"18446744073709551615 - 1 > 0", anyTruth},
		{"'1' = 1", anyTruth},
	} {
		stmt, err := p.ParseOneStmt("SELECT * FROM t WHERE "+tc.where, "", "")
		if err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		if got := rowTruth(stmt.(*ast.SelectStmt).Where); got != tc.want {
			t.Errorf("WHERE %s: truth %03b, want %03b", tc.where, got, tc.want)
		}
	}
}

// TestExactFloat: a condition's float64 stands exactly for its constant
// only when the constant is exact (conditionNumber) and is that float64's
// shortest decimal.
func TestExactFloat(t *testing.T) {
	p := parser.New()
	for _, tc := range []struct {
		constant string
		num      float64
		want     bool
	}{
		{"0.1", 0.1, true},
		{"-2.5", -2.5, true},
		{"7 * 24", 168, true},
		{"9007199254740992", 9007199254740992, true},
		{"9007199254740993", 9007199254740992, false},
		{"5.0000000000000001", 5, false},
		{"365 / 7", 365.0 / 7, false},
		{"1e2", 100, false},
		// A numeric string is its exact value (conditionNumber), as
		// MariaDB compares an integer or DECIMAL column with it.
		{"'5'", 5, true},
		{"'1e2'", 100, true},
		{"'9007199254740993'", 9007199254740992, false},
		{"'5.0000000000000001'", 5, false},
		{"'five'", 5, false},
	} {
		stmt, err := p.ParseOneStmt("SELECT "+tc.constant, "", "")
		if err != nil {
			t.Fatalf("%s: %v", tc.constant, err)
		}
		if got := exactFloat(stmt.(*ast.SelectStmt).Fields.Fields[0].Expr, tc.num); got != tc.want {
			t.Errorf("exactFloat(%s, %g) = %v, want %v", tc.constant, tc.num, got, tc.want)
		}
	}
}
