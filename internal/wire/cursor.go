package wire

import (
	"encoding/binary"
	"fmt"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// maxConnCursorBytes bounds the rows a connection's open cursors hold
// together; a result that would pass it is sent whole, without a cursor.
const maxConnCursorBytes = 16 << 20

// cursor is a read-only cursor (CURSOR_TYPE_READ_ONLY): the binary rows of
// an execution not yet fetched. The statement ran, and was charged, when
// it executed; COM_STMT_FETCH only sends what it answered.
type cursor struct {
	rows     []gomysql.RowData // binary protocol rows, the next to fetch first
	bytes    int               // of rows, counted in connection.cursorBytes
	warnings uint16            // the execution's warning count, repeated in each fetch's EOF
}

// answerWithCursor answers a COM_STMT_EXECUTE that asked for a read-only
// cursor and got a result set r, as MySQL and MariaDB do: the column count
// and definitions, then an EOF packet with SERVER_STATUS_CURSOR_EXISTS,
// and no row; the rows wait on p for COM_STMT_FETCH. If the rows would take
// the connection's open cursors past maxConnCursorBytes, r is sent whole
// instead, as to an execution without a cursor (clients read the missing
// SERVER_STATUS_CURSOR_EXISTS so, as MySQL does not open a cursor for
// every statement either). It returns false if a write failed.
func (c *connection) answerWithCursor(p *prepared, r *gomysql.Result) bool {
	cur := &cursor{rows: r.RowDatas, warnings: r.Warnings}
	for _, row := range cur.rows {
		cur.bytes += len(row)
	}
	if c.cursorBytes+cur.bytes > maxConnCursorBytes {
		return c.respond(r)
	}
	p.cursor = cur
	c.cursorBytes += cur.bytes
	if !c.writePayload(gomysql.PutLengthEncodedInt(uint64(len(r.Fields)))) {
		return false
	}
	for _, f := range r.Fields {
		if !c.writePayload(f.Dump()) {
			return false
		}
	}
	return c.writeEOF(cur.warnings, gomysql.SERVER_STATUS_CURSOR_EXISTS)
}

// fetchStmt answers COM_STMT_FETCH: statement id (4 bytes), then the most
// rows to send (4). It sends up to that many of the cursor's rows, then
// an EOF packet with SERVER_STATUS_CURSOR_EXISTS, or, when the rows ran
// out before the count did, with SERVER_STATUS_LAST_ROW_SEND, and the
// cursor is closed (a fetch of 0 rows, or of exactly the rows left,
// leaves it open, as in MariaDB). A statement without an open cursor is
// refused with 1421, as in MySQL. It returns false if a write failed.
func (c *connection) fetchStmt(body []byte) bool {
	if len(body) < 8 {
		return c.respond(errMalformedPacket)
	}
	st, err := c.stmt(body, "mysqld_stmt_fetch")
	if err != nil {
		return c.respond(err)
	}
	p := st.Context.(*prepared)
	cur := p.cursor
	if cur == nil {
		return c.respond(gomysql.NewError(gomysql.ER_STMT_HAS_NO_OPEN_CURSOR, fmt.Sprintf("The statement (%d) has no open cursor", st.ID)))
	}
	want := int64(binary.LittleEndian.Uint32(body[4:8]))
	n := int(min(want, int64(len(cur.rows))))
	for _, row := range cur.rows[:n] {
		if !c.writePayload(row) {
			return false
		}
		cur.bytes -= len(row)
		c.cursorBytes -= len(row)
	}
	cur.rows = cur.rows[n:]
	status := gomysql.SERVER_STATUS_CURSOR_EXISTS
	if int64(n) < want {
		status = gomysql.SERVER_STATUS_LAST_ROW_SEND
		c.closeCursor(p)
	}
	return c.writeEOF(cur.warnings, status)
}

// closeCursor discards p's open cursor, if any.
func (c *connection) closeCursor(p *prepared) {
	if p.cursor != nil {
		c.cursorBytes -= p.cursor.bytes
		p.cursor = nil
	}
}

// writeEOF writes an EOF packet with the connection's status plus extra.
func (c *connection) writeEOF(warnings, extra uint16) bool {
	status := serverStatus | extra
	return c.writePayload([]byte{gomysql.EOF_HEADER, byte(warnings), byte(warnings >> 8), byte(status), byte(status >> 8)})
}
