package tram_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/tram"
)

// feeder is a chare with a long, threaded insertion loop.
type feeder struct {
	chare.Chare[feeder]
}

type loopMsg struct {
	S     tram.Streamer[table, uint64]
	G     group.Proxy[table]
	Items int
	Done  chare.Future[int]
}

// Loop pings the table on its own PE, then inserts; it reports the
// iteration at which the ping had been processed (Items if never).
func (f *feeder) Loop(m loopMsg) {
	_ = chare.Send0(f, m.G.At(f.PE()), (*table).Ping)
	seen := m.Items
	for i := 0; i < m.Items; i++ {
		if err := m.S.Insert(f, 1, f.PE()); err != nil {
			f.Abort(err)
			return
		}
		if seen == m.Items && group.LocalBranch(f, m.G).pinged {
			seen = i
		}
	}
	_ = m.Done.Send(f, seen)
}

func (t *table) Ping() { t.pinged = true }

func init() { chare.Register[feeder](chare.Threaded((*feeder).Loop)) }

// TestT11_YieldLetsThePEProcessMessages: with Options.Yield, a threaded
// insertion loop lets a message queued on its PE run before the loop ends;
// without it, the message waits for the loop.
func TestT11_YieldLetsThePEProcessMessages(t *testing.T) {
	for _, yield := range []int{0, 10} {
		const items = 1000
		seen := -1
		code, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *tmain, _ []string) {
			g, _ := group.New[table](m)
			s, err := tram.New(m, g, (*table).Add, tram.Options{Dims: []int{1}, Yield: yield, FlushPeriod: time.Millisecond})
			if err != nil {
				m.Abort(err)
				return
			}
			started := chare.NewFuture[any](m)
			if err := s.Start(m, tram.Step{Mode: tram.Quiescence, Started: started.Callback()}); err != nil {
				m.Abort(err)
				return
			}
			if err := chare.WaitAll(m, started); err != nil {
				m.Abort(err)
				return
			}
			f, _ := chare.New[feeder](m, 0)
			res := chare.NewFuture[int](m)
			_ = chare.Send(m, f, (*feeder).Loop, loopMsg{S: s, G: g, Items: items, Done: res})
			if seen, err = res.Get(m); err != nil {
				m.Abort(err)
				return
			}
			m.Exit(0)
		})
		require.NoError(t, err)
		require.Equal(t, 0, code)
		if yield == 0 {
			require.Equal(t, items, seen, "without yielding, the ping waits for the loop")
		} else {
			require.Less(t, seen, yield+1, "with Yield %d, the ping runs within the first yield", yield)
		}
	}
}
