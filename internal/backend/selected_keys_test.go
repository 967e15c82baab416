package backend

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestSelectedKeysKeepsTheFirstAccepted: SelectedKeys returns, of the
// values keep accepts, the first limit in CompareKeys order, and more
// exactly when further values were accepted; the values keep refuses
// (here the rare ones, which sort first) neither take a place nor make
// more true, and keep sees every value's count whatever the limit. The
// table holds 250 frequent keys (3 rows) and 120 rare ones (1 row), text
// and integer, inserted in an order unrelated to theirs. Before the cap,
// KeyCounts returned every accepted value: memory grew with them.
func TestSelectedKeysKeepsTheFirstAccepted(t *testing.T) {
	for _, b := range threeBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			const frequent, rare = 250, 120
			var rows []string
			for i := range frequent {
				k := (i * 97) % frequent // an order unrelated to the keys'
				for range 3 {
					rows = append(rows, fmt.Sprintf("('f%04d', %d)", k, 1000+k))
				}
			}
			for i := range rare {
				rows = append(rows, fmt.Sprintf("('a%04d', %d)", i, -i))
			}
			rows = append(rows, "(NULL, NULL)")
			for _, q := range []string{"CREATE TABLE sk (s VARCHAR(16), n BIGINT)", "INSERT INTO sk (s, n) VALUES " + strings.Join(rows, ", ")} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%.60s: %v", q, err)
				}
			}
			ctx := context.Background()
			snap, err := New(db, b.dialect, nil).Snapshot(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			for _, numeric := range []bool{false, true} {
				column := "s"
				if numeric {
					column = "n"
				}
				var accepted []sqlrewrite.Value
				for k := range frequent {
					v := sqlrewrite.Value{Str: fmt.Sprintf("f%04d", k), IsText: true}
					if numeric {
						v = sqlrewrite.Value{Num: float64(1000 + k)}
					}
					accepted = append(accepted, v)
				}
				for _, limit := range []int{0, 1, 7, 100, frequent - 1, frequent, frequent + 1, 10000} {
					calls := 0
					keep := func(n int64) bool { calls++; return n >= 3 }
					keys, more, err := snap.SelectedKeys(ctx, sqlrewrite.Fetch{Table: "sk", Keys: &sqlrewrite.KeyCounts{Column: column, Numeric: numeric}}, keep, limit)
					if err != nil {
						t.Fatal(err)
					}
					want := accepted[:min(limit, frequent)]
					if !slices.Equal(keys, want) || more != (limit < frequent) {
						t.Errorf("%s, limit %d: %d keys %v…, more %v; want the first %d of the accepted, more %v",
							column, limit, len(keys), keys[:min(len(keys), 3)], more, len(want), limit < frequent)
					}
					if calls != frequent+rare {
						t.Errorf("%s, limit %d: keep saw %d counts, want every value's (%d)", column, limit, calls, frequent+rare)
					}
				}
			}
		})
	}
}

// TestParseIntegerAsSetString: parseInteger accepts exactly the texts
// big.Int's SetString(s, 10) accepts, with the same value, on both sides
// of its strconv path's 18 characters.
func TestParseIntegerAsSetString(t *testing.T) {
	for _, s := range []string{"0", "-0", "+7", "007", "-", "+", "", " 1", "1 ", "1_000", "0x10", "1e3", "12a", "--1", "+-1", "１",
		"123456789012345678", "-12345678901234567", "999999999999999999", "9223372036854775807", "-9223372036854775808",
		"-999999999999999999", "99999999999999999999999999"} {
		want, wantOK := new(big.Int).SetString(s, 10)
		got, ok := parseInteger([]byte(s))
		if ok != wantOK || ok && got.Cmp(want) != 0 {
			t.Errorf("parseInteger(%q) = %v, %v; SetString: %v, %v", s, got, ok, want, wantOK)
		}
	}
}
