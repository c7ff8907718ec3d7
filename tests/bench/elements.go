package main

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

// runtime/manytomany/array: the many-to-many workload of
// runtime/manytomany, but between chare array elements, m2mPerPE of them
// on each PE (block map): every element sends k small messages to every
// element on the other PEs, in the same interleaved order (for each
// round, each other PE, each element there). So consecutive sends from
// one element go to different elements, and each message carries its own
// index; this is what element runs are for. The baseline is p raw
// protoactor-go actors, each holding m2mPerPE counters that a message
// names by index, one mailbox message per message.

// m2mPerPE is the number of elements per PE.
const m2mPerPE = 4

func init() {
	chare.Register[m2mElem](chare.Transient("got", "want", "sent", "done")) // never moves
	registerPaired("runtime/manytomany/array", func(cfg config) ([]figure, error) {
		return benchManyToManyArray(cfg, "runtime/manytomany/array", cfg.pes)
	})
}

type m2mElem struct {
	array.Element[m2mElem, int]
	m2mCount
}

func (e *m2mElem) Start(s m2mStart) {
	n := e.NumPEs() * m2mPerPE
	me := e.ThisIndex()
	pe := me / m2mPerPE
	p := e.NumPEs()
	e.expect(s.K*(p-1)*m2mPerPE, s.Done)
	a := e.ThisProxy()
	for k := 0; k < s.K; k++ {
		for d := 1; d < p; d++ {
			base := (pe + d) % p * m2mPerPE
			for t := 0; t < m2mPerPE; t++ {
				_ = chare.Send(e, a.At((base+t)%n), (*m2mElem).Recv, m2mMsg{From: int64(me), Seq: int64(k)})
			}
		}
	}
	e.check(e)
}

func (e *m2mElem) Recv(m m2mMsg) {
	e.got++
	e.check(e)
}

// benchManyToManyArray is benchManyToMany between array elements; its
// lines are the same (rate, .../mem, .../allocs).
func benchManyToManyArray(cfg config, name string, p int) ([]figure, error) {
	if p < 2 {
		return nil, fmt.Errorf("%s needs at least 2 PEs", name)
	}
	pairs := p * m2mPerPE * (p - 1) * m2mPerPE
	k := max(1, int(800_000*cfg.scale/float64(pairs)))
	total := float64(pairs * k)
	return pairedManyToMany(cfg, name, p, total, func(m *benchMain) (chare.Target[m2mElem], error) {
		return array.New[m2mElem](m, array.Dims(p*m2mPerPE))
	}, (*m2mElem).Start, func() (float64, error) { return rawManyToManyElems(p, k) }, k)
}

// rawElemMsg is the baseline's message: m2mMsg and the index it is for.
type rawElemMsg struct {
	To int
	m2mMsg
}

func rawManyToManyElems(p, k int) (float64, error) {
	done := newSignal()
	var finished atomic.Int64
	n := p * m2mPerPE
	got := make([]int, n) // each touched only by the actor holding the element
	want := k * (p - 1) * m2mPerPE
	rs, err := newRaw(p, func(rs *rawSystem, i int, msg any) {
		switch x := msg.(type) {
		case rawStart:
			for e := i * m2mPerPE; e < (i+1)*m2mPerPE; e++ {
				for s := 0; s < k; s++ {
					for d := 1; d < p; d++ {
						dest := (i + d) % p
						for t := 0; t < m2mPerPE; t++ {
							rs.send(dest, rawElemMsg{To: dest*m2mPerPE + t, m2mMsg: m2mMsg{From: int64(e), Seq: int64(s)}})
						}
					}
				}
			}
		case rawElemMsg:
			if x.To/m2mPerPE != i {
				panic(fmt.Sprintf("raw element %d reached actor %d", x.To, i))
			}
			got[x.To]++
			if got[x.To] == want && finished.Add(1) == int64(n) {
				done.fire()
			}
		}
	})
	if err != nil {
		return 0, err
	}
	defer rs.stop()
	t0 := time.Now()
	for i := 0; i < p; i++ {
		rs.send(i, rawStart{})
	}
	select {
	case <-done.wait():
	case <-time.After(60 * time.Second):
		return 0, errors.New("raw many-to-many between elements did not finish in 60 s")
	}
	return float64(n*want) / time.Since(t0).Seconds(), nil
}

// remote/oneway/array: remote/oneway's stream from PE 0 to PE 1 (node 1),
// but to array elements: m2mPerPE of them on PE 1, the sends dealt to
// them in turn, so each message carries its element's index across the
// processes. The baseline is remote/oneway's: raw protoactor-go remote
// sends to a peer process, one msgpack message (without an index) per
// BytesValue; the pairs alternate.

func init() {
	chare.Register[owElem](chare.Fast((*owElem).Take), chare.Transient("got", "want", "sent", "done")) // node 1 only receives Take: as remote/oneway's sink, it decodes without reflection
	registerPaired("remote/oneway/array", benchRemoteOnewayArray)
}

type owElem struct {
	array.Element[owElem, int]
	m2mCount
}

type owExpect struct {
	PerElem int // messages for each element on PE 1
	Done    chare.Callback
}

func (e *owElem) Expect(m owExpect) {
	n := 0
	if e.PE() == 1 {
		n = m.PerElem
	}
	e.expect(n, m.Done)
	e.check(e)
}

func (e *owElem) Take(m m2mMsg) {
	e.got++
	e.check(e)
}

func benchRemoteOnewayArray(cfg config) ([]figure, error) {
	n := int(500_000*cfg.scale) / m2mPerPE * m2mPerPE
	return pairedOneway(cfg, "remote/oneway/array", n, func(m *benchMain) (func() (float64, error), error) {
		a, err := array.New[owElem](m, array.Dims(2*m2mPerPE))
		if err != nil {
			return nil, err
		}
		return func() (float64, error) {
			f := chare.NewFuture[any](m)
			if err := chare.Send(m, a, (*owElem).Expect, owExpect{PerElem: n / m2mPerPE, Done: f.Callback()}); err != nil {
				return 0, err
			}
			t0 := time.Now()
			for i := 0; i < n; i++ {
				if err := chare.Send(m, a.At(m2mPerPE+i%m2mPerPE), (*owElem).Take, m2mMsg{From: 0, Seq: int64(i)}); err != nil {
					return 0, err
				}
			}
			if _, err := f.Get(m); err != nil {
				return 0, err
			}
			return float64(n) / time.Since(t0).Seconds(), nil
		}, nil
	})
}
