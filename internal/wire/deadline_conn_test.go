package wire

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// pipeConn returns a deadlineConn over one end of a pipe, and the other end.
func pipeConn(t *testing.T, maxRead int64) (*deadlineConn, net.Conn) {
	t.Helper()
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	d := newDeadlineConn(server, Config{ReadTimeout: 50 * time.Millisecond, WriteTimeout: 50 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	d.maxRead = maxRead
	return d, client
}

func TestDeadlineConnTimeouts(t *testing.T) {
	d, _ := pipeConn(t, maxCommandBytes)
	buf := make([]byte, 1)

	// Waiting for a command: the idle timeout applies.
	d.awaitCommand(false)
	start := time.Now()
	if _, err := d.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if waited := time.Since(start); waited < d.idleTimeout {
		t.Errorf("idle read gave up after %v, want at least %v", waited, d.idleTimeout)
	}

	// Within a command: the read timeout applies.
	start = time.Now()
	if _, err := d.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if waited := time.Since(start); waited >= d.idleTimeout {
		t.Errorf("read within a command waited %v, want about %v", waited, d.readTimeout)
	}

	// Writes nobody reads time out too.
	if _, err := d.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("got %v from an unread write, want a deadline error", err)
	}
}

func TestDeadlineConnDrain(t *testing.T) {
	d, _ := pipeConn(t, maxCommandBytes)
	d.awaitCommand(false)
	read := make(chan error, 1)
	go func() {
		_, err := d.Read(make([]byte, 1))
		read <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the Read block
	d.drain()
	select {
	case err := <-read:
		if err == nil {
			t.Errorf("got a successful read after drain, want an error")
		}
	case <-time.After(d.idleTimeout / 2):
		t.Fatalf("drain did not interrupt a pending read")
	}
	if _, err := d.Read(make([]byte, 1)); !errors.Is(err, errDraining) {
		t.Errorf("got %v from a read after drain, want %v", err, errDraining)
	}
	if !d.isDraining() {
		t.Errorf("isDraining: got false after drain")
	}
}

func TestDeadlineConnCommandSize(t *testing.T) {
	d, client := pipeConn(t, 4)
	go client.Write([]byte("abcdefgh"))
	d.awaitCommand(false)
	buf := make([]byte, 4)
	if n, err := d.Read(buf); n != 4 || err != nil {
		t.Fatalf("got %d, %v, want 4 bytes", n, err)
	}
	if _, err := d.Read(buf); !errors.Is(err, errCommandTooLong) {
		t.Fatalf("got %v past the limit, want %v", err, errCommandTooLong)
	}
	d.awaitCommand(false) // the next command starts a new count
	if n, err := d.Read(buf); n != 4 || err != nil {
		t.Errorf("got %d, %v for the next command, want 4 bytes", n, err)
	}
}

// TestDeadlineConnWholeCommand: once a command has started, the rest of it
// must arrive within ReadTimeout, however the client spaces its bytes.
// Before, ReadTimeout applied to each Read, so one byte per timeout kept a
// stalled large packet, and its share of MaxBufferedBytes, forever (an
// independent review).
func TestDeadlineConnWholeCommand(t *testing.T) {
	d, client := pipeConn(t, maxCommandBytes)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(d.readTimeout / 3):
				if _, err := client.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	d.awaitCommand(false)
	start := time.Now()
	buf := make([]byte, 1)
	for {
		if _, err := d.Read(buf); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("got %v, want a deadline error", err)
			}
			break
		}
		if time.Since(start) > 10*d.readTimeout {
			t.Fatalf("a command trickled one byte per %v still read after %v", d.readTimeout/3, time.Since(start))
		}
	}
	if took := time.Since(start); took > d.idleTimeout+3*d.readTimeout {
		t.Errorf("the command was cut after %v, want within the idle wait plus %v", took, d.readTimeout)
	}
}

// TestDeadlineConnCommandStarted: a command whose first bytes were read
// ahead gets ReadTimeout from awaitCommand on, not IdleTimeout.
func TestDeadlineConnCommandStarted(t *testing.T) {
	d, _ := pipeConn(t, maxCommandBytes)
	d.awaitCommand(true)
	start := time.Now()
	if _, err := d.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if took := time.Since(start); took >= d.idleTimeout {
		t.Errorf("a started command waited %v, want about the read timeout %v", took, d.readTimeout)
	}
}

// TestDeadlineConnWholeAnswer: an answer must be written within the write
// timeout plus its bytes at minAnswerRate, however the client spaces its
// reads (each Write re-armed the write timeout, so a client reading a
// little every so often held its answer's memory indefinitely).
func TestDeadlineConnWholeAnswer(t *testing.T) {
	d, client := pipeConn(t, maxCommandBytes)
	d.minAnswerRate = 1000
	go func() {
		buf := make([]byte, 10)
		for {
			if _, err := client.Read(buf); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond) // 500 bytes/s, each read within the write timeout
		}
	}()
	d.awaitCommand(false)
	written := 0
	var err error
	for written < 1000 && err == nil {
		var n int
		n, err = d.Write(make([]byte, 10))
		written += n
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a client reading at half the minimum rate was written %d bytes, ending with %v; want a deadline error first", written, err)
	}
}
