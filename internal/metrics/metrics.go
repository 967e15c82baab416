// Package metrics exports dpproxy's operational metrics in the Prometheus
// text format on /metrics, and a liveness check on /healthz, on an address
// of their own (catalog: metrics.listen; off unless configured).
//
// Nothing here carries data values or released answers: counts of
// connections, statements by outcome and their latency, budget spent per
// user and table (what the ledger records anyway), backend errors and
// failed logins.
package metrics

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// Metrics holds the collectors of one proxy.
type Metrics struct {
	reg        *prometheus.Registry
	statements *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	epsilon    *prometheus.CounterVec
	delta      *prometheus.CounterVec
	backend    *prometheus.CounterVec
}

// New returns the metrics of a proxy whose wire server reports stats.
func New(stats func() wire.Stats) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		statements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_statements_total", Help: "Statements answered, by outcome: ok or the error class (parse, unsupported, budget_exhausted, backend, timeout, ...).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "dpproxy_statement_duration_seconds", Help: "Time from a statement's arrival to its answer, by outcome.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"outcome"}),
		epsilon: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_epsilon_spent_total", Help: "Privacy budget ε committed, by user and table.",
		}, []string{"user", "table"}),
		delta: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_delta_spent_total", Help: "Privacy budget δ committed, by user and table.",
		}, []string{"user", "table"}),
		backend: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dpproxy_backend_errors_total", Help: "Statements that failed in the backend database, by kind (error, timeout).",
		}, []string{"kind"}),
	}
	gauge := func(name, help string, f func(wire.Stats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(stats()) })
	}
	counter := func(name, help string, f func(wire.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f(stats())) })
	}
	m.reg.MustRegister(m.statements, m.latency, m.epsilon, m.delta, m.backend,
		gauge("dpproxy_connections", "Client connections now open, logged in or not.", func(s wire.Stats) float64 { return float64(s.Open) }),
		gauge("dpproxy_connections_in_handshake", "Client connections not logged in yet.", func(s wire.Stats) float64 { return float64(s.InHandshake) }),
		counter("dpproxy_connections_accepted_total", "Client connections admitted.", func(s wire.Stats) uint64 { return s.Accepted }),
		counter("dpproxy_connections_refused_total", "Client connections refused with 1040.", func(s wire.Stats) uint64 { return s.Refused }),
		counter("dpproxy_packets_too_large_total", "Connections closed for a packet above the limit (1153).", func(s wire.Stats) uint64 { return s.OversizedPackets }),
		counter("dpproxy_failed_logins_total", "Failed logins.", func(s wire.Stats) uint64 { return s.FailedLogins }),
		counter("dpproxy_connection_panics_total", "Connections ended by a recovered panic (a bug).", func(s wire.Stats) uint64 { return s.Panics }),
	)
	return m
}

// ObserveStatement records one statement (proxy.Engine.SetObserver).
func (m *Metrics) ObserveStatement(outcome string, elapsed time.Duration) {
	outcome = strings.ReplaceAll(outcome, " ", "_")
	m.statements.WithLabelValues(outcome).Inc()
	m.latency.WithLabelValues(outcome).Observe(elapsed.Seconds())
	switch outcome {
	case "backend":
		m.backend.WithLabelValues("error").Inc()
	case "timeout":
		m.backend.WithLabelValues("timeout").Inc()
	}
}

// ObserveCharge records a committed reservation (budget.Ledger.OnCommit):
// the user is its "user:" account, the table the part of its memo before
// the first ": " (package exec writes every memo as "<table>: ...").
func (m *Metrics) ObserveCharge(c budget.Charge) {
	user := ""
	for _, a := range c.Accounts {
		if u, ok := strings.CutPrefix(a, "user:"); ok {
			user = u
		}
	}
	table, _, _ := strings.Cut(c.Memo, ": ")
	m.epsilon.WithLabelValues(user, table).Add(c.Cost.Epsilon)
	m.delta.WithLabelValues(user, table).Add(c.Cost.Delta)
}

// Handler serves /metrics, and /healthz: 200 "ok" when healthy reports
// nil (the ledger and the backend answer), else 503 without details. A
// non-empty token is required of /metrics as "Authorization: Bearer
// <token>" (compared in constant time); without it, or with another,
// /metrics answers 401 and nothing else. /healthz needs no token.
func (m *Metrics) Handler(healthy func(context.Context) error, token string, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	var scrape http.Handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if token != "" {
		scrape = requireBearer(token, scrape)
	}
	mux.Handle("GET /metrics", scrape)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := healthy(ctx); err != nil {
			log.Warn("metrics: health check failed", "err", err)
			http.Error(w, "unhealthy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// requireBearer passes to next only requests carrying
// "Authorization: Bearer <token>" (the scheme in any case); others get 401 with a
// WWW-Authenticate challenge (RFC 6750).
func requireBearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 7235 §2.1): bearer, BEARER.
		scheme, given, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		ok = ok && strings.EqualFold(scheme, "Bearer")
		// Hashing first makes the comparison's time independent of the
		// lengths of both tokens, not only of where they differ.
		got := sha256.Sum256([]byte(given))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="dpproxy metrics"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Serve serves h on l until ctx is cancelled, over TLS when tc is not nil.
func Serve(ctx context.Context, l net.Listener, h http.Handler, tc *tls.Config) error {
	if tc != nil {
		l = tls.NewListener(l, tc)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	})
	defer stop()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
