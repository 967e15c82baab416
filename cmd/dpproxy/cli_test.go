package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestHashPassword: the argument or stdin's first line is hashed; an
// argument starting with "-" (--help, -h) is a usage request and no hash
// is printed (a README review saw --help hashed as a password).
func TestHashPassword(t *testing.T) {
	const demoHash = "*63F952CE74607A963D015778C86E2A447411DCC0" // PASSWORD('--help'), never to be printed
	for _, arg := range []string{"--help", "-h", "-secret"} {
		var out bytes.Buffer
		err := hashPassword([]string{arg}, strings.NewReader(""), &out)
		if err == nil || !strings.Contains(err.Error(), "usage: dpproxy hash-password") || out.Len() != 0 {
			t.Errorf("%s: err %v, printed %q", arg, err, out.String())
		}
		if strings.Contains(out.String(), demoHash) {
			t.Errorf("%s hashed", arg)
		}
	}
	for _, c := range []struct {
		args  []string
		stdin string
	}{{[]string{"alice-secret"}, ""}, {nil, "alice-secret\n"}, {nil, "alice-secret"}} {
		var out bytes.Buffer
		if err := hashPassword(c.args, strings.NewReader(c.stdin), &out); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out.String()); got != "*72633BEA1F74D211474C9767891EAE137FF89F2F" { // examples/*.yaml's alice
			t.Errorf("%v %q: %s", c.args, c.stdin, got)
		}
	}
}

// TestHelpListsSubcommands: -h prints the subcommands as well as the
// flags, and is not an error of the command line.
func TestHelpListsSubcommands(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), []string{"-h"}, &out, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"hash-password", "load-demo", "-config", "-listen"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h does not mention %s:\n%s", want, out.String())
		}
	}
}

// TestLoadDemoErrorsHoldNoPassword: load-demo's error on a DSN the driver
// cannot read names no password (net/url quotes such a URL whole).
func TestLoadDemoErrorsHoldNoPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://postgres:s3cretpw ab@127.0.0.1:5432/x",
		"postgres://postgres:s3cretpw@127.0.0.1:bad/x",
	} {
		var out bytes.Buffer
		err := Run(context.Background(), []string{"load-demo", "--driver", "postgres", "--dsn", dsn}, &out, &out)
		if err == nil || strings.Contains(err.Error(), "s3cretpw") || strings.Contains(out.String(), "s3cretpw") {
			t.Errorf("%q: err %v, printed %q", dsn, err, out.String())
		}
	}
}
