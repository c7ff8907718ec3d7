package comlib

import (
	"fmt"
	"time"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib/channel"
	"github.com/charmgo/charm/internal/core"
)

// Urgent is implemented by message types whose messages must not wait in
// a Streaming buffer (PrioStreaming's urgent messages): when Urgent
// returns true the message goes directly.
type Urgent interface{ Urgent() bool }

// Tagged is a message that carries a tag identifying its data at the
// receiver (EasyMSG's tagged data, E02): send it through a Streaming
// instance to an entry method that takes a Tagged[T], and identify what
// arrived by its Tag, not by its order. Streaming keeps each sender's
// order to a PE today, but nothing promises it between buffered and
// direct (large, urgent) messages, nor across several buffers in flight.
// Its Size (8 bytes of tag plus the data's) tells Streaming how much of a
// buffer it takes.
//
//	func (c *Cell) Far(m comlib.Tagged[[]float64]) { c.acc[m.Tag] += sum(m.Data) }
//	chare.Send(c, cells.At(j), (*Cell).Far, comlib.Tagged[[]float64]{Tag: id, Data: v})
type Tagged[T any] = channel.Tagged[T]

// streamMsg is a buffer's worth of envelopes, each with the PE it is for
// (MeshStreaming's first hop carries envelopes for other PEs).
type streamMsg struct {
	Inst  uint32
	Items []streamItem
}

type streamItem struct {
	_msgpack struct{} `msgpack:",as_array"` // no field names per message on the wire
	Dest     int32
	E        wenv
}

// stream is Streaming and MeshStreaming on one PE. Its buffering is a
// channel.Channel with one target per next-hop PE: a block leaves when it
// is full or the next message does not fit, on the period, when the PE
// runs out of work, or on Flush. A block is done as soon as it is handed
// to the runtime, whose sends never block, so each hop's second buffer is
// seldom needed here.
type stream struct {
	s      *state
	in     *Instance
	sp     StreamSpec
	ch     *channel.Channel[streamItem]
	cols   int           // mesh columns
	period time.Duration // flush period in force (tuned with Tune)
	timer  bool          // a periodic flush is armed
	idle   bool          // an idle flush is posted
	tuner  *streamTuner  // with Tune
}

func newStream(s *state, in *Instance, sp StreamSpec) (*stream, error) {
	p := s.pe.NumPEs()
	ch, err := channel.New[streamItem](p, channel.Options{Buffers: 2, MaxItems: sp.MaxMsgs, MaxBytes: sp.MaxBytes})
	if err != nil {
		return nil, fmt.Errorf("comlib: %v: %w", in, err)
	}
	st := &stream{s: s, in: in, sp: sp, ch: ch, period: sp.Period}
	if sp.Mesh {
		st.cols = 1
		for st.cols*st.cols < p {
			st.cols++
		}
	}
	if sp.Tune {
		if st.tuner, err = newStreamTuner(st); err != nil {
			return nil, err
		}
	}
	return st, nil
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

func (t *stream) send(o op) error {
	dest, err := destinationPE(t.s, o.env)
	if err != nil {
		return err
	}
	if t.tuner != nil {
		t.tuner.count()
	}
	if u, ok := payload(o.env).(Urgent); ok && u.Urgent() {
		t.in.st.direct.Add(1)
		return chare.Forward(t.s.ctx(), o.env)
	}
	size := o.size
	if size >= t.sp.Large {
		t.in.st.direct.Add(1)
		return chare.Forward(t.s.ctx(), o.env)
	}
	t.add(dest, wenv{E: o.env}, size)
	return nil
}

// add buffers an envelope for dest.
func (t *stream) add(dest int, e wenv, size int) {
	out, err := t.ch.Push(t.hop(dest), streamItem{Dest: int32(dest), E: e}, size)
	if err != nil {
		// Blocks are done as soon as they leave, so a hop always has a
		// free buffer: this is a bug, and the message must not vanish.
		t.s.pe.Fail(fmt.Errorf("comlib: %v: buffering a message for PE %d: %w", t.in, dest, err))
		return
	}
	t.s.pe.Actor().Hold(1)
	t.sendBlocks(out)
	if t.ch.Pending() > 0 {
		t.arm()
	}
}

// arm schedules the periodic and idle flushes while something waits.
func (t *stream) arm() {
	ap := t.s.pe.Actor()
	if !t.sp.NoIdleFlush && !t.idle {
		// A control message at the end of the mailbox: it runs once the
		// PE has handled what was waiting, the closest a PE has to idle.
		t.idle = true
		ap.After(0, func(*actor.PE) { t.idle = false; t.flushAll() })
	}
	if t.period > 0 && !t.timer {
		t.timer = true
		ap.After(t.period, func(*actor.PE) {
			t.timer = false
			t.flushAll()
		})
	}
}

func (t *stream) flushAll() { t.sendBlocks(t.ch.FlushAll()) }

// sendBlocks sends blocks that left the channel, each as one message to its hop.
func (t *stream) sendBlocks(blocks []channel.Block[streamItem]) {
	for _, b := range blocks {
		t.s.pe.Actor().Release(len(b.Items))
		t.in.st.packets.Add(1)
		if err := t.ch.Done(b.Target, b.Buffer); err != nil {
			t.s.pe.Fail(fmt.Errorf("comlib: %v: %w", t.in, err))
		}
		m := streamMsg{Inst: t.in.id, Items: b.Items}
		if b.Target == t.s.pe.ID() {
			t.receive(m)
			continue
		}
		if err := chare.Send(t.s.ctx(), t.s.g.At(b.Target), (*branch).Stream, m); err != nil {
			t.s.pe.Fail(fmt.Errorf("comlib: %v: a buffer for PE %d: %w", t.in, b.Target, err))
		}
	}
}

// receive delivers what is for this PE and passes the rest on (the mesh's
// second hop).
func (t *stream) receive(m streamMsg) {
	me := t.s.pe.ID()
	ctx := t.s.ctx()
	for _, it := range m.Items {
		d := int(it.Dest)
		if d == me {
			if err := chare.Deliver(ctx, it.E.E); err != nil {
				t.s.pe.Fail(fmt.Errorf("comlib: %v: %w", t.in, err))
			}
			continue
		}
		if d < 0 || d >= t.s.pe.NumPEs() {
			t.s.pe.Fail(fmt.Errorf("comlib: %v: a streamed message for PE %d, which does not exist", t.in, d))
			continue
		}
		t.add(d, it.E, msgSize(it.E.E))
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
	part, err := core.PartOf(s.pe, h.Coll)
	if err != nil {
		return 0, err
	}
	return part.Locate(h.Index)
}
