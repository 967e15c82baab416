package planner

import (
	"strings"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// maxFormatDecimals is the most decimals FORMAT writes (MariaDB's
// FORMAT_MAX_DECIMALS): more are 38, fewer than 0 are 0.
const maxFormatDecimals = 38

// numberLocale is how a MariaDB locale writes a number in FORMAT: its
// decimal point, the separator of its digit groups, and the sizes of the
// groups from the point leftwards, the last repeating (none: no groups).
type numberLocale struct {
	point, thousands string
	groups           []int
}

// The number locales of MariaDB 10.11's locales (sql_locale.cc), read
// from its FORMAT(-1234567890123.456, 2, name): bg_BG's separator is a NUL
// byte, as MariaDB writes it.
var (
	localeComma      = numberLocale{".", ",", []int{3}}
	localeDot        = numberLocale{",", ".", []int{3}}
	localeSpace      = numberLocale{",", " ", []int{3}}
	localeApostrophe = numberLocale{",", "'", []int{3}}
	localeNUL        = numberLocale{",", "\x00", []int{3}}
	localeSwiss      = numberLocale{".", "'", []int{3}}
	localeIndian     = numberLocale{".", ",", []int{3, 2}}
	localeCommaPoint = numberLocale{",", "", nil}
	localeDotPoint   = numberLocale{".", "", nil}
)

// locales are MariaDB's locale names, each with its numberLocale.
var locales = func() map[string]numberLocale {
	m := map[string]numberLocale{}
	for l, names := range map[*numberLocale]string{
		&localeComma: "ar_AE ar_BH ar_DZ ar_EG ar_IN ar_IQ ar_JO ar_KW ar_LB ar_LY ar_MA ar_OM ar_QA ar_SD ar_SY ar_TN ar_YE " +
			"en_AU en_CA en_GB en_NZ en_PH en_US en_ZA en_ZW es_DO es_GT es_HN es_MX es_NI es_PA es_PE es_PR es_SV es_US " +
			"gu_IN he_IL hi_IN ja_JP ko_KR ms_MY th_TH ur_PK zh_CN zh_HK zh_TW",
		&localeDot: "be_BY da_DK de_BE de_DE de_LU es_AR es_BO es_CL es_CO es_EC es_ES es_PY es_UY es_VE fo_FO hu_HU id_ID " +
			"is_IS lt_LT mn_MN nb_NO no_NO ro_RO ru_UA sq_AL tr_TR uk_UA vi_VN",
		&localeSpace:      "cs_CZ es_CR et_EE fi_FI ka_GE lv_LV mk_MK ru_RU sk_SK sv_FI sv_SE",
		&localeApostrophe: "it_CH rm_CH",
		&localeNUL:        "bg_BG",
		&localeSwiss:      "de_CH",
		&localeIndian:     "en_IN ta_IN te_IN",
		&localeCommaPoint: "ca_ES de_AT el_GR eu_ES fr_BE fr_CA fr_CH fr_FR fr_LU gl_ES hr_HR it_IT nl_BE nl_NL pl_PL pt_BR pt_PT sl_SI",
		&localeDotPoint:   "ar_SA sr_RS sr_YU",
	} {
		for _, name := range strings.Fields(names) {
			m[strings.ToLower(name)] = *l
		}
	}
	return m
}()

// Warnings of FORMAT's locale.
const (
	unknownLocaleWarning    = 1649
	deprecatedLocaleWarning = 1287
)

// lookupLocale is the locale named by d, as MariaDB finds it for FORMAT
// (its name in any case): an unknown name, or NULL, is en_US with warning
// 1649; sr_YU is sr_RS's with warning 1287, as MariaDB deprecates it.
func lookupLocale(d Datum, w *Warnings) numberLocale {
	name := "NULL"
	if !d.Null {
		name = text(d)
	}
	l, ok := locales[strings.ToLower(name)]
	switch {
	case !ok:
		w.warn(false, unknownLocaleWarning, "Unknown locale: '"+name+"'")
		return localeComma
	case strings.EqualFold(name, "sr_YU"):
		w.warn(false, deprecatedLocaleWarning, "'sr_YU' is deprecated and will be removed in a future release. Please use sr_RS instead")
	}
	return l
}

// formatFunc is FORMAT(x, decimals[, locale]) as MariaDB 10.11 computes
// it: NULL for NULL decimals, else the locale is looked up, then NULL for
// a NULL x; decimals read as an integer
// (intArg) and kept in [0, 38]; an integer or DECIMAL rounded half away
// from zero (the digits post-processing computed: FORMAT(COUNT(*) / 7, 6)
// rounds the nine decimals of the quotient), a DOUBLE or text read as one
// rounded as ROUND rounds it (ties to even) and written as MariaDB writes
// a DOUBLE of that many decimals (fcvt: its shortest digits padded with
// zeros, so 1e300 is 1 and 300 zeros), zero without a sign; then the
// integer digits grouped
// and the point written as the locale writes them (en_US without one).
// A locale warns as lookupLocale says, unless quiet (a literal's, which
// statementWarnings counts once for the statement, as MariaDB does).
func formatFunc(a []Datum, quiet bool, w *Warnings) Datum {
	if a[1].Null {
		return Datum{Null: true}
	}
	loc := localeComma
	if len(a) == 3 {
		warnings := w
		if quiet {
			warnings = nil
		}
		loc = lookupLocale(a[2], warnings)
	}
	if a[0].Null {
		return Datum{Null: true}
	}
	dec := int(min(max(intArg(a[1], w), 0), maxFormatDecimals))
	var digits string
	if isExact(a[0]) {
		digits = exactOf(a[0]).withFrac(dec).String()
	} else {
		w.readNumber(a[0], "DOUBLE")
		digits = fcvt(roundDigits(number(a[0]), float64(dec), false), dec)
	}
	return Datum{Str: loc.group(digits, dec), IsText: true, coll: w.madeText(nil)}
}

// group writes digits, a number with dec decimals after a point, as
// MariaDB's FORMAT does in locale l: when it is long enough to hold a
// group, the integer digits grouped and the point l's; else the point
// only.
func (l numberLocale) group(digits string, dec int) string {
	decLen := 0
	if dec > 0 {
		decLen = dec + 1
	}
	if len(l.groups) == 0 || len(digits) < decLen+1+l.groups[0] {
		if decLen > 0 {
			digits = digits[:len(digits)-decLen] + l.point + digits[len(digits)-dec:]
		}
		return digits
	}
	sign, whole := "", digits[:len(digits)-decLen]
	if strings.HasPrefix(whole, "-") {
		sign, whole = "-", whole[1:]
	}
	var parts []string
	groups := l.groups
	for len(whole) > groups[0] {
		parts = append(parts, whole[len(whole)-groups[0]:])
		whole = whole[:len(whole)-groups[0]]
		if len(groups) > 1 {
			groups = groups[1:]
		}
	}
	parts = append(parts, whole)
	var b strings.Builder
	b.WriteString(sign)
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
		if i > 0 {
			b.WriteString(l.thousands)
		}
	}
	if dec > 0 {
		b.WriteString(l.point + digits[len(digits)-dec:])
	}
	return b.String()
}

// literalLocales counts, once for the statement, the warnings of the
// locales FORMAT takes as literals in q's expressions (lookupLocale), as
// MariaDB gives them when it prepares the statement, whatever its rows;
// Eval then evaluates such a FORMAT quietly (formatNumber).
func literalLocales(q *sqlrewrite.Query, w *Warnings) {
	seen := map[*sqlrewrite.Expr]bool{}
	var walk func(e *sqlrewrite.Expr)
	walk = func(e *sqlrewrite.Expr) {
		if e == nil || seen[e] {
			return
		}
		seen[e] = true
		if literalLocale(e) {
			lookupLocale(KeyDatum(e.Args[2].Value), w)
		}
		for _, a := range e.Args {
			walk(a)
		}
	}
	for _, c := range q.Columns {
		walk(c.Expr)
	}
	walk(q.Having)
	for _, k := range q.OrderBy {
		walk(k.Expr)
	}
	for _, win := range q.Windows {
		walk(win.Arg)
		for _, p := range win.PartitionBy {
			walk(p)
		}
		for _, k := range win.OrderBy {
			walk(k.Expr)
		}
	}
	if o := q.Outer; o != nil {
		for _, a := range o.Aggs {
			walk(a.Arg)
		}
		for _, c := range o.Columns {
			walk(c.Expr)
		}
		walk(o.Having)
		for _, k := range o.OrderBy {
			walk(k.Expr)
		}
	}
}

// literalLocale reports whether e is FORMAT with a literal locale.
func literalLocale(e *sqlrewrite.Expr) bool {
	return e.Kind == sqlrewrite.ExprFunc && e.Op == "format" && len(e.Args) == 3 && e.Args[2].Kind == sqlrewrite.ExprConst
}
