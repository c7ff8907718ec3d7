package route

import (
	"fmt"
	"sort"

	"github.com/charmgo/charm/comlib/schedule"
)

// The complete-exchange schedules of package comlib/schedule, as routers: stage s is round s
// of the schedule (built with one packet per block: a combined message is one block), SendTo
// lists the partners a participant sends its blocks to in that round, and every message goes
// directly to its destination in the round where its source meets it (X02: no detour).
var scheduleNames = []string{"shift", "pairwise", "xor", "sync", "group"}

// Ordered is implemented by routers whose stage peers should be sent to in a given order rather
// than SendTo's sorted one: the schedules order a round's partners so that, step by step, no
// two participants send to the same one (the synchronous and group shuffles). A runtime that
// sends a stage's messages one after another should follow SendOrder when a router has it.
type Ordered interface {
	// SendOrder is SendTo(self, stage) in the order to send.
	SendOrder(self, stage int) []int
}

// sched is a schedule seen as a router.
type sched struct {
	name  string
	n     int
	order [][][]int // [stage][self]: partners in the schedule's step order
	send  [][][]int // the same, sorted
	recv  [][][]int // [stage][self]: who sends to self, sorted
}

func newSched(name string, n int, o Options) (Router, error) {
	if o.Omega < 0 {
		return nil, fmt.Errorf("route: %s option Omega=%d: must be at least 1 (or 0 for ⌈√(n−1)⌉)", name, o.Omega)
	}
	if name == "xor" && n&(n-1) != 0 {
		// The seed's answer for p ≠ 2^x: 2^⌈log2 p⌉−1 rounds in which the pairs with a
		// member ≥ p are idle. That is exactly the prefix router.
		return renamed{newPrefix(n), "xor"}, nil
	}
	s, err := schedule.New(name, n, 1, schedule.Options{Omega: o.Omega})
	if err != nil {
		return nil, fmt.Errorf("route: %w", err)
	}
	r := &sched{name: name, n: n}
	for _, round := range s.Rounds {
		order := make([][]int, n)
		recv := make([][]int, n)
		for _, step := range round {
			for _, t := range step {
				order[t.From] = append(order[t.From], t.To)
				recv[t.To] = append(recv[t.To], t.From)
			}
		}
		send := make([][]int, n)
		for i := range order {
			send[i] = append([]int(nil), order[i]...)
			sort.Ints(send[i])
			sort.Ints(recv[i])
		}
		r.order = append(r.order, order)
		r.send = append(r.send, send)
		r.recv = append(r.recv, recv)
	}
	return r, nil
}

func (r *sched) Name() string { return r.name }
func (r *sched) N() int       { return r.n }
func (r *sched) Stages() int  { return len(r.send) }

func (r *sched) peers(tab [][][]int, self, stage int) []int {
	if stage < 0 || stage >= len(tab) || self < 0 || self >= r.n {
		return nil
	}
	return tab[stage][self]
}

// SendTo, RecvFrom and SendOrder return shared lists: callers must not modify them (a
// schedule's are fixed, and a bracketed exchange asks for them every stage).
func (r *sched) SendTo(self, stage int) []int    { return r.peers(r.send, self, stage) }
func (r *sched) RecvFrom(self, stage int) []int  { return r.peers(r.recv, self, stage) }
func (r *sched) SendOrder(self, stage int) []int { return r.peers(r.order, self, stage) }

func (r *sched) NextHop(at, dest, stage int) int {
	if contains(r.peers(r.send, at, stage), dest) {
		return dest
	}
	return at
}

// renamed is a router under another name.
type renamed struct {
	Router
	name string
}

func (r renamed) Name() string { return r.name }
