package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// DeltaHint says, for each release of p whose mechanism needs δ, which
// mechanism needs it for which statistic, and how to ask the same without
// δ where a form exists: the difference of two PERCENTILE_CONTs for an
// IQR, none for a regression coefficient (only ptr answers those), SET
// @dp_mechanism = 'auto' for the others (a quantile or mean that a forced
// mechanism answers with δ: auto's mechanisms for them need none). It is "" when no
// release of p needs δ. The executor adds it to a refusal for want of δ.
func (p *Plan) DeltaHint() string {
	var hints []string
	for _, r := range p.Releases {
		if !r.Mechanism.NeedsDelta() {
			continue
		}
		var h string
		switch r.Stat.Kind {
		case StatIQR:
			col := r.Stat.Column.Name
			h = fmt.Sprintf("%s needs delta for %s, and no other mechanism answers IQR; PERCENTILE_CONT(%s, 0.75) - PERCENTILE_CONT(%s, 0.25) needs none",
				r.Mechanism.Name(), r.Stat, col, col)
		case StatRegression:
			h = fmt.Sprintf("%s needs delta for %s, and no mechanism answers it without delta", r.Mechanism.Name(), r.Stat)
		default:
			h = fmt.Sprintf("%s needs delta for %s; SET @dp_mechanism = 'auto' answers it without delta", r.Mechanism.Name(), r.Stat)
		}
		if !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	return strings.Join(hints, "; ")
}

// DeltaHint says that the partition selection of the GROUP BY key needs
// δ (the set of values it releases is (ε, δ)-DP), and which forms of the
// statement need none: the column's values declared in the
// configuration (values:), which make the key public, and, for an integer
// column, a bucket FLOOR(col / w) * w over its declared bounds. The
// executor adds it to a refusal for want of δ.
func (s *PartitionSelection) DeltaHint() string {
	col := s.Column.Name
	forms := fmt.Sprintf("declaring the values of %s in the configuration (values: [...])", col)
	if s.Column.Type == catalog.Integer {
		forms = fmt.Sprintf("GROUP BY FLOOR(%s / w) * w, buckets over its declared bounds, or %s", col, forms)
	}
	return fmt.Sprintf("partition selection needs delta to release the values of the GROUP BY key %s; %s needs none", col, forms)
}
