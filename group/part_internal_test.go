package group

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// A message whose header names another chare type's entry method for a
// group (a damaged header from another process, or a program's bug) is
// refused with an error that names the entry, the branch and the group's
// type, whether it comes alone, in a branch's run or as a broadcast; no
// branch runs it.

type ptBranch struct {
	Branch[ptBranch]
}

// ptHits counts the Hit messages that the branches of the running test ran.
var ptHits atomic.Int64

func (b *ptBranch) Hit(n int)  { ptHits.Add(int64(n)) }
func (b *ptBranch) Count() int { return int(ptHits.Load()) }

type ptOther struct {
	Branch[ptOther]
}

func (o *ptOther) Hit(int) {}

type ptMain struct{ chare.Chare[ptMain] }

func init() {
	chare.Register[ptBranch]()
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

// wired returns env as another process would have it: encoded and decoded.
func wired(env chare.Envelope) chare.Envelope {
	b, err := msgpack.Marshal(core.WireEnvelope{E: env})
	must(err)
	var w core.WireEnvelope
	must(msgpack.Unmarshal(b, &w))
	return w.E
}

func TestMessageForAnotherTypeRefused(t *testing.T) {
	type send func(m *ptMain, coll chare.CollID, other *chare.Entry)
	branch := func(coll chare.CollID, pe int) chare.Route {
		return chare.Route{Kind: chare.KindBranch, Coll: coll, PE: pe}
	}
	all := func(coll chare.CollID) chare.Route { return chare.Route{Kind: chare.KindGroupAll, Coll: coll} }
	deliver := func(m *ptMain, env chare.Envelope) { env.Deliver(chare.PEOf(m).Actor()) }
	for _, tc := range []struct {
		name string
		node bool
		send send
		want string
	}{
		{"a run in this process", false, func(m *ptMain, c chare.CollID, _ *chare.Entry) {
			p := chare.NewProxy[ptOther](branch(c, 1))
			must(chare.Send(m, p, (*ptOther).Hit, 1))
			must(chare.Send(m, p, (*ptOther).Hit, 1))
		}, "group.ptOther.Hit on group %v, the branch on PE 1: "},
		{"an envelope in this process", false, func(m *ptMain, c chare.CollID, other *chare.Entry) {
			deliver(m, chare.NewEnvelope(branch(c, 0), other, 1))
		}, "group.ptOther.Hit on group %v, the branch on PE 0: "},
		{"an envelope from another process", false, func(m *ptMain, c chare.CollID, other *chare.Entry) {
			deliver(m, wired(chare.NewEnvelope(branch(c, 0), other, 1)))
		}, "group.ptOther.Hit on group %v, the branch on PE 0: "},
		{"a node group's branch", true, func(m *ptMain, c chare.CollID, other *chare.Entry) {
			r := chare.Route{Kind: chare.KindBranch, Coll: c, PE: -1, Index: 0}
			deliver(m, wired(chare.NewEnvelope(r, other, 1)))
		}, "group.ptOther.Hit on group %v, the branch of node 0 on PE 0: "},
		{"a broadcast in this process", false, func(m *ptMain, c chare.CollID, _ *chare.Entry) {
			must(chare.Send(m, chare.NewProxy[ptOther](all(c)), (*ptOther).Hit, 1))
		}, "chare: group.ptOther.Hit on group %v, a broadcast reaching PE 0: "},
		{"a broadcast from another process", false, func(m *ptMain, c chare.CollID, other *chare.Entry) {
			deliver(m, wired(chare.NewEnvelope(all(c), other, 1)))
		}, "chare: group.ptOther.Hit on group %v, a broadcast reaching PE 0: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptHits.Store(0)
			var before int64
			var coll chare.CollID
			_, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *ptMain, _ []string) {
				var g chare.Proxy[ptBranch]
				var ats []chare.Proxy[ptBranch]
				if tc.node {
					p, err := NewNode[ptBranch](m)
					must(err)
					g, ats = p.Proxy, []chare.Proxy[ptBranch]{p.At(0)}
				} else {
					p, err := New[ptBranch](m)
					must(err)
					g, ats = p.Proxy, []chare.Proxy[ptBranch]{p.At(0), p.At(1)}
				}
				for _, at := range ats {
					must(chare.Send(m, at, (*ptBranch).Hit, 1))
					f, err := chare.Call0(m, at, (*ptBranch).Count) // after the Hit: one sender, one receiver
					must(err)
					_, err = f.Get(m)
					must(err)
				}
				before = ptHits.Load()
				other, err := chare.EntryOf((*ptOther).Hit)
				must(err)
				coll = g.Route().Coll
				tc.send(m, coll, other)
			})
			require.Error(t, err)
			require.NotZero(t, coll)
			require.ErrorContains(t, err, fmt.Sprintf(tc.want, coll))
			if strings.HasPrefix(tc.want, "chare:") { // a broadcast: the group's type, and its ID
				require.ErrorContains(t, err, fmt.Sprintf("an entry method of group.ptOther, not of group.ptBranch, the type of %v", coll))
			} else {
				require.ErrorContains(t, err, fmt.Sprintf("an entry method of group.ptOther, not of the branches of group.ptBranch %v", coll))
			}
			require.NotContains(t, err.Error(), "panic")
			require.EqualValues(t, map[bool]int64{false: 2, true: 1}[tc.node], before, "the good messages ran")
			require.Equal(t, before, ptHits.Load(), "no branch ran the refused message")
		})
	}
}

// A header routed to another PE's branch, or as another kind of message,
// is refused on the branch it reached: it must not run there.
func TestMessageRoutedElsewhereRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		route func(coll chare.CollID) chare.Route
		want  string
	}{
		{"another PE's branch", func(c chare.CollID) chare.Route { return chare.Route{Kind: chare.KindBranch, Coll: c, PE: 1} },
			"reached the branch on PE 0 of group %v as a branch message for PE 1"},
		{"a chare's route", func(c chare.CollID) chare.Route { return chare.Route{Kind: chare.KindChare, Coll: c, PE: 0} },
			"reached the branch on PE 0 of group %v as a chare message for PE 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptHits.Store(0)
			var coll chare.CollID
			_, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *ptMain, _ []string) {
				p, err := New[ptBranch](m)
				must(err)
				f, err := chare.Call0(m, p.At(0), (*ptBranch).Count) // the branch exists on PE 0
				must(err)
				_, err = f.Get(m)
				must(err)
				coll = p.Route().Coll
				hit, err := chare.EntryOf((*ptBranch).Hit)
				must(err)
				wired(chare.NewEnvelope(tc.route(coll), hit, 1)).Deliver(chare.PEOf(m).Actor())
			})
			require.Error(t, err)
			require.ErrorContains(t, err, fmt.Sprintf(tc.want, coll))
			require.Zero(t, ptHits.Load(), "no branch ran it")
		})
	}
}

// A node group's branch message that went through a delegate keeps PE −1
// and its node in Index: it runs on the branch the route found.
func TestNodeBranchMessageWithoutPERuns(t *testing.T) {
	ptHits.Store(0)
	_, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *ptMain, _ []string) {
		p, err := NewNode[ptBranch](m)
		must(err)
		f, err := chare.Call0(m, p.At(0), (*ptBranch).Count) // the branch exists
		must(err)
		_, err = f.Get(m)
		must(err)
		hit, err := chare.EntryOf((*ptBranch).Hit)
		must(err)
		r := chare.Route{Kind: chare.KindBranch, Coll: p.Route().Coll, PE: -1, Index: 0}
		must(chare.Deliver(m, wired(chare.NewEnvelope(r, hit, 1))))
		f, err = chare.Call0(m, p.At(0), (*ptBranch).Count)
		must(err)
		n, err := f.Get(m)
		must(err)
		if n != 1 {
			must(fmt.Errorf("the branch ran %d Hit messages, want 1", n))
		}
		m.Exit(0)
	})
	require.NoError(t, err)
	require.EqualValues(t, 1, ptHits.Load())
}
