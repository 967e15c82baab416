package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// TestAccountsNameSecret: the secret wire draws unknown names' plugins from
// is the same for the same users however the configuration orders them or
// spells their hashes, and changes with a hash: names alone do not give it.
func TestAccountsNameSecret(t *testing.T) {
	hashA, hashB := "*"+strings.Repeat("AB", 20), "*"+strings.Repeat("CD", 20)
	secret := func(users ...catalog.User) []byte { return accounts{&catalog.Config{Users: users}}.NameSecret() }
	ann, bob := catalog.User{Name: "ann", PasswordHash: hashA}, catalog.User{Name: "bob", PasswordHash: hashB}
	base := secret(ann, bob)
	lower := ann
	lower.PasswordHash = strings.ToLower(hashA)
	if !bytes.Equal(base, secret(bob, lower)) {
		t.Error("the same users in another order, one hash in lower case, gave another secret")
	}
	changed := bob
	changed.PasswordHash = hashA
	if bytes.Equal(base, secret(ann, changed)) {
		t.Error("another hash under the same names gave the same secret")
	}
}
