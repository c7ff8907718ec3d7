package comlib

import (
	"fmt"
	"sort"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib/mcast"
	"github.com/charmgo/charm/internal/core"
	"github.com/charmgo/charm/internal/mpcheck"
)

// mcastMsg is a multicast on its way along the plan: whole, or one chunk
// of it (chunks are forwarded as they come: pipelined).
type mcastMsg struct {
	Inst    uint32
	Root    int
	Seq     uint64
	Dests   []int      // sorted PEs
	Members [][]string // per destination, the section members there (IndexKey)
	Group   bool       // a group broadcast: each destination's branch
	Env     *wenv      `msgpack:",omitempty"`
	Chunk   int
	Chunks  int
	Data    []byte `msgpack:",omitempty"`
}

// maxReassembly bounds what a PE holds of incomplete chunked messages.
const maxReassembly = 256 << 20

type multicaster struct {
	s     *state
	in    *Instance
	sp    MulticastOptions
	kind  mcast.Kind
	opt   mcast.Options
	seq   uint64
	reasm *mcast.Reassembler
}

func newMcast(s *state, in *Instance, sp MulticastOptions) (*multicaster, error) {
	k, err := mcast.ParseKind(sp.Kind)
	if err != nil {
		return nil, err
	}
	rt := s.pe.Job().Runtime()
	opt := mcast.Options{Degree: sp.Degree, Rings: sp.Rings, NumPEs: s.pe.NumPEs(), NodeOf: rt.NodeOf}
	return &multicaster{s: s, in: in, sp: sp, kind: k, opt: opt, reasm: mcast.NewReassembler(maxReassembly)}, nil
}

func (m *multicaster) send(o op) error {
	m.in.st.direct.Add(1)
	return chare.Forward(m.s.ctx(), o.env)
}

// broadcast: a group broadcast goes along the plan to every PE; an array
// broadcast goes directly (it is numbered at its root so that each
// element gets it once while elements migrate).
func (m *multicaster) broadcast(o op) error {
	h := o.env.Header()
	if h.Kind != chare.KindGroupAll || h.Index != nil {
		m.in.st.direct.Add(1)
		return chare.Forward(m.s.ctx(), o.env)
	}
	dests := make([]int, m.s.pe.NumPEs())
	for i := range dests {
		dests[i] = i
	}
	return m.start(mcastMsg{Dests: dests, Group: true}, o.env)
}

// multicast sends a section multicast along the plan: one copy per PE
// that has members.
func (m *multicaster) multicast(o op) error {
	h := o.env.Header()
	if h.Section == nil {
		return chare.Forward(m.s.ctx(), o.env)
	}
	part, err := core.PartOf(m.s.pe, h.Section.Coll)
	if err != nil {
		return err
	}
	byPE := map[int][]string{}
	for _, idx := range h.Section.Members {
		pe, err := part.Locate(idx)
		if err != nil {
			return fmt.Errorf("comlib: %v: section member %v: %w", m.in, idx, err)
		}
		k, err := core.IndexKey(idx)
		if err != nil {
			return err
		}
		byPE[pe] = append(byPE[pe], k)
	}
	msg := mcastMsg{}
	for pe := range byPE {
		msg.Dests = append(msg.Dests, pe)
	}
	sort.Ints(msg.Dests)
	for _, pe := range msg.Dests {
		msg.Members = append(msg.Members, byPE[pe])
	}
	return m.start(msg, o.env)
}

// start sends a multicast from this PE, the root.
func (m *multicaster) start(msg mcastMsg, env chare.Envelope) error {
	me := m.s.pe.ID()
	m.seq++
	msg.Inst, msg.Root, msg.Seq = m.in.id, me, m.seq
	kids, err := mcast.Children(m.kind, m.opt, me, msg.Dests, me)
	if err != nil {
		return fmt.Errorf("comlib: %v: %w", m.in, err)
	}
	if sz, ok := payload(env).(Sizer); m.sp.Chunk > 0 && (!ok || sz.Size() > m.sp.Chunk) {
		b, err := msgpack.Marshal(wenv{E: env})
		if err != nil {
			return fmt.Errorf("comlib: %v: encoding a multicast to cut it: %w", m.in, err)
		}
		if len(b) > m.sp.Chunk {
			chunks, err := mcast.Split(b, m.sp.Chunk)
			if err != nil {
				return err
			}
			for i, c := range chunks {
				part := msg
				part.Chunk, part.Chunks, part.Data = i, len(chunks), c
				m.forward(kids, part)
			}
			m.deliver(msg, env)
			return nil
		}
	}
	msg.Env = &wenv{E: env}
	m.forward(kids, msg)
	m.deliver(msg, env)
	return nil
}

func (m *multicaster) forward(kids []int, msg mcastMsg) {
	for _, k := range kids {
		m.in.st.packets.Add(1)
		if err := chare.Send(m.s.ctx(), m.s.g.At(k), (*branch).Mcast, msg); err != nil {
			m.s.pe.Fail(fmt.Errorf("comlib: %v: multicast to PE %d: %w", m.in, k, err))
		}
	}
}

// deliver runs the multicast on the members of this PE, if it is a
// destination.
func (m *multicaster) deliver(msg mcastMsg, env chare.Envelope) {
	me := m.s.pe.ID()
	i := sort.SearchInts(msg.Dests, me)
	if i == len(msg.Dests) || msg.Dests[i] != me {
		return
	}
	ctx := m.s.ctx()
	if msg.Group {
		if err := chare.Deliver(ctx, core.BranchCopy(env, me)); err != nil {
			m.s.pe.Fail(err)
		}
		return
	}
	if i >= len(msg.Members) {
		m.s.pe.Fail(fmt.Errorf("comlib: %v: a multicast with %d destinations and %d member lists", m.in, len(msg.Dests), len(msg.Members)))
		return
	}
	for _, k := range msg.Members[i] {
		if err := chare.Deliver(ctx, core.ElementCopy(env, core.IndexFromKey(k))); err != nil {
			m.s.pe.Fail(err)
		}
	}
}

// receive handles a multicast (or a chunk of one) on a PE of its plan.
func (m *multicaster) receive(msg mcastMsg) error {
	me := m.s.pe.ID()
	kids, err := mcast.Children(m.kind, m.opt, msg.Root, msg.Dests, me)
	if err != nil {
		return err
	}
	m.forward(kids, msg) // chunks go on at once: pipelined
	if msg.Env != nil {
		m.deliver(msg, msg.Env.E)
		return nil
	}
	id := uint64(msg.Root)<<40 | msg.Seq&(1<<40-1)
	whole, done, err := m.reasm.Add(id, msg.Chunk, msg.Chunks, msg.Data)
	if err != nil || !done {
		return err
	}
	var w wenv
	if err := mpcheck.Unmarshal(whole, &w); err != nil { // lengths, nesting and allocation a decode can afford
		return fmt.Errorf("decoding a reassembled multicast from PE %d: %w", msg.Root, err)
	}
	m.deliver(msg, w.E)
	return nil
}

// Mcast receives a multicast.
func (b *branch) Mcast(m mcastMsg) {
	strat, err := b.st.strategyOf(m.Inst)
	if err == nil {
		x, ok := strat.(*multicaster)
		if !ok {
			err = fmt.Errorf("comlib: a multicast for instance %d, which is not a multicast strategy", m.Inst)
		} else if err = x.receive(m); err != nil {
			err = fmt.Errorf("comlib: instance %d on PE %d: %w", m.Inst, b.PE(), err)
		}
	}
	if err != nil {
		b.Abort(err)
	}
}
