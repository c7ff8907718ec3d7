package bracket

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/comlib/route"
)

// allocRing is n PEs with one source each that exchange all to all
// through the direct router, the runtime's steady state: a list known,
// every iteration optimized.
type allocRing struct {
	pes   []*PE[int]
	keys  []Key
	iter  int
	got   []int // messages delivered per PE in the current iteration
	inbox [][]Packet[int]
	spare []Packet[int] // an inbox's array, to reuse
	err   error
}

func newAllocRing(t *testing.T, n int) *allocRing {
	mk := func(n, _ int) (Router, error) { return route.New("direct", n, route.Options{}) }
	r := &allocRing{got: make([]int, n), inbox: make([][]Packet[int], n)}
	where := map[Key]int{}
	for i := 0; i < n; i++ {
		r.keys = append(r.keys, Key(fmt.Sprintf("k%02d", i)))
		where[r.keys[i]] = i
	}
	for i := 0; i < n; i++ {
		p := NewPE[int](i, Options{}, mk)
		_, err := p.NewList(&List{Step: 1, Iter: -1, Where: where})
		require.NoError(t, err)
		p.Release(1)
		r.pes = append(r.pes, p)
	}
	return r
}

func (r *allocRing) effects(pe int, fx Effects[int], err error) {
	if err == nil && len(fx.Errors) > 0 {
		err = fx.Errors[0]
	}
	if err != nil || len(fx.Direct) > 0 || len(fx.Notes) > 0 {
		r.err = fmt.Errorf("PE %d: err %v, %d direct, %d notes", pe, err, len(fx.Direct), len(fx.Notes))
	}
	for _, pk := range fx.Packets {
		r.inbox[pk.To] = append(r.inbox[pk.To], pk)
	}
	r.got[pe] += len(fx.Deliver)
	for _, ms := range fx.Runs {
		r.got[pe] += len(ms)
	}
	r.pes[pe].Recycle(fx)
}

// round runs one iteration on every PE and returns the messages
// delivered.
func (r *allocRing) round() int {
	n := len(r.pes)
	for i, p := range r.pes {
		fx, err := p.Begin(r.keys[i], r.iter)
		r.effects(i, fx, err)
		for j := 1; j < n; j++ {
			d := (i + j) % n
			fx, err := p.Send(r.keys[i], d, r.keys[d], i)
			r.effects(i, fx, err)
		}
		fx, err = p.End(r.keys[i])
		r.effects(i, fx, err)
	}
	for busy := true; busy; {
		busy = false
		for to := range r.inbox {
			pks := r.inbox[to]
			r.inbox[to] = r.spare[:0]
			for _, pk := range pks {
				busy = true
				r.effects(to, r.pes[to].Packet(pk), nil)
			}
			clear(pks)
			r.spare = pks
		}
	}
	r.iter++
	total := 0
	for i, g := range r.got {
		total += g
		r.got[i] = 0
	}
	return total
}

// TestExchangeAllocations bounds the garbage of an optimized iteration:
// the machine reuses its effects, iterations and router lists, so what
// is left per PE is the stage's array of routed messages.
func TestExchangeAllocations(t *testing.T) {
	const n = 16
	r := newAllocRing(t, n)
	require.Equal(t, n*(n-1), r.round())
	require.NoError(t, r.err)
	delivered := 0
	a := testing.AllocsPerRun(20, func() { delivered = r.round() })
	require.NoError(t, r.err)
	require.Equal(t, n*(n-1), delivered, "every message delivered once")
	require.LessOrEqual(t, a, float64(n), "allocations per iteration of %d PEs: one array of routed messages per PE", n)
}
