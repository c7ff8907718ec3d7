package actor

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/actor/internal/procid"
	"github.com/charmgo/charm/actor/wire"
)

// Tests of the same-host data path (sock.go). The two nodes of startTwo
// run in this process, so they are on one host: their data frames take
// the sockets unless told otherwise.

func TestSameHostSocketCarriesTheMessages(t *testing.T) {
	if hostID() == "" {
		t.Skip("no same-host path on this system (no /proc)")
	}
	hopsSeen.Store(0)
	const hops = 500
	two := startTwo(t, 4, NewToken(), nil, func(pe *PE) { pe.Send(1, hop{Left: hops}) })
	s0, s1 := two.rt0.node.sock, two.rt1.node.sock
	require.NotNil(t, s0, "node 0 has a socket")
	require.NotNil(t, s1, "node 1 has a socket")
	st, err := os.Stat(s0.dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "the socket's directory is private")
	require.NotNil(t, s0.out[1], "node 0 writes to node 1's socket")
	require.NotNil(t, s1.out[0], "node 1 writes to node 0's socket")
	codes, errs := two.wait(t)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, codes[0], codes[1])
	require.EqualValues(t, hops+1, hopsSeen.Load())
	// The hop goes 1, 2, 3, 0, 1...: it crosses from node 0 (PEs 0, 1) to
	// node 1 once every four hops, and back once: a data frame each time.
	require.GreaterOrEqual(t, s0.written.Load(), int64(hops/4))
	require.GreaterOrEqual(t, s1.written.Load(), int64(hops/4))
	_, err = os.Stat(s0.dir)
	require.True(t, os.IsNotExist(err), "the directory is removed at the end: %v", err)
}

func TestNoLocalSocketKeepsProtoactor(t *testing.T) {
	for _, how := range []string{"config", "env"} {
		t.Run(how, func(t *testing.T) {
			hopsSeen.Store(0)
			var adjust []func(*NodeConfig)
			if how == "env" {
				t.Setenv(EnvLocalSocket, "off")
			} else {
				adjust = append(adjust, func(nc *NodeConfig) { nc.NoLocalSocket = true })
			}
			two := startTwoConfig(t, Config{PEs: 4}, NewToken(), nil, func(pe *PE) { pe.Send(1, hop{Left: 200}) }, adjust...)
			require.Nil(t, two.rt0.node.sock)
			require.Nil(t, two.rt1.node.sock)
			_, errs := two.wait(t)
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.EqualValues(t, 201, hopsSeen.Load())
		})
	}
	require.False(t, useLocalSocket(NodeConfig{Nodes: 2, TLS: &TLSFiles{}}), "TLS jobs stay on gRPC")
	require.False(t, useLocalSocket(NodeConfig{Nodes: 1}))
	require.True(t, useLocalSocket(NodeConfig{Nodes: 2}))
}

// dialAs connects to node's socket and presents a hello with token as
// node from.
func dialAs(t *testing.T, path, token string, from int) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	writeStream(t, c, &wire.Frame{Kind: wire.KindHello, Token: token, From: from})
	return c
}

func writeStream(t *testing.T, c net.Conn, f *wire.Frame) {
	t.Helper()
	b, err := wire.AppendStreamFrame(nil, f)
	require.NoError(t, err)
	_, err = c.Write(b)
	require.NoError(t, err)
}

// waitClosed fails unless the other end closes c within the deadline.
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := c.Read(make([]byte, 1))
	require.Error(t, err)
	var ne net.Error
	if errors.As(err, &ne) {
		require.False(t, ne.Timeout(), "the node did not close the connection within 10 s")
	}
}

func TestSameHostSocketRefusesStrangers(t *testing.T) {
	if hostID() == "" {
		t.Skip("no same-host path on this system (no /proc)")
	}
	token := NewToken()
	gate := make(chan struct{})
	two := startTwo(t, 2, token, nil, func(pe *PE) {
		go func() {
			<-gate
			pe.Runtime().PE(0).PostControl(funcMsg(func(pe *PE) { pe.Runtime().Exit(0) }))
		}()
	})
	ns0 := two.rt0.node
	require.NotNil(t, ns0.sock)
	before := ns0.Rejected.Load()
	for _, tc := range []struct {
		name string
		send func(c net.Conn)
	}{
		{"wrong token", func(c net.Conn) {
			writeStream(t, c, &wire.Frame{Kind: wire.KindHello, Token: "not the job's", From: 1})
		}},
		{"not a hello", func(c net.Conn) { writeStream(t, c, &wire.Frame{Kind: wire.KindData, Token: token, From: 1}) }},
		{"itself", func(c net.Conn) { writeStream(t, c, &wire.Frame{Kind: wire.KindHello, Token: token, From: 0}) }},
		{"garbage", func(c net.Conn) { _, _ = c.Write([]byte("GET / HTTP/1.1\r\n\r\n")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("unix", ns0.sock.path, 5*time.Second)
			require.NoError(t, err)
			defer c.Close()
			tc.send(c)
			waitClosed(t, c)
		})
	}
	require.Equal(t, before+4, ns0.Rejected.Load())
	require.False(t, two.rt0.Stopped(), "a refused connection must not stop the job")
	close(gate)
	_, errs := two.wait(t)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
}

// TestSameHostSocketCorruptStreamAbortsTheJob: once a node is
// authenticated, a frame from it that does not decode, a length over the
// limit, or frames under another node's number end the job with an error
// naming the node and what was wrong; nothing panics.
func TestSameHostSocketCorruptStreamAbortsTheJob(t *testing.T) {
	if hostID() == "" {
		t.Skip("no same-host path on this system (no /proc)")
	}
	big := wire.StreamHeaderOf(wire.MaxFrame + 1)
	for _, tc := range []struct {
		name string
		send func(t *testing.T, c net.Conn, token string)
		want string
	}{
		{"undecodable frame", func(t *testing.T, c net.Conn, _ string) {
			_, err := c.Write([]byte{5, 0, 0, 0, 0x93, 0x01, 0xc1, 0xc1, 0xc1})
			require.NoError(t, err)
		}, "reading its same-host socket: wire: "},
		{"length over the limit", func(t *testing.T, c net.Conn, _ string) {
			_, err := c.Write(append(big[:], 1, 2, 3))
			require.NoError(t, err)
		}, "over the limit"},
		{"another node's frame", func(t *testing.T, c net.Conn, token string) {
			writeStream(t, c, &wire.Frame{Kind: wire.KindBeat, Token: token, From: 0})
		}, "on node 1's connection"},
		{"closed without a word", func(t *testing.T, c net.Conn, _ string) { require.NoError(t, c.Close()) }, "its same-host socket closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := NewToken()
			two := startTwo(t, 2, token, nil, func(pe *PE) {})
			require.NotNil(t, two.rt0.node.sock)
			c := dialAs(t, two.rt0.node.sock.path, token, 1)
			tc.send(t, c, token)
			select {
			case <-two.rt0.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("node 0 did not end the job within 10 s")
			}
			codes, errs := two.wait(t)
			require.Equal(t, 1, codes[0])
			require.ErrorContains(t, errs[0], "lost node 1 (PEs 1..1")
			require.ErrorContains(t, errs[0], tc.want)
		})
	}
}

// TestSameHostSocketDirectory: the socket lives in a directory only its
// user can enter, named for the node.
func TestSameHostSocketDirectory(t *testing.T) {
	if hostID() == "" {
		t.Skip("no same-host path on this system (no /proc)")
	}
	two := startTwo(t, 2, NewToken(), nil, func(pe *PE) { pe.Runtime().Exit(0) })
	for i, rt := range []*Runtime{two.rt0, two.rt1} {
		s := rt.node.sock
		require.NotNil(t, s)
		require.Equal(t, filepath.Join(s.dir, "node"+string(rune('0'+i))), s.path)
	}
	_, errs := two.wait(t)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
}

// TestSameHostSocketCloseWithoutGoodbyeWaitsForTheEnd: a node's socket
// closing without its goodbye frame is no loss by itself (the node may
// have ended because the job ended, which reaches this node over gRPC in
// no order with the close); the node is lost only if the job has not
// ended FailAfter later. The timer is a fake fired by the test.
func TestSameHostSocketCloseWithoutGoodbyeWaitsForTheEnd(t *testing.T) {
	if hostID() == "" {
		t.Skip("no same-host path on this system (no /proc)")
	}
	for _, endFirst := range []bool{true, false} {
		name := map[bool]string{true: "the job ends within FailAfter", false: "it does not"}[endFirst]
		t.Run(name, func(t *testing.T) {
			token := NewToken()
			gate := make(chan struct{})
			two := startTwo(t, 2, token, nil, func(pe *PE) {
				go func() {
					<-gate
					pe.Runtime().PE(0).PostControl(funcMsg(func(pe *PE) { pe.Runtime().Exit(0) }))
				}()
			})
			s := two.rt0.node.sock
			require.NotNil(t, s)
			type timer struct {
				d time.Duration
				f func()
			}
			timers := make(chan timer, 4)
			s.mu.Lock()
			s.after = func(d time.Duration, f func()) { timers <- timer{d, f} }
			s.mu.Unlock()

			c := dialAs(t, s.path, token, 1)
			require.NoError(t, c.Close())
			var tm timer
			select {
			case tm = <-timers:
			case <-time.After(10 * time.Second):
				t.Fatal("no timer set within 10 s after the socket closed without a goodbye")
			}
			require.Equal(t, two.rt0.node.cfg.FailAfter, tm.d)
			require.False(t, two.rt0.Stopped(), "the close alone ended the job")

			if endFirst {
				close(gate)
				select {
				case <-two.rt0.Done():
				case <-time.After(10 * time.Second):
					t.Fatal("node 0 did not end the job within 10 s")
				}
				tm.f()
				codes, errs := two.wait(t)
				require.NoError(t, errs[0])
				require.NoError(t, errs[1])
				require.Equal(t, [2]int{0, 0}, codes)
				return
			}
			tm.f()
			select {
			case <-two.rt0.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("node 0 did not end the job within 10 s of the timer")
			}
			close(gate)
			codes, errs := two.wait(t)
			require.Equal(t, 1, codes[0])
			require.ErrorContains(t, errs[0], "lost node 1 (PEs 1..1")
			require.ErrorContains(t, errs[0], "its same-host socket closed without a goodbye, and the job did not end within 3s")
		})
	}
}

// TestSameHostSocketSweepsStaleDirectories: a node starting removes the
// socket directories of processes that are gone (killed before they could
// remove their own), and nothing else: not a directory of a process that
// runs, not another name, not a file or a symbolic link.
func TestSameHostSocketSweepsStaleDirectories(t *testing.T) {
	if hostID() == "" {
		t.Skip("no same-host path on this system (no /proc)")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	me := strconv.Itoa(os.Getpid())
	start := procid.StartTime(os.Getpid())
	require.NotEmpty(t, start)
	require.NotEqual(t, procid.Gone, start)
	const noPid = "4194305" // above the largest pid Linux gives
	mkdir := func(name string) string {
		p := filepath.Join(tmp, name)
		require.NoError(t, os.Mkdir(p, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(p, "node0"), nil, 0o600))
		return p
	}
	stale := []string{
		mkdir("charmgo-sock-" + noPid + "-123-abc"), // its process is gone
		mkdir("charmgo-sock-" + me + "-1-def"),      // its pid is another process now
		mkdir("charmgo-sock-" + noPid + "--ghi"),    // written where there was no start time
	}
	kept := []string{
		mkdir("charmgo-sock-" + me + "-" + start + "-jkl"), // a node of this process
		mkdir("charmgo-" + strconv.Itoa(os.Geteuid())),     // the job secrets' directory
		mkdir("charmgo-123456"),                            // another name
		mkdir("charmgo-sock-x-1-mno"),
		mkdir("charmgo-sock-" + noPid + "-1"),
	}
	file := filepath.Join(tmp, "charmgo-sock-"+noPid+"-1-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	target := mkdir("elsewhere")
	link := filepath.Join(tmp, "charmgo-sock-"+noPid+"-1-link")
	require.NoError(t, os.Symlink(target, link))
	kept = append(kept, file, link, filepath.Join(target, "node0"))

	two := startTwo(t, 2, NewToken(), nil, func(pe *PE) { pe.Runtime().Exit(0) })
	for _, p := range stale {
		_, err := os.Lstat(p)
		require.True(t, os.IsNotExist(err), "%s left behind: %v", p, err)
	}
	for _, p := range kept {
		_, err := os.Lstat(p)
		require.NoError(t, err, "%s removed", p)
	}
	s := two.rt0.node.sock
	require.NotNil(t, s)
	require.Equal(t, tmp, filepath.Dir(s.dir))
	pid, st, ok := parseSockDir(filepath.Base(s.dir))
	require.True(t, ok, "the node's own directory %s is named for its process", s.dir)
	require.Equal(t, me, pid)
	require.Equal(t, start, st)
	_, errs := two.wait(t)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
}
