package wire

import (
	"bytes"
	"reflect"

	"github.com/go-mysql-org/go-mysql/server"
)

// handshakeSalt returns the 20-byte nonce go-mysql sent the client in the
// initial handshake or in its last auth-switch request.
//
// go-mysql v1.16.0 checks mysql_native_password only against plaintext
// passwords and keeps the nonce in the unexported field Conn.salt, so a
// provider that holds SHA1(SHA1(password)) must read it there. Reading an
// unexported slice through reflect is allowed (only Interface and Set are
// not). If a go-mysql upgrade renames or retypes the field, ok is false and
// every login fails closed; TestAuth catches that.
func handshakeSalt(c *server.Conn) (salt []byte, ok bool) {
	f := reflect.ValueOf(c).Elem().FieldByName("salt")
	if !f.IsValid() || f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.Uint8 {
		return nil, false
	}
	salt = f.Bytes()
	if len(salt) != 20 {
		return nil, false
	}
	return bytes.Clone(salt), true
}
