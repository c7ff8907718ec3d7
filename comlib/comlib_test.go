package comlib_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/comlib"
	"github.com/charmgo/charm/group"
)

// sink counts what reaches it, per sender, and checks each sender's order.
type sink struct {
	array.Element[sink, int]
	Next  map[int]int // sender → next sequence number expected
	Count int64
	Sum   int64
	Bad   int64 // out of order or wrong content
}

type num struct {
	From, Seq int
	Pad       []byte
	Urge      bool
}

func (n num) Size() int    { return 16 + len(n.Pad) }
func (n num) Urgent() bool { return n.Urge }

func (s *sink) Num(n num) {
	if s.Next == nil {
		s.Next = map[int]int{}
	}
	if s.Next[n.From] != n.Seq {
		s.Bad++
	}
	s.Next[n.From] = n.Seq + 1
	for i, b := range n.Pad {
		if b != byte(n.Seq+i) {
			s.Bad++
			break
		}
	}
	s.Count++
	s.Sum += int64(n.Seq)
}

func (s *sink) Totals(cb chare.Callback) {
	_ = s.Contribute([]int64{s.Count, s.Sum, s.Bad}, reducer.SumInt64, cb)
}

// talker sends numbered messages to random sinks through a proxy.
type talker struct {
	array.Element[talker, int]
}

type talk struct {
	To      array.Proxy[sink, int]
	Sinks   int
	N       int
	PadFrom int // messages from this sequence number on carry Pad bytes
	Pad     int
	Urgent  bool
}

func (t *talker) Talk(m talk) {
	r := rand.New(rand.NewSource(int64(t.ThisIndex())))
	seq := map[int]int{}
	for i := 0; i < m.N; i++ {
		to := r.Intn(m.Sinks)
		n := num{From: t.ThisIndex(), Seq: seq[to], Urge: m.Urgent && i%7 == 0}
		seq[to]++
		if m.Pad > 0 && i >= m.PadFrom {
			n.Pad = make([]byte, m.Pad)
			for k := range n.Pad {
				n.Pad[k] = byte(n.Seq + k)
			}
		}
		if err := chare.Send(t, m.To.At(to), (*sink).Num, n); err != nil {
			t.Abort(err)
			return
		}
	}
}

func init() {
	chare.Register[sink]()
	chare.Register[talker]()
	chare.Register[bcastBranch]()
}

// totals waits for quiescence and sums the sinks' counters.
func totals(m *tmain, sinks array.Proxy[sink, int]) ([]int64, error) {
	qd := chare.NewFuture[any](m)
	m.DetectQuiescence(qd.Callback())
	if _, err := qd.Get(m); err != nil {
		return nil, err
	}
	f := chare.NewFuture[[]int64](m)
	if err := chare.Send(m, sinks, (*sink).Totals, f.Callback()); err != nil {
		return nil, err
	}
	return f.Get(m)
}

type talkResult struct {
	totals []int64
	stats  comlib.StatsSnapshot
}

// talkJob: 8 talkers each send n messages to 16 sinks through the
// strategy; r gets the sinks' totals and the instance's statistics.
func talkJob(s comlib.Strategy, tk talk, r *talkResult) func(*tmain, []string) {
	return func(m *tmain, _ []string) {
		sinks, err := array.New[sink](m, array.Dims(16))
		if err != nil {
			m.Abort(err)
			return
		}
		talkers, err := array.New[talker](m, array.Dims(8))
		if err != nil {
			m.Abort(err)
			return
		}
		inst, err := comlib.New(m, s)
		if err != nil {
			m.Abort(err)
			return
		}
		tk.To, tk.Sinks = sinks.Delegate(inst), 16
		if err := chare.Send(m, talkers, (*talker).Talk, tk); err != nil {
			m.Abort(err)
			return
		}
		if r.totals, err = totals(m, sinks); err != nil {
			m.Abort(err)
			return
		}
		r.stats = inst.Stats()
		m.Exit(0)
	}
}

func wantTalk(n int) (count, sum int64) {
	for t := 0; t < 8; t++ {
		r := rand.New(rand.NewSource(int64(t)))
		seq := map[int]int{}
		for i := 0; i < n; i++ {
			to := r.Intn(16)
			sum += int64(seq[to])
			seq[to]++
			count++
		}
	}
	return
}

// TestC05_HeldUntilReadyInOrder: sends made through an instance right
// after New, before the table has gone out, wait and then arrive, each
// sender's in order (Direct keeps per-pair order).
func TestC05_HeldUntilReadyInOrder(t *testing.T) {
	const n = 300
	var r talkResult
	runJob(t, 4, 1, func(m *tmain, args []string) {
		// The sends start in the same entry as New: they must wait.
		sinks, err := array.New[sink](m, array.Dims(16))
		if err != nil {
			m.Abort(err)
			return
		}
		inst, err := comlib.New(m, comlib.Direct())
		if err != nil {
			m.Abort(err)
			return
		}
		to := sinks.Delegate(inst)
		for i := 0; i < n; i++ {
			if err := chare.Send(m, to.At(i%16), (*sink).Num, num{From: 99, Seq: i / 16}); err != nil {
				m.Abort(err)
				return
			}
		}
		r.stats = inst.Stats()
		if r.totals, err = totals(m, sinks); err != nil {
			m.Abort(err)
			return
		}
		m.Exit(0)
	})
	require.Equal(t, int64(n), r.totals[0])
	require.Zero(t, r.totals[2], "out of order")
	require.Equal(t, int64(n), r.stats.Held, "all of them waited for the table")
}

// TestC04_StrategiesCreatedLater: instances created one after another,
// while a table broadcast is under way and after, each go out in a table
// of their own and work.
func TestC04_StrategiesCreatedLater(t *testing.T) {
	var got [][]int64
	runJob(t, 4, 1, func(m *tmain, args []string) {
		sinks, _ := array.New[sink](m, array.Dims(16))
		talkers, _ := array.New[talker](m, array.Dims(8))
		var insts []*comlib.Instance
		for k := 0; k < 5; k++ {
			inst, err := comlib.New(m, comlib.Streaming(comlib.StreamOptions{MaxMsgs: 4 + k}))
			if err != nil {
				m.Abort(err)
				return
			}
			insts = append(insts, inst)
			if k == 2 { // later in the run: after the first tables are out
				qd := chare.NewFuture[any](m)
				m.DetectQuiescence(qd.Callback())
				_, _ = qd.Get(m)
			}
		}
		for k, inst := range insts {
			if k > 0 { // fresh sinks: each round numbers its messages from 0
				sinks, _ = array.New[sink](m, array.Dims(16))
			}
			_ = chare.Send(m, talkers, (*talker).Talk, talk{To: sinks.Delegate(inst), Sinks: 16, N: 50})
			tot, err := totals(m, sinks)
			if err != nil {
				m.Abort(err)
				return
			}
			got = append(got, tot)
		}
		m.Exit(0)
	})
	count, sum := wantTalk(50)
	require.Len(t, got, 5)
	for k, tot := range got {
		require.Equal(t, []int64{count, sum, 0}, tot, "through instance %d", k)
	}
}

// TestC02_CreatedOnPE0Only: New off PE 0 is an error naming the PE.
func TestC02_CreatedOnPE0Only(t *testing.T) {
	var err1 error
	runJob(t, 2, 1, func(m *tmain, args []string) {
		g, _ := group.New[bcastBranch](m)
		f := chare.NewFuture[string](m)
		_ = chare.Send(m, g.At(1), (*bcastBranch).TryNew, f.Callback())
		s, err := f.Get(m)
		if err != nil {
			m.Abort(err)
			return
		}
		err1 = fmt.Errorf("%s", s)
		m.Exit(0)
	})
	require.ErrorContains(t, err1, "strategies are created on PE 0, in the main chare (C02); this is PE 1")
}

// bcastBranch is a group branch that records what reaches it.
type bcastBranch struct {
	group.Branch[bcastBranch]
	Got []string
}

func (b *bcastBranch) TryNew(cb chare.Callback) {
	_, err := comlib.New(b, comlib.Direct())
	_ = cb.Send(b, fmt.Sprint(err))
}

func (b *bcastBranch) Hear(s string) { b.Got = append(b.Got, s) }

func (b *bcastBranch) Report(cb chare.Callback) {
	_ = b.Contribute(int64(len(b.Got)), reducer.SumInt64, cb)
}

// TestStreamingAggregates: Streaming and MeshStreaming carry every
// message once, in fewer packets; large messages and urgent ones go
// directly.
func TestStreamingAggregates(t *testing.T) {
	const n = 400
	count, sum := wantTalk(n)
	cases := []struct {
		name   string
		s      comlib.Strategy
		pes    int
		tk     talk
		direct bool
	}{
		{"streaming", comlib.Streaming(comlib.StreamOptions{MaxMsgs: 16}), 4, talk{N: n}, false},
		{"period only", comlib.Streaming(comlib.StreamOptions{MaxMsgs: 1 << 20, Period: time.Millisecond, NoIdleFlush: true}), 4, talk{N: n}, false},
		{"idle only", comlib.Streaming(comlib.StreamOptions{MaxMsgs: 1 << 20}), 4, talk{N: n}, false},
		{"mesh", comlib.MeshStreaming(comlib.StreamOptions{MaxMsgs: 16}), 9, talk{N: n}, false},
		{"large direct", comlib.Streaming(comlib.StreamOptions{MaxMsgs: 16, Large: 100}), 4, talk{N: n, PadFrom: n / 2, Pad: 200}, true},
		{"urgent direct", comlib.Streaming(comlib.StreamOptions{MaxMsgs: 16}), 4, talk{N: n, Urgent: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r talkResult
			runJob(t, c.pes, 1, talkJob(c.s, c.tk, &r))
			require.Equal(t, []int64{count, sum}, r.totals[:2])
			if c.name == "streaming" || c.name == "mesh" {
				require.Zero(t, r.totals[2], "per-pair order kept when every buffer goes the same way")
			}
			require.Less(t, r.stats.Packets, r.stats.Messages/4, "%v", r.stats)
			if c.direct {
				require.Positive(t, r.stats.Direct, "%v", r.stats)
			} else {
				require.Zero(t, r.stats.Direct, "%v", r.stats)
			}
		})
	}
}

// TestMulticastKinds: a section multicast, small and large (chunked),
// reaches every member once with its content, by every kind; a group
// broadcast through the strategy reaches every branch once.
func TestMulticastKinds(t *testing.T) {
	for _, kind := range []string{"direct", "ring", "multiring", "tree", "dim", "node"} {
		for _, chunk := range []int{0, 64} {
			t.Run(fmt.Sprintf("%s/chunk%d", kind, chunk), func(t *testing.T) { multicastCase(t, kind, chunk, 1) })
		}
	}
}

// TestMulticastAcrossProcesses: node-aware and chunked tree multicasts
// over two processes.
func TestMulticastAcrossProcesses(t *testing.T) {
	t.Run("node", func(t *testing.T) { multicastCase(t, "node", 0, 2) })
	t.Run("tree-chunked", func(t *testing.T) { multicastCase(t, "tree", 64, 2) })
}

// TestStreamingAcrossProcesses: buffers cross processes msgpack-encoded.
func TestStreamingAcrossProcesses(t *testing.T) {
	const n = 200
	count, sum := wantTalk(n)
	for name, s := range map[string]comlib.Strategy{
		"streaming": comlib.Streaming(comlib.StreamOptions{MaxMsgs: 16}),
		"mesh":      comlib.MeshStreaming(comlib.StreamOptions{MaxMsgs: 16}),
	} {
		t.Run(name, func(t *testing.T) { // one job per test: the launched node runs the test again
			var r talkResult
			runJob(t, 4, 2, talkJob(s, talk{N: n}, &r))
			require.Equal(t, []int64{count, sum, 0}, r.totals)
		})
	}
}

func multicastCase(t *testing.T, kind string, chunk, nodes int) {
	{
		{
			{
				var got []int64
				var bcast int64
				runJob(t, 6, nodes, func(m *tmain, args []string) {
					sinks, _ := array.New[sink](m, array.Dims(24))
					inst, err := comlib.New(m, comlib.Multicast(comlib.MulticastOptions{Kind: kind, Chunk: chunk}))
					if err != nil {
						m.Abort(err)
						return
					}
					var members []int
					for i := 0; i < 24; i += 2 {
						members = append(members, i)
					}
					sec, err := sinks.Delegate(inst).Section(m, members)
					if err != nil {
						m.Abort(err)
						return
					}
					for i := 0; i < 10; i++ {
						msg := num{From: 1, Seq: i}
						if i%2 == 1 {
							msg.Pad = make([]byte, 500)
							for k := range msg.Pad {
								msg.Pad[k] = byte(i + k)
							}
						}
						if err := chare.Send(m, sec, (*sink).Num, msg); err != nil {
							m.Abort(err)
							return
						}
					}
					if got, err = totals(m, sinks); err != nil {
						m.Abort(err)
						return
					}
					g, _ := group.New[bcastBranch](m)
					_ = chare.Send(m, g.Delegate(inst), (*bcastBranch).Hear, "hi")
					qd := chare.NewFuture[any](m)
					m.DetectQuiescence(qd.Callback())
					_, _ = qd.Get(m)
					f := chare.NewFuture[int64](m)
					_ = chare.Send(m, g, (*bcastBranch).Report, f.Callback())
					bcast, _ = f.Get(m)
					m.Exit(0)
				})
				require.Equal(t, []int64{12 * 10, 12 * 45, 0}, got, "count, sum of sequence numbers, bad")
				require.Equal(t, int64(6), bcast, "one copy per branch")
			}
		}
	}
}

// TestBadInput: unknown names, misuse and impossible options get errors
// that name them.
func TestBadInput(t *testing.T) {
	_, err := comlib.ParseStrategy("fastest")
	require.ErrorContains(t, err, `unknown strategy "fastest"`)
	require.ErrorContains(t, err, "meshstreaming")
	var errs []error
	runJob(t, 2, 1, func(m *tmain, args []string) {
		sinks, _ := array.New[sink](m, array.Dims(4))
		try := func(s comlib.Strategy) {
			_, err := comlib.New(m, s)
			errs = append(errs, err)
		}
		try(comlib.EachToMany(comlib.EachToManyOptions{Router: "torus", Sources: sinks}))
		try(comlib.EachToMany(comlib.EachToManyOptions{Router: "mesh"}))
		try(comlib.EachToMany(comlib.EachToManyOptions{Router: "group", Omega: -2, Sources: sinks}))
		try(comlib.EachToMany(comlib.EachToManyOptions{Router: "mesh", Omega: 3, Sources: sinks}))
		try(comlib.Multicast(comlib.MulticastOptions{Kind: "spiral"}))
		try(comlib.Multicast(comlib.MulticastOptions{Kind: "tree", Chunk: -1}))
		try(comlib.Multicast(comlib.MulticastOptions{Kind: "tree", Degree: 1}))
		try(comlib.Streaming(comlib.StreamOptions{MaxMsgs: -3}))
		try(nil)
		var zero comlib.Instance
		errs = append(errs, chare.Send(m, sinks.Delegate(&zero).At(0), (*sink).Num, num{}))
		// Brackets out of order, through a bracketed instance, from the
		// main chare (not one of its sources).
		inst, err := comlib.New(m, comlib.EachToMany(comlib.EachToManyOptions{Router: "direct", Sources: sinks}))
		if err != nil {
			m.Abort(err)
			return
		}
		qd := chare.NewFuture[any](m)
		m.DetectQuiescence(qd.Callback())
		_, _ = qd.Get(m)
		errs = append(errs, chare.EndIteration(m, sinks.Delegate(inst)))
		m.Exit(0)
	})
	want := []string{
		`unknown router "torus"`,
		"each-to-many needs Sources",
		"group option Omega=-2",
		`Omega=3 is the group router's fan-out; router "mesh" has none`,
		`spiral`,
		"chunk size -1",
		"tree degree 1",
		"positive caps",
		"needs a strategy",
		"an instance that comlib.New did not make",
		"which is not one of its sources",
	}
	require.Len(t, errs, len(want))
	for i, w := range want {
		require.ErrorContains(t, errs[i], w, "case %d", i)
	}
}
