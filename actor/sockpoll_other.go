//go:build !unix

package actor

import (
	"io"
	"net"
	"sync/atomic"
)

// newPollReader returns c: a reader polls its socket on Unix systems only
// (sockpoll_unix.go).
func newPollReader(c net.Conn, _ *atomic.Bool, _ *atomic.Int32, _ bool) (io.Reader, error) {
	return c, nil
}
