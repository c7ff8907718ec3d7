package chare_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// A message whose header names another chare type's entry method for a
// singleton chare, or for the main chare (a damaged header from another
// process, or a program's bug), is refused with an error that names the
// entry, the chare, its type and its PE; the chare runs nothing.

type weTarget struct{ chare.Chare[weTarget] }

// weHits counts the Hit messages that the running test's chares ran.
var weHits atomic.Int64

func (c *weTarget) Hit(n int)  { weHits.Add(int64(n)) }
func (c *weTarget) Count() int { return int(weHits.Load()) }

type weOther struct{ chare.Chare[weOther] }

func (c *weOther) Hit(int) {}

type weMain struct{ chare.Chare[weMain] }

func init() {
	chare.Register[weTarget]()
	chare.Register[weOther]()
	chare.Register[weMain]()
}

func weMust(err error) {
	if err != nil {
		panic(err)
	}
}

func TestMessageForAnotherTypeRefusedByAChare(t *testing.T) {
	for _, tc := range []struct {
		name     string
		main     bool // to the main chare (PE 0), else to a chare on PE 1
		wire     bool // the envelope crosses a loopback wire
		wantType string
	}{
		{"a chare, in this process", false, false, "chare_test.weTarget"},
		{"a chare, from another process", false, true, "chare_test.weTarget"},
		{"the main chare, in this process", true, false, "chare_test.weMain"},
		{"the main chare, from another process", true, true, "chare_test.weMain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			weHits.Store(0)
			var route chare.Route
			_, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *weMain, _ []string) {
				if tc.main {
					route = m.ThisProxy().Route()
				} else {
					p, err := chare.New[weTarget](m, 1)
					weMust(err)
					route = p.Route()
					weMust(chare.Send(m, p, (*weTarget).Hit, 1))
					f, err := chare.Call0(m, p, (*weTarget).Count) // after the Hit
					weMust(err)
					_, err = f.Get(m)
					weMust(err)
				}
				other := chare.NewProxy[weOther](route)
				if !tc.wire {
					weMust(chare.Send(m, other, (*weOther).Hit, 1))
					return
				}
				e, err := chare.EntryOf((*weOther).Hit)
				weMust(err)
				b, err := msgpack.Marshal(core.WireEnvelope{E: chare.NewEnvelope(route, e, 1)})
				weMust(err)
				var w core.WireEnvelope
				weMust(msgpack.Unmarshal(b, &w))
				weMust(chare.Forward(m, w.E)) // to the chare's PE, by its route
			})
			require.Error(t, err)
			require.NotContains(t, err.Error(), "panic")
			require.ErrorContains(t, err, fmt.Sprintf("chare: chare_test.weOther.Hit on chare %v: an entry method of chare_test.weOther, not of %s, the type of chare %v on PE %d",
				route.Coll, tc.wantType, route.Coll, route.PE))
			want := int64(1) // the good message to the chare ran; the refused one did not
			if tc.main {
				want = 0 // (the main chare had none)
			}
			require.Equal(t, want, weHits.Load())
		})
	}
}

// A chare's message routed as a group branch's (a damaged header) is
// refused where it arrives; the chare runs nothing.
func TestChareMessageRoutedAsAnotherKindRefused(t *testing.T) {
	weHits.Store(0)
	var route chare.Route
	_, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *weMain, _ []string) {
		p, err := chare.New[weTarget](m, 1)
		weMust(err)
		f, err := chare.Call0(m, p, (*weTarget).Count) // it exists on PE 1
		weMust(err)
		_, err = f.Get(m)
		weMust(err)
		route = p.Route()
		e, err := chare.EntryOf((*weTarget).Hit)
		weMust(err)
		weMust(chare.Forward(m, chare.NewEnvelope(chare.Route{Kind: chare.KindBranch, Coll: route.Coll, PE: 1}, e, 1)))
	})
	require.Error(t, err)
	require.ErrorContains(t, err, fmt.Sprintf("reached PE 1 as a branch message for PE 1: chare %v lives on PE 1", route.Coll))
	require.Zero(t, weHits.Load(), "the chare ran nothing")
}
