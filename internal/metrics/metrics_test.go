package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestMetricsToken: with a token, /metrics answers only a request bearing
// exactly it (not a prefix, not a longer string, not another scheme);
// /healthz needs none. Without a token, /metrics is open.
func TestMetricsToken(t *testing.T) {
	const token = "0123456789abcdef-metrics"
	healthy := func(context.Context) error { return nil }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	get := func(h http.Handler, path, authorization string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	guarded := New(func() wire.Stats { return wire.Stats{} }).Handler(healthy, token, log)
	for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer " + token[:len(token)-1], "Bearer " + token + "x", "Basic " + token, "Bearer" + token, token} {
		code, body := get(guarded, "/metrics", auth)
		if code != http.StatusUnauthorized || strings.Contains(body, "dpproxy_") {
			t.Errorf("Authorization %q: %d %q, want 401 without metrics", auth, code, body)
		}
	}
	// The scheme in any case (RFC 7235 §2.1).
	for _, scheme := range []string{"Bearer ", "bearer ", "BEARER "} {
		if code, body := get(guarded, "/metrics", scheme+token); code != http.StatusOK || !strings.Contains(body, "dpproxy_connections ") {
			t.Errorf("with the token after %q: %d %q", scheme, code, body)
		}
	}
	if code, body := get(guarded, "/healthz", ""); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz without a token: %d %q", code, body)
	}
	open := New(func() wire.Stats { return wire.Stats{} }).Handler(healthy, "", log)
	if code, _ := get(open, "/metrics", ""); code != http.StatusOK {
		t.Errorf("without a configured token: %d", code)
	}
}
