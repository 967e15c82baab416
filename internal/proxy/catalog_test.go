package proxy

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestCatalogErrorKinds: the catalog engine's errors reach the client with
// their own codes: a statement past its time limit is 3024 (it was sent
// as 1235), an interrupted one 1317, a bad value 1231, an unknown
// system variable 1193.
func TestCatalogErrorKinds(t *testing.T) {
	for code, want := range map[uint16]dperr.Kind{3024: dperr.Timeout, 1317: dperr.Canceled, 1231: dperr.InvalidValue, 1064: dperr.Parse, 1235: dperr.Unsupported, 1193: dperr.UnknownVariable} {
		err := catalogError(&catalogdb.Error{Code: code, State: "HY000", Msg: "m"})
		if got := dperr.KindOf(err); got != want {
			t.Errorf("catalog error %d: kind %v, want %v", code, got, want)
		}
	}
}
