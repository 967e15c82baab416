package bench

import (
	"encoding/csv"
	"io"
	"strconv"
)

// WriteCSV writes every result as one CSV row, with a header, for analyses
// beyond the report's tables.
func WriteCSV(w io.Writer, results []Result) error {
	cw := csv.NewWriter(w)
	header := []string{"statistic", "dataset", "n", "epsilon", "mechanism", "truth", "mean_abs", "median_abs", "p90_abs",
		"std_err", "expected_abs", "refused", "seconds_per_release", "trials", "note", "error"}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for _, r := range results {
		row := []string{r.Statistic, r.Dataset, strconv.Itoa(r.N), f(r.Epsilon), r.Mechanism, f(r.Truth), f(r.MeanAbs),
			f(r.MedianAbs), f(r.P90Abs), f(r.StdErr), f(r.Expected), f(r.Refused), f(r.Time.Seconds()), strconv.Itoa(r.Trials), r.Note, r.Err}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
