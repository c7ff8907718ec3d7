package comlib

import (
	"fmt"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
)

// Urgent is implemented by message types whose messages must not wait in
// a Streaming buffer (PrioStreaming's urgent messages): when Urgent
// returns true the message goes directly.
type Urgent interface{ Urgent() bool }

// streamMsg is a buffer's worth of envelopes, with the PE each is for
// (MeshStreaming's first hop carries envelopes for other PEs).
type streamMsg struct {
	Inst  uint32
	Dests []int32
	Envs  []wenv
}

// sbuf is the buffer for one next hop.
type sbuf struct {
	dests []int32
	envs  []wenv
	bytes int
}

// stream is Streaming and MeshStreaming on one PE.
type stream struct {
	s     *state
	in    *Instance
	sp    Spec
	bufs  []sbuf // by next hop
	dirty []int  // hops with something buffered
	n     int    // envelopes buffered
	cols  int    // mesh columns
	timer bool   // a periodic flush is armed
	idle  bool   // an idle flush is posted
}

func newStream(s *state, in *Instance, sp Spec) *stream {
	p := s.pe.NumPEs()
	st := &stream{s: s, in: in, sp: sp, bufs: make([]sbuf, p)}
	if sp.Mesh {
		st.cols = 1
		for st.cols*st.cols < p {
			st.cols++
		}
	}
	return st
}

// hop returns the PE a message for dest goes to first.
func (t *stream) hop(dest int) int {
	me := t.s.pe.ID()
	if !t.sp.Mesh || dest == me {
		return dest
	}
	mid := (me/t.cols)*t.cols + dest%t.cols // my row, dest's column
	if mid >= t.s.pe.NumPEs() || mid == me {
		return dest
	}
	return mid
}

func sizeOf(env chare.Envelope) int {
	if s, ok := env.Payload().(Sizer); ok {
		return s.Size()
	}
	return 64
}

func (t *stream) send(o op) error {
	dest, err := destinationPE(t.s, o.env)
	if err != nil {
		return err
	}
	if u, ok := o.env.Payload().(Urgent); ok && u.Urgent() {
		t.in.st.direct.Add(1)
		return chare.Forward(t.s.ctx(), o.env)
	}
	size := sizeOf(o.env)
	if size >= t.sp.Large {
		t.in.st.direct.Add(1)
		return chare.Forward(t.s.ctx(), o.env)
	}
	t.add(dest, wenv{E: o.env}, size)
	return nil
}

// add buffers an envelope for dest.
func (t *stream) add(dest int, e wenv, size int) {
	h := t.hop(dest)
	b := &t.bufs[h]
	if len(b.envs) == 0 {
		t.dirty = append(t.dirty, h)
	}
	b.dests = append(b.dests, int32(dest))
	b.envs = append(b.envs, e)
	b.bytes += size
	t.n++
	t.s.pe.Actor().Hold(1)
	if len(b.envs) >= t.sp.MaxMsgs || b.bytes >= t.sp.MaxBytes {
		t.flush(h)
		return
	}
	t.arm()
}

// arm schedules the periodic and idle flushes while something waits.
func (t *stream) arm() {
	ap := t.s.pe.Actor()
	if t.sp.Idle && !t.idle {
		// A control message at the end of the mailbox: it runs once the
		// PE has handled what was waiting, the closest a PE has to idle.
		t.idle = true
		ap.After(0, func(*actor.PE) { t.idle = false; t.flushAll() })
	}
	if t.sp.Period > 0 && !t.timer {
		t.timer = true
		ap.After(t.sp.Period, func(*actor.PE) {
			t.timer = false
			t.flushAll()
		})
	}
}

func (t *stream) flushAll() {
	for len(t.dirty) > 0 {
		t.flush(t.dirty[0])
	}
}

// flush sends the buffer for hop h.
func (t *stream) flush(h int) {
	b := &t.bufs[h]
	if len(b.envs) == 0 {
		return
	}
	for i, d := range t.dirty {
		if d == h {
			t.dirty = append(t.dirty[:i], t.dirty[i+1:]...)
			break
		}
	}
	m := streamMsg{Inst: t.in.id, Dests: b.dests, Envs: b.envs}
	t.n -= len(b.envs)
	t.s.pe.Actor().Release(len(b.envs))
	*b = sbuf{dests: make([]int32, 0, len(m.Dests)), envs: make([]wenv, 0, len(m.Envs))}
	t.in.st.packets.Add(1)
	if h == t.s.pe.ID() {
		t.receive(m)
		return
	}
	if err := chare.Send(t.s.ctx(), t.s.g.At(h), (*branch).Stream, m); err != nil {
		t.s.pe.Fail(fmt.Errorf("comlib: %v: a buffer for PE %d: %w", t.in, h, err))
	}
}

// receive delivers what is for this PE and passes the rest on (the mesh's
// second hop).
func (t *stream) receive(m streamMsg) {
	me := t.s.pe.ID()
	ctx := t.s.ctx()
	for i, e := range m.Envs {
		d := int(m.Dests[i])
		if d == me {
			if err := chare.Deliver(ctx, e.E); err != nil {
				t.s.pe.Fail(fmt.Errorf("comlib: %v: %w", t.in, err))
			}
			continue
		}
		if d < 0 || d >= t.s.pe.NumPEs() {
			t.s.pe.Fail(fmt.Errorf("comlib: %v: a streamed message for PE %d, which does not exist", t.in, d))
			continue
		}
		t.add(d, e, sizeOf(e.E))
	}
}

func (t *stream) broadcast(o op) error {
	t.in.st.direct.Add(1)
	return chare.Forward(t.s.ctx(), o.env)
}

func (t *stream) multicast(o op) error {
	t.in.st.direct.Add(1)
	return chare.Forward(t.s.ctx(), o.env)
}

// Stream receives a buffer.
func (b *branch) Stream(m streamMsg) {
	if len(m.Dests) != len(m.Envs) {
		b.Abort(fmt.Errorf("comlib: a streamed buffer with %d destinations for %d messages", len(m.Dests), len(m.Envs)))
		return
	}
	strat, err := b.st.strategyOf(m.Inst)
	if err == nil {
		if t, ok := strat.(*stream); ok {
			t.receive(m)
			return
		}
		err = fmt.Errorf("comlib: a streamed buffer for instance %d, which is not streaming", m.Inst)
	}
	b.Abort(err)
}

// destinationPE returns the PE an element, branch or chare send goes to
// from here.
func destinationPE(s *state, env chare.Envelope) (int, error) {
	h := env.Header()
	switch h.Kind {
	case chare.KindChare, chare.KindBranch:
		if h.Index == nil {
			return h.PE, nil
		}
	}
	part, err := s.pe.Part(h.Coll)
	if err != nil {
		return 0, err
	}
	return part.Locate(h.Index)
}
