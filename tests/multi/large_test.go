package multi

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/jobtest"
)

// Messages longer than a frame (wire.MaxFrame, 3 MiB) cross processes in
// fragments: they arrive whole, in order with the small messages around
// them, also when several PEs of one process send long messages to the
// same process at once (their fragments interleave on the connection).

// bigPlan is the sizes of the messages every sender sends, in order: a
// 10 MB message, then long ones (just over a frame, and more) between
// small ones.
var bigPlan = []int{10_000_000, 100, 4 << 20, 0, 3<<20 + 1, 1, 5<<20 + 3, 64}

// longSilence is how long these jobs let a node be silent before it is
// lost. A node's heartbeats queue behind the fragments it sends on the
// same connection, and under -race copying tens of megabytes (encoding,
// fragments, gRPC, joining, decoding) takes seconds: the default 3 s
// fails these jobs there though nothing is lost.
const longSilence = 30 * time.Second

type bigMsg struct {
	From, Seq int
	Data      []byte
}

// bigPattern is the content of message seq from PE from: different for
// every message, so a piece of one in another would show.
func bigPattern(from, seq, size int) []byte {
	b := make([]byte, size+7)
	x := uint64(from)<<32 | uint64(seq) | 1
	for i := 0; i < size; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	return b[:size:size]
}

type bigSink struct {
	group.Branch[bigSink]
	next int // the Seq expected next from the peer
	done chare.Callback
	went bool // Go has run here (and set done)
}

type bigGo struct {
	Half int // PEs of the first process: PE p's peer is p ± Half
	Done chare.Callback
}

// peer is the PE in the other process that this branch sends to and
// hears from.
func (s *bigSink) peer(half int) int {
	if s.PE() < half {
		return s.PE() + half
	}
	return s.PE() - half
}

// Go sends the plan to this branch's peer, all in one entry method, so
// that the long and small messages leave in one burst of frames.
func (s *bigSink) Go(m bigGo) {
	s.done, s.went = m.Done, true
	to := s.ThisProxy().At(s.peer(m.Half))
	for seq, size := range bigPlan {
		if err := chare.Send(s, to, (*bigSink).Take, bigMsg{From: s.PE(), Seq: seq, Data: bigPattern(s.PE(), seq, size)}); err != nil {
			s.Abort(err)
			return
		}
	}
	s.contribute()
}

// contribute contributes once the peer's plan has all arrived and Go has
// given the callback: the peer's messages may all arrive before this
// PE's Go (a contribution with no callback then mixed with the others').
func (s *bigSink) contribute() {
	if !s.went || s.next != len(bigPlan) {
		return
	}
	if err := s.Contribute(s.next, reducer.SumInt, s.done); err != nil {
		s.Abort(err)
	}
}

// Take checks that the messages come from the peer, in order, whole.
func (s *bigSink) Take(m bigMsg) {
	switch {
	case m.Seq != s.next:
		s.Abort(fmt.Errorf("PE %d: message %d from PE %d came when %d was due", s.PE(), m.Seq, m.From, s.next))
	case m.Seq >= len(bigPlan) || len(m.Data) != bigPlan[m.Seq]:
		s.Abort(fmt.Errorf("PE %d: message %d from PE %d has %d bytes", s.PE(), m.Seq, m.From, len(m.Data)))
	case !bytes.Equal(m.Data, bigPattern(m.From, m.Seq, len(m.Data))):
		s.Abort(fmt.Errorf("PE %d: message %d from PE %d (%d bytes) has the wrong content", s.PE(), m.Seq, m.From, len(m.Data)))
	default:
		s.next++
		s.contribute()
	}
}

func init() { chare.Register[bigSink]() }

// nodeErr prints, in a launched node, the error its job ended with: node
// 0 reports only that the node exited.
func nodeErr(t *testing.T, err error) {
	if err != nil && chare.IsLaunchedNode() {
		fmt.Fprintf(os.Stderr, "%s (node %s): %v\n", t.Name(), os.Getenv("CHARMGO_NODE"), err)
	}
}

// TestLargeMessagesAcrossProcesses: two PEs in each of two processes;
// each PE sends the plan (a 10 MB message, and messages over 3 MiB
// between small ones) to its peer in the other process, so both
// directions carry long messages and two senders' fragments interleave
// on each connection.
func TestLargeMessagesAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	const pes = 4
	var got int
	var rejected int64
	code, err := chare.Run(chare.Config{PEs: pes, Nodes: 2, Launch: jobtest.Launch(t), Timeout: 90 * time.Second, FailAfter: longSilence},
		func(m *sumMain, _ []string) {
			g, err := group.New[bigSink](m)
			if err != nil {
				m.Abort(err)
				return
			}
			f := chare.NewFuture[int](m)
			if err := chare.Send(m, g, (*bigSink).Go, bigGo{Half: pes / 2, Done: f.Callback()}); err != nil {
				m.Abort(err)
				return
			}
			if got, err = f.Get(m); err != nil {
				m.Abort(err)
				return
			}
			rejected = chare.PEOf(m).Job().Runtime().RejectedFrames()
			m.Exit(0)
		})
	nodeErr(t, err)
	jobtest.ExitNode(code)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, pes*len(bigPlan), got, "every PE received every message of its peer")
	require.Zero(t, rejected, "frames rejected by node 0")
}

type bigOne struct {
	group.Branch[bigOne]
}

// Send sends a 10 MB message to PE to, from PE from only.
func (b *bigOne) Send(m [2]int) {
	if b.PE() != m[0] {
		return
	}
	if err := chare.Send(b, b.ThisProxy().At(m[1]), (*bigOne).Take, bigMsg{From: b.PE(), Data: make([]byte, 10_000_000)}); err != nil {
		b.Abort(err)
	}
}

func (b *bigOne) Take(m bigMsg) {
	b.Abort(fmt.Errorf("PE %d: a message of %d bytes arrived over the limit", b.PE(), len(m.Data)))
}

func init() { chare.Register[bigOne]() }

// overLimit runs a job of two processes, one PE each, with limits on
// messages between them of limit0 in node 0 and limit1 in node 1, in which
// PE from sends PE to a 10 MB message; the job must fail.
func overLimit(t *testing.T, limit0, limit1, from, to int) error {
	cfg := chare.Config{PEs: 2, Nodes: 2, Launch: jobtest.Launch(t), Timeout: 60 * time.Second, FailAfter: longSilence, MaxRemoteMessage: limit0}
	if chare.IsLaunchedNode() {
		cfg.MaxRemoteMessage = limit1
	}
	code, err := chare.Run(cfg, func(m *sumMain, _ []string) {
		g, err := group.New[bigOne](m)
		if err != nil {
			m.Abort(err)
			return
		}
		if err := chare.Send(m, g, (*bigOne).Send, [2]int{from, to}); err != nil {
			m.Abort(err)
		}
	})
	nodeErr(t, err)
	jobtest.ExitNode(code)
	require.Equal(t, 1, code, "the job fails (%v)", err)
	return err
}

// A message over Config.MaxRemoteMessage ends the job with an error that
// names the size and the limit: its sender refuses it...
func TestMessageOverTheSendersLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	err := overLimit(t, 8<<20, 8<<20, 0, 1)
	require.ErrorContains(t, err, "for node 1 exceeds the 8388608-byte limit on what crosses processes (Config.MaxRemoteMessage): its longest item is a message")
	require.ErrorContains(t, err, "for PE 1")
}

// ... or, if the sender's limit is higher, its receiver, which names the
// sender.
func TestMessageOverTheReceiversLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	err := overLimit(t, 8<<20, 32<<20, 1, 0)
	require.ErrorContains(t, err, "actor: node 0: wire: node 1 sends frame 1 of")
	require.ErrorContains(t, err, "bytes in fragments, over the limit of 8388608 bytes")
}
