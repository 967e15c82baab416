//go:build !unix

package wire

import "net"

// watchHangup does not watch on systems without MSG_PEEK: a statement whose
// client hangs up runs to its end or its statement timeout.
func watchHangup(net.Conn, func()) (stop func()) { return func() {} }
