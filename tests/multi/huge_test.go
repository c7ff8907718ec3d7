package multi

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/internal/jobtest"
)

// A message of hundreds of megabytes crosses processes at the default
// FailAfter: copying it (encoding, fragments, joining, decoding) must not
// keep the sending or the receiving node from its heartbeats for the 3 s
// after which a silent node is lost.

// hugeMsg has a codec generated for it (actor/codec), as most messages do.
type hugeMsg struct {
	From int
	Sent int64             // when the sender sent it, in Unix nanoseconds (for CHARM_HUGE_LOG)
	Sum  [sha256.Size]byte // of Data, computed by the sender
	Data []byte
}

// hugeMsgR is the same with a field that msgpack encodes by reflection
// (time.Time marshals itself), so the whole message goes through
// msgpack/v5 rather than a generated codec.
type hugeMsgR struct {
	At time.Time
	hugeMsg
}

type hugeSink struct {
	group.Branch[hugeSink]
	done chare.Callback
	// A receiver contributes the length of its message once it has both
	// the message and the callback (hugeGo), which come from different
	// PEs in either order.
	got, gotGo bool
	size       int
}

type hugeGo struct {
	Half, Size int  // PE p < Half sends Size bytes to p + Half
	Reflect    bool // as a hugeMsgR
	Done       chare.Callback
}

// Send sends one message of m.Size random bytes to this PE's peer in the
// other process, if this PE is a sender.
func (s *hugeSink) Send(m hugeGo) {
	s.done, s.gotGo = m.Done, true
	if s.PE() >= m.Half {
		s.contribute() // a receiver contributes when its message has come
		return
	}
	data := make([]byte, m.Size)
	r := rand.NewChaCha8([32]byte{byte(s.PE())})
	_, _ = r.Read(data)
	start := time.Now()
	msg := hugeMsg{From: s.PE(), Sent: start.UnixNano(), Sum: sum(data), Data: data}
	to := s.ThisProxy().At(s.PE() + m.Half)
	var err error
	if m.Reflect {
		err = chare.Send(s, to, (*hugeSink).TakeR, hugeMsgR{At: start, hugeMsg: msg})
	} else {
		err = chare.Send(s, to, (*hugeSink).Take, msg)
	}
	if err != nil {
		s.Abort(err)
		return
	}
	if os.Getenv("CHARM_HUGE_LOG") != "" {
		fmt.Fprintf(os.Stderr, "PE %d: Send of %d bytes returned after %v\n", s.PE(), m.Size, time.Since(start))
	}
	if err := s.Contribute(0, reducer.SumInt, m.Done); err != nil {
		s.Abort(err)
	}
}

// TakeR takes a hugeMsgR as Take takes a hugeMsg.
func (s *hugeSink) TakeR(m hugeMsgR) { s.Take(m.hugeMsg) }

// Take checks the message's length and content and reports it done.
func (s *hugeSink) Take(m hugeMsg) {
	if sum(m.Data) != m.Sum {
		s.Abort(fmt.Errorf("PE %d: the %d bytes from PE %d have the wrong content", s.PE(), len(m.Data), m.From))
		return
	}
	if os.Getenv("CHARM_HUGE_LOG") != "" {
		fmt.Fprintf(os.Stderr, "PE %d: %d bytes from PE %d arrived %v after they were sent, and checked\n", s.PE(), len(m.Data), m.From, time.Since(time.Unix(0, m.Sent)))
	}
	s.got, s.size = true, len(m.Data)
	s.contribute()
}

func (s *hugeSink) contribute() {
	if s.got && s.gotGo {
		if err := s.Contribute(s.size, reducer.SumInt, s.done); err != nil {
			s.Abort(err)
		}
	}
}

func init() { chare.Register[hugeSink]() }

// sum is the SHA-256 of b, hashed a megabyte at a time: one call over
// 200 MB would run in assembly for about a second without the scheduler
// being able to preempt it, stalling the node as the runtime's copies did.
func sum(b []byte) (s [sha256.Size]byte) {
	h := sha256.New()
	for len(b) > 0 {
		n := min(len(b), 1<<20)
		h.Write(b[:n])
		b = b[n:]
	}
	h.Sum(s[:0])
	return s
}

// hugeSize is the size of the message in TestHugeMessageAcrossProcesses:
// hugeDefault, or CHARM_HUGE_MB megabytes (to measure other sizes;
// CHARM_HUGE_FAILAFTER sets FailAfter, to measure a job that would fail).
func hugeSize(t *testing.T) int {
	if s := os.Getenv("CHARM_HUGE_MB"); s != "" {
		mb, err := strconv.Atoi(s)
		require.NoError(t, err)
		return mb * 1_000_000
	}
	return hugeDefault
}

// TestHugeMessageAcrossProcesses: two processes of two PEs each; each PE
// of node 0 sends one message of 200 MB to a PE of node 1, at the default
// FailAfter (under -race 50 MB, with 30 s: see huge_race_test.go). The
// receivers check every byte (a SHA-256 the sender computed).
func TestHugeMessageAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	hugeJob(t, false)
}

// The same with a message that msgpack/v5 encodes and decodes by
// reflection.
func TestHugeReflectedMessageAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	hugeJob(t, true)
}

func hugeJob(t *testing.T, reflect bool) {
	const pes = 4
	size := hugeSize(t)
	var got int
	start := time.Now()
	cfg := chare.Config{PEs: pes, Nodes: 2, Launch: jobtest.Launch(t), Timeout: 5 * time.Minute, FailAfter: hugeFailAfter}
	if s := os.Getenv("CHARM_HUGE_FAILAFTER"); s != "" { // to measure a run that would fail
		d, err := time.ParseDuration(s)
		require.NoError(t, err)
		cfg.FailAfter = d
	}
	code, err := chare.Run(cfg,
		func(m *sumMain, _ []string) {
			g, err := group.New[hugeSink](m)
			if err != nil {
				m.Abort(err)
				return
			}
			f := chare.NewFuture[int](m)
			if err := chare.Send(m, g, (*hugeSink).Send, hugeGo{Half: pes / 2, Size: size, Reflect: reflect, Done: f.Callback()}); err != nil {
				m.Abort(err)
				return
			}
			if got, err = f.Get(m); err != nil {
				m.Abort(err)
				return
			}
			m.Exit(0)
		})
	nodeErr(t, err)
	jobtest.ExitNode(code)
	t.Logf("%d messages of %d bytes across processes in %v", pes/2, size, time.Since(start))
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Equal(t, pes/2*size, got, "every receiver got its message")
}
