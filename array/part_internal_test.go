package array

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// A message whose header names another chare type's entry method for an
// array element (a damaged header from another process) is refused with an
// error that names both, before the element's delivery counts move; the
// element runs nothing.

type ptElem struct {
	Element[ptElem, int]
	Hits int
}

func (e *ptElem) Hit(n int)  { e.Hits += n }
func (e *ptElem) Count() int { return e.Hits }

type ptOther struct {
	Element[ptOther, int]
}

func (e *ptOther) Hit(int) {}

type ptMain struct{ chare.Chare[ptMain] }

func init() {
	chare.Register[ptElem]()
	chare.Register[ptOther]()
	chare.Register[ptMain]()
}

// must fails the job (a panic on its PE, which Run returns as an error)
// where the test's own t must not be used.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// ptArray makes an array of 10 ptElem on the job's one PE, runs a Count
// (after a Hit on element 5 if hit) and returns it with its part.
func ptArray(m *ptMain, hit bool) (Proxy[ptElem, int], *part[int]) {
	a, err := New[ptElem](m, Dims(10))
	must(err)
	if hit {
		must(chare.Send(m, a.At(5), (*ptElem).Hit, 1))
	}
	f, err := chare.Call0(m, a.At(5), (*ptElem).Count) // after the Hit: one sender, one receiver
	must(err)
	_, err = f.Get(m)
	must(err)
	l, err := localPart[int](m, a.Route().Coll)
	must(err)
	return a, l
}

func TestMessageForAnotherTypeRefusedUncounted(t *testing.T) {
	for _, tc := range []struct {
		name string
		wire bool // the envelope crosses a loopback wire: its index stays in its bytes
	}{{"from another process", true}, {"in this process", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var l *part[int]
			var before Stats
			_, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *ptMain, _ []string) {
				var a Proxy[ptElem, int]
				a, l = ptArray(m, true)
				before = l.stats

				other, err := chare.EntryOf((*ptOther).Hit)
				must(err)
				env := chare.NewEnvelope(a.At(5).Route(), other, 1)
				if tc.wire {
					b, err := msgpack.Marshal(core.WireEnvelope{E: env})
					must(err)
					var w core.WireEnvelope
					must(msgpack.Unmarshal(b, &w))
					env = w.E
				}
				env.Deliver(chare.PEOf(m).Actor())
			})
			// Run returns once the refusal ended the job; what the part
			// counted up to it happened before.
			require.ErrorContains(t, err, "array: array.ptOther.Hit on element 5 of array #")
			require.ErrorContains(t, err, "an entry method of array.ptOther, not of the elements of array.ptElem #")
			require.Equal(t, 2, before.Delivered, "the good messages (Hit, Count)")
			require.Equal(t, before, l.stats, "the refused message is not counted")
		})
	}
}

// The same for a broadcast to the array: refused on the PE where it
// arrives, before it is numbered, passed on or run on any element.
func TestBroadcastForAnotherTypeRefused(t *testing.T) {
	for _, wire := range []bool{false, true} {
		t.Run(map[bool]string{false: "in this process", true: "from another process"}[wire], func(t *testing.T) {
			var l *part[int]
			var before Stats
			var seq uint32
			var coll chare.CollID
			_, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *ptMain, _ []string) {
				a, err := New[ptElem](m, Dims(10))
				must(err)
				must(chare.Send(m, a.At(5), (*ptElem).Hit, 1))
				f, err := chare.Call0(m, a.At(5), (*ptElem).Count)
				must(err)
				_, err = f.Get(m)
				must(err)
				coll = a.Route().Coll
				l, err = localPart[int](m, coll)
				must(err)
				before, seq = l.stats, l.bseq

				if !wire {
					must(chare.Send(m, chare.NewProxy[ptOther](a.Route()), (*ptOther).Hit, 1))
					return
				}
				other, err := chare.EntryOf((*ptOther).Hit)
				must(err)
				b, err := msgpack.Marshal(core.WireEnvelope{E: chare.NewEnvelope(a.Route(), other, 1)})
				must(err)
				var w core.WireEnvelope
				must(msgpack.Unmarshal(b, &w))
				w.E.Deliver(chare.PEOf(m).Actor())
			})
			require.Error(t, err)
			require.NotContains(t, err.Error(), "panic")
			require.ErrorContains(t, err, fmt.Sprintf("chare: array.ptOther.Hit (array broadcast of array %v), a broadcast reaching PE 0: an entry method of array.ptOther, not of array.ptElem, the type of %v", coll, coll))
			require.Equal(t, before, l.stats, "nothing counted")
			require.Equal(t, seq, l.bseq, "the broadcast was not numbered")
			require.Equal(t, 1, l.elems[5].obj.(*ptElem).Hits, "no element ran it")
		})
	}
}

// A header routed as a group branch's or a chare's message on an array's
// ID (damaged) is refused: its PE number must not pass for the index of
// an element, which would run it.
func TestMessageRoutedAsAnotherKindRefused(t *testing.T) {
	for _, kind := range []chare.Kind{chare.KindBranch, chare.KindChare} {
		t.Run(kind.String(), func(t *testing.T) {
			var l *part[int]
			var before Stats
			_, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *ptMain, _ []string) {
				var a Proxy[ptElem, int]
				a, l = ptArray(m, false)
				before = l.stats
				hit, err := chare.EntryOf((*ptElem).Hit)
				must(err)
				env := chare.NewEnvelope(chare.Route{Kind: kind, Coll: a.Route().Coll, PE: 0}, hit, 1)
				env.Deliver(chare.PEOf(m).Actor())
			})
			require.ErrorContains(t, err, fmt.Sprintf("routed as a %v message", kind))
			require.Equal(t, before, l.stats, "the refused message is not counted")
		})
	}
}
