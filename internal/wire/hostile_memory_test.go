package wire

import (
	"runtime"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// A connection that prepares statements made only of ? markers holds no
// more than maxPreparedBytes for them: the markers' offsets and types count,
// not only the text (256 statements of 65535 markers grew the heap by
// 152 MiB under a 16 MiB text limit).
func TestPreparedMarkersCountAgainstPreparedBytes(t *testing.T) {
	ts := startServer(t, Config{MaxAllowedPacket: 4 << 20})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	text := strings.Repeat("?", 65535) // the most markers one statement may have
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for ; n < maxPreparedStatements; n++ {
		conn.ResetSequence()
		if err := conn.WritePacket(append(append(make([]byte, 4), gomysql.COM_STMT_PREPARE), text...)); err != nil {
			t.Fatal(err)
		}
		p, err := conn.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		if p[0] == gomysql.ERR_HEADER {
			if code := uint16(p[1]) | uint16(p[2])<<8; code != gomysql.ER_NET_PACKET_TOO_LARGE {
				t.Fatalf("prepare %d refused with %d, want 1153", n, code)
			}
			break
		}
		for i := 0; i < 65535+1; i++ { // the parameter definitions and their EOF
			if _, err := conn.ReadPacket(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := maxPreparedBytes / preparedCost(text, 65535); n != want {
		t.Errorf("%d statements of 65535 markers prepared, want %d", n, want)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 2*maxPreparedBytes {
		t.Errorf("one connection holds %d MiB after preparing %d statements (limit %d MiB)", grown>>20, n, maxPreparedBytes>>20)
	}
	// The connection is still usable, and closing a statement gives its share back.
	conn.ResetSequence()
	if err := conn.WritePacket([]byte{0, 0, 0, 0, gomysql.COM_STMT_CLOSE, 1, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prepare("SELECT ?" + strings.Repeat(",?", 60000)); err != nil {
		t.Errorf("prepare after closing one statement: %v", err)
	}
}

// A statement whose result has more than maxPreparedColumns columns is
// not prepared (1117), before anything is kept: a reviewer's 255 KiB
// SELECT 1,1,... announced 131,000 definitions (in a column count of 2
// bytes), and one of 4096 columns is prepared.
func TestPreparedColumnsLimit(t *testing.T) {
	ts := startServer(t, Config{MaxAllowedPacket: 4 << 20})
	conn, err := client.Connect(ts.addr(), testUser, testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Prepare("WIDE 4097")
	if me, ok := err.(*gomysql.MyError); !ok || me.Code != gomysql.ER_TOO_MANY_FIELDS || me.State != "42000" {
		t.Fatalf("prepare of 4097 columns: %v, want 1117 (42000)", err)
	}
	st, err := conn.Prepare("WIDE 4096")
	if err != nil {
		t.Fatal(err)
	}
	if st.ColumnNum() != 4096 || st.ID != 1 {
		t.Errorf("prepare of 4096 columns: %d columns, id %d, want 4096 and 1 (the refused one kept nothing)", st.ColumnNum(), st.ID)
	}
}
