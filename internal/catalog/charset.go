package catalog

import (
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
)

// Charset is the character set a backend stores a text column in, which
// decides which text constants the column can be compared with: MySQL and
// MariaDB refuse to compare a column with a constant it cannot represent
// (error 1267, Illegal mix of collations), and PostgreSQL refuses to bind
// a text argument its database encoding cannot represent. Both fail only
// when the fetch runs, after the reservation, so such a constant is
// refused before (Representable).
type Charset struct {
	// Name is the MySQL character set (information_schema.COLUMNS'
	// CHARACTER_SET_NAME, "binary" for a binary string column), or, on
	// PostgreSQL, PostgresEncodingPrefix and the database's encoding as
	// PostgreSQL names it ("postgresql:LATIN1").
	Name string
	// Collation is the MySQL column's collation, for error messages; ""
	// on PostgreSQL.
	Collation string
}

// PostgresEncodingPrefix marks a Charset name that is a PostgreSQL
// database encoding, whose names differ from MySQL's (PostgreSQL's LATIN1
// is ISO 8859-1, MySQL's latin1 is Windows-1252).
const PostgresEncodingPrefix = "postgresql:"

// runeSet reports whether a character set holds r.
type runeSet func(r rune) bool

// Character sets the proxy checks exactly. Every code point of a valid
// UTF-8 string (ValidText) is one of Unicode's scalar values.
var (
	allRunes   = func(rune) bool { return true }
	bmpRunes   = func(r rune) bool { return r <= 0xFFFF }
	asciiRunes = func(r rune) bool { return r < 0x80 }
)

// fromCharmap is the repertoire of a single-byte encoding.
func fromCharmap(c *charmap.Charmap) runeSet {
	return func(r rune) bool {
		_, ok := c.EncodeRune(r)
		return ok
	}
}

// fromEncoding is the repertoire of a multi-byte encoding, whose encoder
// fails on a character it cannot represent.
func fromEncoding(e encoding.Encoding) runeSet {
	return func(r rune) bool {
		_, err := e.NewEncoder().String(string(r))
		return err == nil
	}
}

// mysqlCharsets are the repertoires of MySQL's and MariaDB's character
// sets, keyed by CHARACTER_SET_NAME. latin1 is Windows-1252 plus the C1
// controls of its five unassigned bytes. The others from golang.org/x/text
// are those whose tables, compared code point by code point with
// MariaDB 10.11's conversions (up to U+2FFFF), hold no character MariaDB
// cannot convert: they may refuse a few characters the backend has (cp932
// private use area, latin2's C1 controls), never accept one it
// lacks. A character set missing here (greek, hebrew, cp1256, sjis, big5,
// gbk, ..., whose x/text tables hold characters MariaDB's lack) is
// checked as ASCII (Representable).
var mysqlCharsets = map[string]runeSet{
	"binary": allRunes, "utf8mb4": allRunes, "utf16": allRunes, "utf16le": allRunes, "utf32": allRunes,
	"utf8mb3": bmpRunes, "utf8": bmpRunes, "ucs2": bmpRunes,
	"ascii": asciiRunes,
	"latin1": func(r rune) bool {
		_, ok := charmap.Windows1252.EncodeRune(r)
		return ok || r == 0x81 || r == 0x8D || r == 0x8F || r == 0x90 || r == 0x9D
	},
	"latin2": fromCharmap(charmap.ISO8859_2), "latin5": fromCharmap(charmap.ISO8859_9), "latin7": fromCharmap(charmap.ISO8859_13),
	"cp1250": fromCharmap(charmap.Windows1250), "cp1251": fromCharmap(charmap.Windows1251), "cp1257": fromCharmap(charmap.Windows1257),
	"cp850": fromCharmap(charmap.CodePage850), "cp852": fromCharmap(charmap.CodePage852),
	"koi8r": fromCharmap(charmap.KOI8R), "macroman": fromCharmap(charmap.Macintosh),
	"euckr": fromEncoding(korean.EUCKR), "cp932": fromEncoding(japanese.ShiftJIS),
}

// postgresEncodings are the repertoires of PostgreSQL's server encodings.
// SQL_ASCII stores the bytes it is given without conversion, so every
// constant binds. An encoding missing here is checked as ASCII.
var postgresEncodings = map[string]runeSet{
	"UTF8": allRunes, "SQL_ASCII": allRunes,
	"LATIN1": func(r rune) bool { return r <= 0xFF }, // ISO 8859-1: Unicode's first 256
}

// Representable reports whether every character of s, valid UTF-8
// (ValidText), is in the character set cs: whether a backend column in cs
// can be compared with the constant s. A character set the proxy does not
// know is taken to hold ASCII only, so that a constant it might not
// represent is refused rather than charged for a failure.
func Representable(cs Charset, s string) bool {
	var in runeSet
	if enc, ok := strings.CutPrefix(cs.Name, PostgresEncodingPrefix); ok {
		in = postgresEncodings[strings.ToUpper(enc)]
	} else {
		in = mysqlCharsets[strings.ToLower(cs.Name)]
	}
	if in == nil {
		in = asciiRunes
	}
	for _, r := range s {
		if !in(r) {
			return false
		}
	}
	return true
}

// Charsets are the character sets of the configured text columns, read
// from the backend (cmd/dpproxy reads them at start). It is the one place
// statements look them up, so that a column found changed can be read
// again with Set. The zero value holds none; a column without an entry
// (SQLite, a table created later) is not checked. Safe for concurrent use.
type Charsets struct {
	mu     sync.RWMutex
	column map[[2]string]Charset
}

// charsetKey keys a column by its table's and its own configured names,
// case-insensitively as the catalog resolves them.
func charsetKey(table, column string) [2]string {
	return [2]string{strings.ToLower(table), strings.ToLower(column)}
}

// Set records the character set of the configured column of table.
func (c *Charsets) Set(table, column string, cs Charset) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.column == nil {
		c.column = map[[2]string]Charset{}
	}
	c.column[charsetKey(table, column)] = cs
}

// Of returns the character set of the configured column of table; ok is
// false when none was recorded (or c is nil).
func (c *Charsets) Of(table, column string) (cs Charset, ok bool) {
	if c == nil {
		return Charset{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	cs, ok = c.column[charsetKey(table, column)]
	return cs, ok
}

// ErrConvText is text s as MariaDB writes it into a message's '%-.128T'
// (1292's value, Truncated incorrect CHAR(n) value): whole when it is at
// most 128 bytes, else its longest prefix of whole characters of at most
// 125 bytes followed by "..." (CAST(REPEAT('é', 200) AS CHAR(3)) shows 62
// of them). The planner's post-processing and the catalog engine both
// write it.
func ErrConvText(s string) string {
	const most = 128
	if len(s) <= most {
		return s
	}
	end := 0
	for end < len(s) {
		_, size := utf8.DecodeRuneInString(s[end:])
		if end+size > most-3 {
			break
		}
		end += size
	}
	return s[:end] + "..."
}
