// Command dpproxy is a differentially private SQL proxy: MySQL clients
// connect to it, it answers aggregate queries over the tables of its
// configuration with noise calibrated to each analyst's privacy budget, and
// no raw row ever reaches a client.
//
// Usage:
//
//	dpproxy [--config dpproxy.yaml] [--listen ADDR] [--reset-budget] [--log-level LEVEL] [--demo-cert FILE]
//	dpproxy hash-password [PASSWORD]
//	dpproxy load-demo --driver postgres|mysql|sqlite --dsn DSN [--table pums]
//
// Without --config it serves the embedded demo: table pums in SQLite, users
// demo (mysql_native_password) and demo_sha2 (caching_sha2_password), both
// with password demo, on 127.0.0.1:3307, with TLS from a self-signed
// certificate generated at start and written to --demo-cert.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// usage is what -h prints before the flags.
const usage = `Usage:
  dpproxy [flags]                   serve (without --config: the embedded demo)
  dpproxy hash-password [PASSWORD]  print a users[].password_hash (the password may come on stdin)
  dpproxy load-demo --driver postgres|mysql|sqlite --dsn DSN [--table pums]
                                    load the demo table into a database

Flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0) // -h asked for the usage, printed
		}
		fmt.Fprintln(os.Stderr, "dpproxy:", err)
		os.Exit(2)
	}
}

// Run runs the command with args (without the program name) until ctx ends.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "hash-password":
			return hashPassword(args[1:], os.Stdin, stdout)
		case "load-demo":
			return loadDemo(ctx, args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("dpproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	var opts options
	fs.StringVar(&opts.configPath, "config", "", "configuration file (YAML); without it the embedded demo runs")
	fs.StringVar(&opts.listen, "listen", "", "address to listen on, overriding the configuration (default 127.0.0.1:3307)")
	fs.StringVar(&opts.metricsListen, "metrics-listen", "", "address of /metrics and /healthz, overriding the configuration (\"off\" disables them)")
	fs.BoolVar(&opts.resetBudget, "reset-budget", false, "forget all spent budget before starting (demo and testing only)")
	fs.StringVar(&opts.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&opts.demoLedger, "demo-ledger", "dpproxy-ledger.db", "ledger file of the demo (no --config)")
	fs.StringVar(&opts.demoCert, "demo-cert", "dpproxy-demo-cert.pem", "where the demo (no --config) writes its self-signed TLS certificate")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the whole run to this file, for benchmarks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see dpproxy -h)", fs.Arg(0))
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return serve(ctx, opts, stderr)
}

type options struct {
	configPath string
	listen     string
	// metricsListen overrides metrics.listen; "off" disables metrics.
	metricsListen string
	resetBudget   bool
	logLevel      string
	demoLedger    string
	demoCert      string
}
