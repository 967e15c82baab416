package wire

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// The caching_sha2_password exchange (MySQL 8's default plugin), checked
// against the same stored SHA1(SHA1(password)) as mysql_native_password:
//
//  1. The client answers the nonce with XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)) || nonce)).
//     If an earlier full authentication of the user left SHA256(SHA256(pw))
//     in the fast-auth cache and the reply matches it, the server sends
//     AuthMoreData 0x03 ("fast auth OK") and the login succeeds.
//  2. Otherwise the server sends AuthMoreData 0x04 ("perform full
//     authentication") and the client sends the password itself: in clear
//     over TLS; without TLS encrypted with the server's RSA public key
//     (RSA-OAEP over XOR(pw || NUL, nonce)), after asking for the key with
//     0x02 unless it was configured with it. The server checks
//     SHA1(SHA1(pw)) against the stored hash and, on success, caches
//     SHA256(SHA256(pw)) for step 1.
//
// So the configuration keeps storing the mysql_native_password hash; the
// plaintext password exists only in memory during one login, and only on a
// channel the client encrypted (TLS or RSA).

// AuthMoreData payloads of the caching_sha2_password exchange.
const (
	sha2RequestPublicKey = 0x02 // client → server: send me your RSA key
)

// cachingSHA2 runs steps 1 and 2 above for account (a decoy when !known).
func (a *authenticator) cachingSHA2(c *server.Conn, account Account, known bool, salt, reply []byte) error {
	user := c.GetUser()
	if known {
		if cached, ok := a.fastAuth.Load(user); ok && checkSHA2Scramble(reply, salt, cached.([]byte)) {
			return writeAuthMoreData(c, gomysql.CACHE_SHA2_FAST_AUTH)
		}
	}
	if err := writeAuthMoreData(c, gomysql.CACHE_SHA2_FULL_AUTH); err != nil {
		return err
	}
	password, decoded, err := a.readFullAuthPassword(c, salt)
	if err != nil {
		return err
	}
	defer clear(password)
	if !checkNativePassword(password, account.NativeHash) || !known || !decoded {
		return accessDenied(c, true)
	}
	stage1 := sha256.Sum256(password)
	stage2 := sha256.Sum256(stage1[:])
	a.fastAuth.Store(user, stage2[:])
	return nil
}

// readFullAuthPassword reads the password of step 2. decoded is false for
// a reply it cannot decrypt: password is then random bytes, so that the
// caller does the same work and sends the same 1045 as for a wrong password.
// An error means the connection failed.
func (a *authenticator) readFullAuthPassword(c *server.Conn, salt []byte) (password []byte, decoded bool, err error) {
	data, err := c.ReadPacket()
	if err != nil {
		return nil, false, err
	}
	if isTLS(c) {
		return bytes.TrimSuffix(bytes.Clone(data), []byte{0}), true, nil
	}
	if len(data) == 1 && data[0] == sha2RequestPublicKey && a.rsaKey != nil {
		if err := c.WritePacket(append([]byte{0, 0, 0, 0, gomysql.MORE_DATE_HEADER}, a.rsaPublic...)); err != nil {
			return nil, false, err
		}
		if data, err = c.ReadPacket(); err != nil {
			return nil, false, err
		}
	}
	plain, ok := a.decryptPassword(data)
	if !ok {
		plain = make([]byte, 16)
		_, _ = rand.Read(plain)
		return plain, false, nil
	}
	for i := range plain {
		plain[i] ^= salt[i%len(salt)]
	}
	return bytes.TrimSuffix(plain, []byte{0}), true, nil
}

// decryptPassword decrypts an RSA-encrypted caching_sha2 password, padded
// with OAEP (SHA-1) as MySQL specifies (go-sql-driver, PyMySQL, mysql2,
// Connector/J and the mariadb CLI all do).
func (a *authenticator) decryptPassword(data []byte) ([]byte, bool) {
	if a.rsaKey == nil {
		return nil, false
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, a.rsaKey, data, nil)
	return plain, err == nil
}

// writeAuthMoreData sends an AuthMoreData packet with one status byte.
func writeAuthMoreData(c *server.Conn, status byte) error {
	return c.WritePacket([]byte{0, 0, 0, 0, gomysql.MORE_DATE_HEADER, status})
}

// checkSHA2Scramble reports whether reply is the caching_sha2_password
// scramble of nonce for the password whose SHA256(SHA256(pw)) is cached:
// XORing reply with SHA256(cached || nonce) must give an x with
// SHA256(x) = cached. The final comparison is constant-time.
func checkSHA2Scramble(reply, nonce, cached []byte) bool {
	if len(reply) != sha256.Size || len(cached) != sha256.Size {
		return false
	}
	h := sha256.New()
	h.Write(cached)
	h.Write(nonce)
	mask := h.Sum(nil)
	for i := range mask {
		mask[i] ^= reply[i]
	}
	candidate := sha256.Sum256(mask)
	return subtle.ConstantTimeCompare(candidate[:], cached) == 1
}

// checkNativePassword reports whether SHA1(SHA1(password)) is stage2, in
// constant time.
func checkNativePassword(password, stage2 []byte) bool {
	stage1 := sha1.Sum(password)
	candidate := sha1.Sum(stage1[:])
	return subtle.ConstantTimeCompare(candidate[:], stage2) == 1
}

// rsaPublicPEM is key's public half as a PEM "PUBLIC KEY" block, the form
// clients expect in AuthMoreData; nil for a nil key.
func rsaPublicPEM(key *rsa.PrivateKey) []byte {
	if key == nil {
		return nil
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil // an *rsa.PublicKey always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
