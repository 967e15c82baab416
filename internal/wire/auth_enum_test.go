package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// firstAuthReply logs in as user from localIP with a wrong scramble for
// plugin and returns the first byte of the server's reply: 0xfe (auth
// switch), 0x01 (AuthMoreData) or 0xff (error).
func firstAuthReply(t *testing.T, addr, localIP, user, plugin string) byte {
	t.Helper()
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(localIP)}, Timeout: 5 * time.Second}
	nc, err := dialer.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	readPacket := func() []byte {
		var h [4]byte
		if _, err := io.ReadFull(nc, h[:]); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
		if _, err := io.ReadFull(nc, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	readPacket() // initial handshake
	scramble := 20
	if plugin == PluginCachingSHA2 {
		scramble = 32
	}
	caps := uint32(gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_SECURE_CONNECTION | gomysql.CLIENT_PLUGIN_AUTH)
	p := binary.LittleEndian.AppendUint32(nil, caps)
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45)
	p = append(p, make([]byte, 23)...)
	p = append(p, user...)
	p = append(p, 0, byte(scramble))
	p = append(p, bytes.Repeat([]byte{7}, scramble)...)
	p = append(p, plugin...)
	p = append(p, 0)
	if _, err := nc.Write(append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), 1}, p...)); err != nil {
		t.Fatal(err)
	}
	return readPacket()[0]
}

// TestAuthExchangeDoesNotRevealUsers: where users' plugins differ, the
// first reply to a wrong password (auth switch or not) is what an unknown
// name may get too, and one name always gets the same. Before, an unknown
// name always got the announced plugin, so a switch showed that a name
// existed (an independent review). Both mixes: caching_sha2 announced with
// native users, and native announced with a caching_sha2 user. Each login
// comes from its own address, so the failure delay never applies.
func TestAuthExchangeDoesNotRevealUsers(t *testing.T) {
	for i, announced := range []string{PluginCachingSHA2, PluginNativePassword} {
		t.Run(announced, func(t *testing.T) {
			ts := startServer(t, Config{HandshakePlugin: announced})
			ip := func(j int) string { return fmt.Sprintf("127.0.%d.%d", 10+i, j+1) }
			replies := map[byte]bool{}
			for j := range 30 {
				name := fmt.Sprintf("ghost%d", j)
				r := firstAuthReply(t, ts.addr(), ip(j), name, announced)
				if again := firstAuthReply(t, ts.addr(), ip(j+100), name, announced); again != r {
					t.Errorf("%s: first reply 0x%02x, then 0x%02x", name, r, again)
				}
				replies[r] = true
			}
			for j, user := range []string{testUser, testSHA2User} {
				if r := firstAuthReply(t, ts.addr(), ip(j+200), user, announced); !replies[r] {
					t.Errorf("existing user %s got 0x%02x, which no unknown name got (they got %v)", user, r, replies)
				}
			}
		})
	}
}

// TestUnknownUserPlugins: unknown names get caching_sha2_password in the
// proportion of the users that have it, and a name always the same plugin.
func TestUnknownUserPlugins(t *testing.T) {
	a := newAuthenticator(fakeAccounts{
		"n1": {NativeHash: make([]byte, 20)}, "n2": {NativeHash: make([]byte, 20)},
		"n3": {NativeHash: make([]byte, 20)}, "s1": {NativeHash: make([]byte, 20), CachingSHA2: true},
	}, Config{})
	sha2 := 0
	for i := range 4000 {
		name := fmt.Sprintf("user%d", i)
		p := a.pluginFor(name, PluginNativePassword)
		if p != a.pluginFor(name, PluginNativePassword) {
			t.Fatalf("%s: two different plugins", name)
		}
		if p == PluginCachingSHA2 {
			sha2++
		}
	}
	if sha2 < 850 || sha2 > 1150 { // 1000 expected, σ ≈ 27
		t.Errorf("%d of 4000 unknown names got caching_sha2_password, want about 1000", sha2)
	}
	if p := a.pluginFor("n1", PluginCachingSHA2); p != PluginNativePassword {
		t.Errorf("a native user got %s", p)
	}
	if p := newAuthenticator(fakeAccounts{}, Config{}).pluginFor("x", PluginCachingSHA2); p != PluginCachingSHA2 {
		t.Errorf("no users: got %s, want the announced plugin", p)
	}
}

// TestUnknownUserPluginsAgreeAcrossProxies: two authenticators built from
// the same accounts (two proxies behind a load balancer, or one before and
// after a restart) draw the same plugin for every unknown name, and ones
// whose hashes differ under the same names draw differently: the key comes
// from the hashes, not from the names alone. Before, the key was made at
// random at start, so a quarter to a half of unknown names got different
// plugins from two proxies while users never did, and one login attempt
// per proxy told a name did not exist (found by an independent review).
func TestUnknownUserPluginsAgreeAcrossProxies(t *testing.T) {
	accounts := func(hashByte byte) fakeAccounts {
		hash := bytes.Repeat([]byte{hashByte}, 20)
		return fakeAccounts{"n1": {NativeHash: hash}, "s1": {NativeHash: hash, CachingSHA2: true}}
	}
	a, b := newAuthenticator(accounts(1), Config{}), newAuthenticator(accounts(1), Config{})
	other := newAuthenticator(accounts(2), Config{})
	differOther := 0
	for i := range 200 {
		name := fmt.Sprintf("ghost%d", i)
		p := a.pluginFor(name, PluginCachingSHA2)
		if q := b.pluginFor(name, PluginCachingSHA2); p != q {
			t.Fatalf("%s: %s from one proxy, %s from another with the same accounts", name, p, q)
		}
		if p != other.pluginFor(name, PluginCachingSHA2) {
			differOther++
		}
	}
	if differOther == 0 { // 100 expected
		t.Error("accounts with the same names and other hashes drew the same plugin for all 200 unknown names")
	}
}

// TestTwoProxiesSameFirstReply: over the wire, two servers with the same
// accounts give every name, known or not, the same first reply after the
// handshake response (auth switch or AuthMoreData).
func TestTwoProxiesSameFirstReply(t *testing.T) {
	a := startServer(t, Config{HandshakePlugin: PluginCachingSHA2})
	b := startServer(t, Config{HandshakePlugin: PluginCachingSHA2})
	names := []string{testUser, testSHA2User}
	for i := range 20 {
		names = append(names, fmt.Sprintf("ghost%d", i))
	}
	for j, name := range names {
		ra := firstAuthReply(t, a.addr(), fmt.Sprintf("127.0.30.%d", j+1), name, PluginCachingSHA2)
		rb := firstAuthReply(t, b.addr(), fmt.Sprintf("127.0.31.%d", j+1), name, PluginCachingSHA2)
		if ra != rb {
			t.Errorf("%s: first reply 0x%02x from one proxy, 0x%02x from the other", name, ra, rb)
		}
	}
}
