package comlib

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib/agree"
	"github.com/charmgo/charm/comlib/bracket"
	"github.com/charmgo/charm/comlib/route"
	"github.com/charmgo/charm/internal/core"
)

// EachToMany on one PE: the runtime around package bracket's machines. It
// turns the machine's effects into messages between manager branches and
// envelopes sent, forwarded or delivered.

type wenv = core.WireEnvelope

// e2mPacket is a stage packet between branches.
type e2mPacket struct {
	Inst uint32
	P    bracket.Packet[wenv]
}

// ctlMsg is the recovery protocol between the PEs and PE 0.
type ctlMsg struct {
	Inst    uint32
	Note    *bracket.Note   `msgpack:",omitempty"`
	Report  *bracket.Report `msgpack:",omitempty"`
	Enter   *bracket.Enter  `msgpack:",omitempty"`
	List    *bracket.List   `msgpack:",omitempty"`
	Ack     int             `msgpack:",omitempty"`
	Release int             `msgpack:",omitempty"`
	// Tune: the agreement on ω (package agree). PE 0 announces a Range;
	// PEs report their exchanges (Measures, a segment's at once) and ask
	// for a segment (Need).
	Range    *agree.Range `msgpack:",omitempty"`
	Measures reports      `msgpack:",omitempty"`
	Need     *int         `msgpack:",omitempty"`
}

type e2m struct {
	s     *state
	in    *Instance
	sp    EachToManySpec
	m     *bracket.PE[wenv]
	root  *bracket.Root // PE 0
	keys  map[any]bracket.Key
	ikeys []bracket.Key // the keys of int indices below maxIntKeys, by index ("" until made)
	errAt time.Time     // when this PE entered error mode
	debug bool
	dests []bool // by PE: a packet went there
	// free holds local packets this PE received and handled, for its own
	// packets to reuse: in an exchange a PE sends about as many as it
	// receives, and a packet changes owner only through a mailbox.
	free  []*localPacket
	ndest int  // how many are true
	ctl   bool // applying the effects of a control message

	// Tune: every PE follows the plan of ω; PE 0 decides it.
	fol    *agree.Follower
	bat    *agree.Batcher
	dec    *agree.Decider
	starts map[int]time.Time // iteration → when its exchange started here
}

func newE2M(s *state, in *Instance, sp EachToManySpec) (*e2m, error) {
	if _, err := route.New(sp.Router, 1, sp.routeOptions()); err != nil {
		return nil, err
	}
	e := &e2m{s: s, in: in, sp: sp, keys: map[any]bracket.Key{}, dests: make([]bool, s.pe.NumPEs())}
	// In a job of one process a one-hop exchange sends each message
	// straight, the way Direct sends it (one post to the destination's
	// mailbox, what a packet would cost), instead of in packets. Not
	// "every participant in this process": the answer must not change
	// while the instance lives (bracket.Options.Straight).
	opt := bracket.Options{CountOnly: sp.CountOnly, Name: e.keyName, Straight: s.pe.Actor().Runtime().NumNodes() == 1}
	if sp.Tune {
		if err := e.startTuning(); err != nil {
			return nil, err
		}
		opt.Variant = e.fol.Value
	}
	e.m = bracket.NewPE[wenv](s.pe.ID(), opt, func(n, v int) (bracket.Router, error) {
		o := sp.routeOptions()
		if v > 0 { // a tuned ω (above n−1 it acts as n−1)
			o.Omega = v
		}
		return route.New(sp.Router, n, o)
	})
	if s.pe.ID() == 0 {
		e.root = bracket.NewRoot(s.pe.NumPEs())
	}
	_, e.debug = s.pe.Job().Flag(FlagDebug)
	in.st.setLocalE2M(s.pe.ID(), s.pe.NumPEs(), e)
	return e, nil
}

// keyName names a source by its index, for error messages.
func (e *e2m) keyName(k bracket.Key) string {
	if c, err := core.JobCollection(e.s.pe.Job(), e.sp.Sources); err == nil && c.DecodeIndex != nil {
		if i, err := c.DecodeIndex([]byte(k)); err == nil {
			return fmt.Sprintf("element %v", i)
		}
	}
	return fmt.Sprintf("%q", string(k))
}

// maxIntKeys bounds the int indices whose keys e2m keeps in a slice (a
// lookup without hashing an interface); larger ones use the map. The slice
// grows at most to twice its length (plus 64) at a time, so that one large
// index does not make room for every smaller one: such an index uses the
// map too.
const maxIntKeys = 1 << 16

// key returns a member index as a bracket key.
func (e *e2m) key(i any) (bracket.Key, error) {
	if n, ok := i.(int); ok && n >= 0 && n < maxIntKeys && n < 2*len(e.ikeys)+64 {
		if n < len(e.ikeys) && e.ikeys[n] != "" {
			return e.ikeys[n], nil
		}
		k, err := core.IndexKey(i)
		if err != nil || k == "" {
			return bracket.Key(k), err
		}
		if n >= len(e.ikeys) {
			e.ikeys = append(e.ikeys, make([]bracket.Key, n+1-len(e.ikeys))...)
		}
		e.ikeys[n] = bracket.Key(k)
		return bracket.Key(k), nil
	}
	switch i.(type) {
	case int, int32, int64, uint32, [2]int, [3]int, string:
		if k, ok := e.keys[i]; ok {
			return k, nil
		}
		k, err := core.IndexKey(i)
		e.keys[i] = bracket.Key(k)
		return bracket.Key(k), err
	}
	k, err := core.IndexKey(i)
	return bracket.Key(k), err
}

// source returns the caller's key, or false if it is not one of the
// strategy's sources.
func (e *e2m) source(o op) (bracket.Key, bool, error) {
	if !o.isObj || o.coll != e.sp.Sources {
		return "", false, nil
	}
	k, err := e.key(o.index)
	return k, err == nil, err
}

func (e *e2m) name(o op) string {
	if o.isObj {
		return fmt.Sprintf("%v of %v", o.index, o.coll)
	}
	return "a PE's own context"
}

func (e *e2m) begin(o op) error {
	k, ok, err := e.source(o)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("comlib: %v: BeginIteration from %s, which is not one of its sources (%v)", e.in, e.name(o), e.sp.Sources)
	}
	fx, err := e.m.Begin(k, o.iter)
	if err != nil {
		return fmt.Errorf("comlib: %v: element %v: %w", e.in, o.index, err)
	}
	e.apply(&fx)
	return nil
}

func (e *e2m) end(o op) error {
	k, ok, err := e.source(o)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("comlib: %v: EndIteration from %s, which is not one of its sources (%v)", e.in, e.name(o), e.sp.Sources)
	}
	fx, err := e.m.End(k)
	if err != nil {
		err = fmt.Errorf("comlib: %v: element %v: %w", e.in, o.index, err)
		// The PE where the element began waits for it: end the job rather
		// than hang.
		e.s.pe.Fail(err)
		return err
	}
	e.in.st.iterations.Add(1)
	e.apply(&fx)
	return nil
}

// destination returns the PE an envelope goes to and, for a message to
// one of the sources, its key.
func (e *e2m) destination(env chare.Envelope) (int, bracket.Key, error) {
	pe, err := destinationPE(e.s, env)
	if err != nil {
		return 0, "", err
	}
	h := env.Header()
	var dk bracket.Key
	if h.Coll == e.sp.Sources {
		if dk, err = e.key(h.Index); err != nil {
			return 0, "", err
		}
	}
	return pe, dk, nil
}

func (e *e2m) send(o op) error {
	k, ok, err := e.source(o)
	if err != nil {
		return err
	}
	if !ok { // not a source: not bracketed, so not combined
		e.in.st.direct.Add(1)
		return chare.Forward(e.s.ctx(), o.env)
	}
	if e.m.Straight(k) {
		e.in.st.straight.Add(1) // as sent, as direct is: Stats read mid-iteration sees it
		return chare.Forward(e.s.ctx(), o.env)
	}
	dest, dk, err := e.destination(o.env)
	if err != nil {
		return err
	}
	fx, err := e.m.Send(k, dest, dk, wenv{E: o.env})
	if err != nil {
		return fmt.Errorf("comlib: %v: element %v: %w", e.in, o.index, err)
	}
	e.s.pe.Actor().Hold(1) // in the machine until it leaves
	e.apply(&fx)
	return nil
}

// broadcast sends one copy to every member through the exchange: a
// group's branches each get one; an array broadcast goes directly (its
// members' places are the location manager's business).
func (e *e2m) broadcast(o op) error {
	h := o.env.Header()
	if h.Kind == chare.KindGroupAll && h.Index == nil {
		for pe := 0; pe < e.s.pe.NumPEs(); pe++ {
			if err := e.send(op{kind: opSend, env: core.BranchCopy(o.env, pe), coll: o.coll, index: o.index, isObj: o.isObj}); err != nil {
				return err
			}
		}
		return nil
	}
	e.in.st.direct.Add(1)
	return chare.Forward(e.s.ctx(), o.env)
}

// multicast sends one copy per section member through the exchange (the
// same message to many).
func (e *e2m) multicast(o op) error {
	h := o.env.Header()
	if h.Section == nil {
		return chare.Forward(e.s.ctx(), o.env)
	}
	for _, idx := range h.Section.Members {
		if err := e.send(op{kind: opSend, env: core.ElementCopy(o.env, idx), coll: o.coll, index: o.index, isObj: o.isObj}); err != nil {
			return err
		}
	}
	return nil
}

// apply carries out a machine's effects.
func (e *e2m) apply(fx *bracket.Effects[wenv]) {
	if fx.Ack == 0 && len(fx.Packets)+len(fx.Direct)+len(fx.Deliver)+len(fx.Runs)+len(fx.Notes)+len(fx.Reports)+len(fx.Errors)+
		len(fx.Exchanges)+len(fx.Finished)+len(fx.Wait) == 0 && e.errAt.IsZero() && !e.ctl {
		return // most sends: queued until the exchange
	}
	e.applyAll(fx)
}

func (e *e2m) applyAll(fx *bracket.Effects[wenv]) {
	s, ctx, st := e.s, e.s.ctx(), e.in.st
	if e.fol != nil {
		e.tuneStarts(fx)
	}
	if len(fx.Packets) > 0 {
		st.packets.Add(int64(len(fx.Packets)))
	}
	for i := range fx.Packets {
		pk := fx.Packets[i]
		s.pe.Actor().Release(len(pk.Msgs))
		if pk.To >= 0 && pk.To < len(e.dests) && !e.dests[pk.To] {
			e.dests[pk.To] = true
			e.ndest++
		}
		if pk.To != s.pe.ID() && s.pe.Actor().Runtime().IsLocal(pk.To) {
			var lp *localPacket
			if n := len(e.free); n > 0 {
				lp, e.free = e.free[n-1], e.free[:n-1]
			} else {
				lp = new(localPacket)
			}
			lp.inst, lp.pk, lp.to = e.in.id, pk, st.localE2M(pk.To)
			s.pe.Actor().Send(pk.To, lp)
			continue
		}
		if err := chare.Send(ctx, s.g.At(pk.To), (*branch).E2M, e2mPacket{Inst: e.in.id, P: pk}); err != nil {
			s.pe.Fail(fmt.Errorf("comlib: %v: a packet to PE %d: %w", e.in, pk.To, err))
		}
	}
	for _, m := range fx.Direct {
		s.pe.Actor().Release(1)
		st.direct.Add(1)
		if err := chare.Forward(ctx, m.Payload.E); err != nil {
			s.pe.Fail(fmt.Errorf("comlib: %v: %w", e.in, err))
		}
	}
	for i := range fx.Notes {
		if e.debug {
			slog.Info("comlib: error mode", "instance", e.in.id, "pe", s.pe.ID(), "iteration", fx.Notes[i].Iter, "reason", fx.Notes[i].Reason)
		}
		e.toRoot(ctlMsg{Inst: e.in.id, Note: &fx.Notes[i]})
	}
	for i := range fx.Reports {
		e.toRoot(ctlMsg{Inst: e.in.id, Report: &fx.Reports[i]})
	}
	if fx.Ack != 0 {
		e.toRoot(ctlMsg{Inst: e.in.id, Ack: fx.Ack})
	}
	for _, n := range fx.Exchanges {
		st.optimized.Add(1)
		st.exchanged(n, s.pe.ID())
		st.dests.Store(int64(e.ndest))
	}
	if e.fol != nil {
		e.tuneEffects(fx)
	}
	for _, err := range fx.Errors {
		s.pe.Fail(fmt.Errorf("comlib: %v: %w", e.in, err))
	}
	// Error mode starts with a note (this PE found it) or an Enter, and
	// ends with a Release: walk the machine's iterations only then.
	if len(fx.Notes) == 0 && e.errAt.IsZero() && !e.ctl {
		goto deliver
	}
	switch inErr := e.m.InError(); {
	case inErr && e.errAt.IsZero():
		e.errAt = time.Now()
		s.pe.TraceInstant("comlib", "comlib error mode", "instance", fmt.Sprint(e.in))
	case !inErr && !e.errAt.IsZero():
		st.errorNanos.Add(int64(time.Since(e.errAt)))
		e.errAt = time.Time{}
		s.pe.TraceInstant("comlib", "comlib error mode ends", "instance", fmt.Sprint(e.in))
	}
deliver:
	// Last: a delivery runs the entry method at once, which may call the
	// strategy again.
	for _, m := range fx.Deliver {
		s.pe.Actor().Release(1)
		if err := chare.Deliver(ctx, m.Payload.E); err != nil {
			s.pe.Fail(fmt.Errorf("comlib: %v: %w", e.in, err))
		}
	}
	for _, ms := range fx.Runs {
		for i := range ms {
			s.pe.Actor().Release(1)
			if err := chare.Deliver(ctx, ms[i].Payload.E); err != nil {
				s.pe.Fail(fmt.Errorf("comlib: %v: %w", e.in, err))
			}
		}
	}
	e.m.Recycle(*fx) // the packets were sent by value, Notes and Reports stay ours
}

func (e *e2m) toRoot(m ctlMsg) {
	if err := chare.Send(e.s.ctx(), e.s.g.At(0), (*branch).Control, m); err != nil {
		e.s.pe.Fail(fmt.Errorf("comlib: %v: to PE 0: %w", e.in, err))
	}
}

func (e *e2m) broadcastCtl(m ctlMsg) {
	if err := chare.Send(e.s.ctx(), e.s.g, (*branch).Control, m); err != nil {
		e.s.pe.Fail(fmt.Errorf("comlib: %v: broadcast: %w", e.in, err))
	}
}

// packet handles a stage packet from another PE.
func (e *e2m) packet(pk bracket.Packet[wenv]) {
	e.s.pe.Actor().Hold(len(pk.Msgs))
	fx := e.m.Packet(pk)
	e.apply(&fx)
}

// control handles the recovery protocol.
func (e *e2m) control(m ctlMsg) error {
	switch {
	case m.Note != nil:
		if e.root == nil {
			return fmt.Errorf("a note reached PE %d, not PE 0", e.s.pe.ID())
		}
		need, err := e.sourceCount()
		if err != nil {
			return err
		}
		if en := e.root.Note(*m.Note, need); en != nil {
			if e.debug {
				slog.Info("comlib: recovery", "instance", e.in.id, "iteration", en.Iter, "step", en.Step, "sources", need)
			}
			e.broadcastCtl(ctlMsg{Inst: e.in.id, Enter: en})
			if l := e.root.Ready(); l != nil { // no sources at all
				e.broadcastCtl(ctlMsg{Inst: e.in.id, List: l})
			}
		}
	case m.Report != nil:
		if e.root == nil {
			return fmt.Errorf("a report reached PE %d, not PE 0", e.s.pe.ID())
		}
		l, err := e.root.Report(*m.Report)
		if err != nil {
			return err
		}
		if l != nil {
			e.broadcastCtl(ctlMsg{Inst: e.in.id, List: l})
		}
	case m.Ack != 0:
		if e.root == nil {
			return fmt.Errorf("an acknowledgement reached PE %d, not PE 0", e.s.pe.ID())
		}
		if step, ok := e.root.Ack(m.Ack); ok {
			e.in.st.recoveries.Add(1)
			it, _ := e.root.Last()
			e.in.st.recoveredAt(it)
			if e.debug {
				slog.Info("comlib: recovered", "instance", e.in.id, "iteration", it, "stats", e.in.Stats().String())
			}
			e.broadcastCtl(ctlMsg{Inst: e.in.id, Release: step})
		}
	case m.Enter != nil:
		e.ctl = true
		fx := e.m.Enter(*m.Enter)
		e.apply(&fx)
		e.ctl = false
	case m.List != nil:
		fx, err := e.m.NewList(m.List)
		if err != nil {
			return err
		}
		e.apply(&fx)
	case m.Release != 0:
		e.ctl = true
		fx := e.m.Release(m.Release)
		e.apply(&fx)
		e.ctl = false
	case m.Range != nil || len(m.Measures) > 0 || m.Need != nil:
		return e.tuneControl(m)
	}
	return nil
}

// sourceCount is, on PE 0, how many sources there are now.
func (e *e2m) sourceCount() (int, error) {
	c, err := core.JobCollection(e.s.pe.Job(), e.sp.Sources)
	if err != nil {
		return 0, fmt.Errorf("the sources %v: %w", e.sp.Sources, err)
	}
	if c.Count == nil {
		return len(c.Tree), nil
	}
	n, ok := c.Count(e.s.pe, 1<<62)
	if !ok {
		return 0, fmt.Errorf("the number of sources in %v is not known on PE 0", e.sp.Sources)
	}
	return n, nil
}

// localPacket is a stage packet to a PE of this process, posted to its
// mailbox as it is: no envelope and no entry method, as Charm++'s comlib
// sends its packets as Converse messages below the entry methods. Packets
// to other processes are E2M messages.
type localPacket struct {
	inst uint32
	pk   bracket.Packet[wenv]
	to   *e2m // the receiver's strategy, if it was made when the packet left
}

// Count implements actor.Multi: a packet is one message.
func (m *localPacket) Count() int { return 1 }

// Release implements actor.Releaser: the receiver has handled the packet
// (its messages were copied out or sent on) and holds it no longer. It
// is called on the receiving PE and joins that PE's free packets, unless
// Deliver found the packet on another PE than its receiver's (then to is
// nil and the packet is left to the collector).
func (m *localPacket) Release() {
	to := m.to
	*m = localPacket{}
	if to != nil && len(to.free) < maxFreePackets {
		to.free = append(to.free, m)
	}
}

// maxFreePackets bounds the local packets a PE keeps for reuse.
const maxFreePackets = 256

// Deliver implements actor.Message on the receiving PE.
func (m *localPacket) Deliver(ap *actor.PE) {
	if to := m.to; to != nil && to.s.pe.Actor() == ap && to.in.id == m.inst {
		to.packet(m.pk)
		return
	}
	m.to = nil // Release must not touch another PE's free packets
	pe := core.PEForMessage(ap, "comlib", m)
	if pe == nil {
		return
	}
	s := stateOf(pe)
	if s.b == nil {
		pe.Fail(fmt.Errorf("comlib: %s reached PE %d before its manager branch", m.Describe(), ap.ID()))
		return
	}
	s.b.E2M(e2mPacket{Inst: m.inst, P: m.pk})
}

// Describe names the packet in an error report.
func (m *localPacket) Describe() string {
	return fmt.Sprintf("a stage packet of comlib instance %d from PE %d (iteration %d, stage %d)", m.inst, m.pk.From, m.pk.Iter, m.pk.Stage)
}

// E2M receives a stage packet.
func (b *branch) E2M(m e2mPacket) {
	strat, err := b.st.strategyOf(m.Inst)
	if err == nil {
		if x, ok := strat.(*e2m); ok {
			x.packet(m.P)
			return
		}
		err = fmt.Errorf("comlib: a stage packet for instance %d, which is not each-to-many", m.Inst)
	}
	b.Abort(err)
}

// Control receives the recovery protocol's messages.
func (b *branch) Control(m ctlMsg) {
	strat, err := b.st.strategyOf(m.Inst)
	if err == nil {
		x, ok := strat.(*e2m)
		if !ok {
			err = fmt.Errorf("comlib: a recovery message for instance %d, which is not each-to-many", m.Inst)
		} else if err = x.control(m); err != nil {
			err = fmt.Errorf("comlib: instance %d on PE %d: %w", m.Inst, b.PE(), err)
		}
	}
	if err != nil {
		b.Abort(err)
	}
}
