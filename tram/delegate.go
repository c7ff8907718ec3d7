package tram

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/group"
)

// The aggregation interface (T28): a proxy delegated to a Delegate sends
// its entry-method invocations as TRAM items, so that existing send code
// is aggregated unchanged:
//
//	d, _ := tram.NewDelegate(self, tram.Options{FlushPeriod: time.Millisecond})
//	peers := cells.Delegate(d)
//	chare.Send(self, peers.At(i), (*Cell).Ghost, msg) // aggregated
//
// Element sends (to chares, group branches and array elements) are
// routed over the grid; broadcasts and multicasts go directly. Items wait
// in buffers until they fill or a periodic flush sends them, and count as
// work for quiescence detection meanwhile. Envelopes are handed over
// inside one process and msgpack-encoded (chare.WireEnvelope) between
// processes. The delegation itself stays in the process that made it: a
// proxy sent to another process arrives undelegated, and Aggregate marks
// an entry method in this process only.

// Delegate carries the sends of delegated proxies over TRAM.
type Delegate struct {
	job    *chare.Job // marks outlive jobs: sends of another job go directly
	g      group.Proxy[delegateBranch]
	items  atomic.Int64 // items carried
	frames atomic.Int64 // messages between branches
}

// DelegateStats counts what a delegate carried.
type DelegateStats struct {
	Items, Messages int64
}

// NewDelegate creates the group of branches behind a delegate.
func NewDelegate(from chare.Context, o Options) (*Delegate, error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return nil, chare.ErrNoContext
	}
	rt := pe.Job().Runtime()
	dims := o.Dims
	if dims == nil {
		nodes := rt.NumNodes()
		dims = []int{nodes, rt.NumPEs() / nodes}
	}
	if _, err := NewTopology(dims, rt.NumPEs()); err != nil {
		return nil, err
	}
	if o.Sizing == (Sizing{}) {
		o.Sizing = Sizing{BufferItems: 256}
	}
	if err := o.Sizing.Validate(); err != nil {
		return nil, err
	}
	d := &Delegate{job: pe.Job()}
	g, err := group.NewWith(from, (*delegateBranch).Init, delegateSetup{Dims: dims, Sizing: o.Sizing, Period: o.FlushPeriod, d: d})
	if err != nil {
		return nil, err
	}
	d.g = g
	return d, nil
}

// Stats returns what the delegate carried so far.
func (d *Delegate) Stats() DelegateStats {
	return DelegateStats{Items: d.items.Load(), Messages: d.frames.Load()}
}

// Send implements chare.Delegate: the envelope becomes an item for the PE
// of its target.
func (d *Delegate) Send(from chare.Context, e chare.Envelope) error {
	if pe := chare.PEOf(from); pe != nil && pe.Job() != d.job {
		return chare.Forward(from, e) // a mark left by an earlier job in this process
	}
	b := group.LocalBranch(from, d.g)
	if b == nil || b.agg == nil {
		return errors.New("tram: the delegate has no branch on this PE yet")
	}
	dest, err := destination(from, e)
	if err != nil {
		return err
	}
	out, err := b.agg.Insert(chare.WireEnvelope{E: e}, dest)
	if err != nil {
		return err
	}
	d.items.Add(1)
	b.Here().Actor().Hold(1)
	b.idle.busy = true
	b.handle(out)
	b.tick()
	return nil
}

// Broadcast implements chare.Delegate: broadcasts are not aggregated.
func (d *Delegate) Broadcast(from chare.Context, e chare.Envelope) error {
	return chare.Forward(from, e)
}

// Multicast implements chare.Delegate: multicasts are not aggregated.
func (d *Delegate) Multicast(from chare.Context, e chare.Envelope) error {
	return chare.Forward(from, e)
}

// destination finds the PE an element send goes to.
func destination(from chare.Context, e chare.Envelope) (int, error) {
	h := e.Header()
	switch h.Kind {
	case chare.KindChare, chare.KindBranch:
		if h.Index == nil {
			return h.PE, nil
		}
	}
	part, err := chare.PEOf(from).Part(h.Coll)
	if err != nil {
		return 0, err
	}
	return part.Locate(h.Index)
}

type delegateSetup struct {
	Dims   []int
	Sizing Sizing
	Period time.Duration
	d      *Delegate // in-process only, like the delegate itself
}

// delegateBranch is a delegate's part on one PE.
type delegateBranch struct {
	group.Branch[delegateBranch]
	d    *Delegate // in the creating process only
	agg  *Aggregator[chare.WireEnvelope]
	idle idleFlusher
}

func init() { chare.Register[delegateBranch]() }

// Init builds the branch's aggregator.
func (b *delegateBranch) Init(s delegateSetup) {
	topo, err := NewTopology(s.Dims, b.NumPEs())
	if err == nil {
		// Not Bare: a delegate's messages are envelopes alone (Flush.Final stays empty).
		b.agg, err = NewAggregator(Config[chare.WireEnvelope]{Topology: topo, PE: b.PE(), Sizing: s.Sizing})
	}
	if err != nil {
		b.Abort(err)
		return
	}
	b.d, b.idle.period = s.d, s.Period
}

// Recv routes a message of envelopes from a peer.
func (b *delegateBranch) Recv(items []Envelope[chare.WireEnvelope]) {
	out, err := b.agg.Route(items)
	if err != nil {
		b.Abort(err)
		return
	}
	b.idle.busy = true
	b.handle(out)
	b.tick()
}

func (b *delegateBranch) handle(out Output[chare.WireEnvelope]) {
	for _, f := range out.Flushes {
		b.send(f.To, f.Items)
	}
	for _, e := range out.Direct {
		b.send(e.Dest, []Envelope[chare.WireEnvelope]{e})
	}
	// The items for this PE are released together, as a streamer's
	// delivered run is: quiescence detection reads the counts between
	// messages, never during this loop (a threaded entry method it
	// delivers runs in a thread of its own).
	if len(out.Local) > 0 {
		b.Here().Actor().Release(len(out.Local))
	}
	for _, e := range out.Local {
		if err := chare.Deliver(b, e.Item.E); err != nil {
			b.Abort(err)
		}
	}
}

func (b *delegateBranch) send(to int, items []Envelope[chare.WireEnvelope]) {
	if b.d != nil { // nil in the other processes of the job
		b.d.frames.Add(1)
	}
	if err := chare.Send(b, b.ThisProxy().At(to), (*delegateBranch).Recv, items); err != nil {
		b.Abort(err)
	}
}

// tick keeps the periodic flush going while the branch holds items (T24).
func (b *delegateBranch) tick() {
	b.idle.arm(b.Here().Actor(), func() {
		for _, f := range b.agg.FlushAll() {
			b.send(f.To, f.Items)
		}
	}, func() bool { return b.agg.Stats().Buffered > 0 })
}

var _ chare.Delegate = (*Delegate)(nil)

// Aggregate tags an entry method for aggregation (the second interface of
// T28): from now on every send of it, through any proxy that is not
// delegated otherwise, travels over this delegate. Unaggregate undoes it.
func (d *Delegate) Aggregate(method any) error { return chare.MarkEntry(method, d) }

// Unaggregate stops routing an entry method's sends over the delegate.
func (d *Delegate) Unaggregate(method any) error { return chare.MarkEntry(method, nil) }
