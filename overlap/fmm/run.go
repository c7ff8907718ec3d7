package fmm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/chare/reducer"
	"github.com/charmgo/charm/group"
	"github.com/charmgo/charm/overlap"
	"github.com/charmgo/charm/tram"
	"github.com/charmgo/charm/tune"
)

// Item is x_j on its way to a PE that has cells with j in their list.
type Item struct {
	Src  int32 // the sending PE, for its credits
	Cell int32
	X    [V]float64
}

// The flow control of the paper's multi-buffers: a PE may have Window
// items per destination that the destination has not treated yet (its
// outgoing buffers are "full" beyond that); a destination acknowledges
// every ackEvery items it treats, and the rest at the end of its
// iteration. A receiver that tests rarely (a large p) thus holds its
// senders back: the cost of too large a p (E05).
const (
	Window   = 1024
	ackEvery = 64
)

// Part is a PE's share of the oct-tree: a group branch.
type Part struct {
	group.Branch[Part]
	plan  *Plan
	s     tram.Streamer[Part, Item]
	work  int
	chunk int

	x       map[int32]*[V]float64 // the local cells' data
	y       map[int32]*[V]float64 // their results
	last    map[int32][V]float64  // the results of the last iteration, for the check
	local   [][2]int32            // (i, j) both here: the local computations
	sends   [][]int32             // cells to send, by destination PE
	targets map[int32][]int32     // remote j → the local i with j in their lists
	expect  int                   // remote cells expected per iteration

	// per iteration
	next    int   // next local computation
	queued  []int // next cell to send, by destination
	arrived int
	done    bool // Done told to the streamer
	// across iterations
	pushed, acked []int // items sent to / acknowledged by each PE
	unacked       []int // items treated from each PE, not acknowledged yet

	tuner *overlap.Tuner
}

func init() {
	chare.Register[Part](chare.Threaded((*Part).Iterate))
	tram.Register((*Part).Recv)
}

// Config is what every branch is told once.
type Config struct {
	Size  Size
	S     tram.Streamer[Part, Item]
	Chunk int // items pushed per destination per push; 0: 64
	Ready chare.Callback
}

// New creates the parts and their streamer (TRAM at its default options)
// and waits until every part has its plan. It needs a threaded context.
func New(ctx chare.Context, s Size, o tram.Options) (group.Proxy[Part], tram.Streamer[Part, Item], error) {
	g, err := group.New[Part](ctx)
	if err != nil {
		return g, tram.Streamer[Part, Item]{}, err
	}
	st, err := tram.New(ctx, g, (*Part).Recv, o)
	if err != nil {
		return g, st, err
	}
	ready := chare.NewFuture[any](ctx)
	if err := chare.Send(ctx, g, (*Part).Setup, Config{Size: s, S: st, Ready: ready.Callback()}); err != nil {
		return g, st, err
	}
	_, err = ready.Get(ctx)
	return g, st, err
}

// Setup builds the plan and this PE's lists.
func (p *Part) Setup(c Config) {
	plan, err := NewPlan(c.Size, p.NumPEs())
	if err != nil {
		p.Abort(err)
		return
	}
	me, n := p.PE(), p.NumPEs()
	p.plan, p.s, p.chunk = plan, c.S, c.Chunk
	if p.chunk <= 0 {
		p.chunk = 64
	}
	p.x, p.y = map[int32]*[V]float64{}, map[int32]*[V]float64{}
	p.targets = map[int32][]int32{}
	p.sends = make([][]int32, n)
	for _, i := range plan.Local[me] {
		p.x[i], p.y[i] = new([V]float64), new([V]float64)
		var to []bool
		for _, j := range plan.Cells[i].Far {
			if o := plan.Cells[j].Owner; o == me {
				p.local = append(p.local, [2]int32{i, j})
			} else {
				p.targets[j] = append(p.targets[j], i)
				if to == nil {
					to = make([]bool, n)
				}
				if !to[o] { // far is symmetric: o needs x_i
					to[o] = true
					p.sends[o] = append(p.sends[o], i)
				}
			}
		}
	}
	p.expect = len(p.targets)
	p.queued = make([]int, n)
	p.pushed, p.acked, p.unacked = make([]int, n), make([]int, n), make([]int, n)
	_ = p.Contribute(nil, reducer.Nop, c.Ready)
}

// Mode is how an iteration chooses p.
type Mode int

const (
	Static Mode = iota + 1 // P as given
	Tuned                  // each PE's overlap.Tuner
	Fast                   // a tuned fast loop (E11)
)

// IterMsg starts an iteration on every part.
type IterMsg struct {
	It    int
	Mode  Mode
	P     float64 // Static
	Reset bool    // Tuned, Fast: start a new search
	// Scored, if positive, is the cost of the previous tuned iteration
	// for every PE alike (its wall time over the job): the tuner observes
	// it instead of each PE's own loop time (a cooperative score).
	Scored float64
	Work   int // evaluations of the transfer function per computation
	// Stall is the loop's overlap.Options.Stall (0: its default); for a
	// tuned search it is set when the search starts (Reset).
	Stall time.Duration
	Done  chare.Callback
}

// Result is the sum over the PEs of [loop seconds, p used, tests].
type Result = []float64

// Iterate runs one iteration's overlap loop (threaded).
func (p *Part) Iterate(m IterMsg) {
	p.work = max(m.Work, 1)
	for i, x := range p.x {
		*x = Input(m.It, int(i))
	}
	p.next, p.done = 0, false
	clear(p.queued)
	var st overlap.Stats
	var err error
	switch m.Mode {
	case Static:
		var l *overlap.Loop
		if l, err = overlap.NewLoop(m.P); err == nil {
			st, err = overlap.RunWith(p, l, p, overlap.Options{Stall: m.Stall})
		}
	case Tuned, Fast:
		if p.tuner == nil || m.Reset {
			p.tuner, err = overlap.NewTuner(overlap.TunerOptions{Fast: m.Mode == Fast, Stall: m.Stall})
		}
		switch {
		case err != nil:
		case m.Scored > 0 && !m.Reset:
			if err = p.tuner.Observe(m.Scored); err == nil {
				st, err = p.tuner.RunUnscored(p, p)
			}
		case m.Scored < 0: // the first of a cooperatively scored search
			st, err = p.tuner.RunUnscored(p, p)
		default:
			st, err = p.tuner.Run(p, p)
		}
	default:
		err = fmt.Errorf("fmm: unknown mode %d", m.Mode)
	}
	if err != nil {
		p.Abort(fmt.Errorf("fmm: iteration %d on PE %d: %w", m.It, p.PE(), err))
		return
	}
	for from, n := range p.unacked {
		if n > 0 {
			p.ack(from)
		}
	}
	// The next iteration's data may come before its Iterate: the
	// results and the arrivals start afresh here.
	p.last = make(map[int32][V]float64, len(p.y))
	for i, y := range p.y {
		p.last[i] = *y
		*y = [V]float64{}
	}
	p.arrived = 0
	_ = p.Contribute([]float64{st.Elapsed.Seconds(), st.P, float64(st.Tests), float64(st.Arrivals + st.Pushes)}, reducer.Sum[float64](), m.Done)
}

// Tuning is this PE's trajectory of p and seconds per iteration.
func (p *Part) Tuning() []tune.Point {
	if p.tuner == nil {
		return nil
	}
	return p.tuner.Trajectory()
}

// Arrived implements overlap.Body.
func (p *Part) Arrived() int { return p.arrived }

// Push implements overlap.Body: up to chunk items for each destination
// whose window has room.
func (p *Part) Push() (int, error) {
	moved, left := 0, false
	for d, cells := range p.sends {
		q := p.queued[d]
		if q == len(cells) {
			continue
		}
		room := min(Window-(p.pushed[d]-p.acked[d]), p.chunk, len(cells)-q)
		for k := 0; k < room; k++ {
			j := cells[q+k]
			if err := p.s.Insert(p, Item{Src: int32(p.PE()), Cell: j, X: *p.x[j]}, d); err != nil {
				return moved, err
			}
		}
		p.queued[d] += max(room, 0)
		p.pushed[d] += max(room, 0)
		moved += max(room, 0)
		left = left || p.queued[d] < len(cells)
	}
	if !left && !p.done {
		p.done = true
		if err := p.s.Done(p, 1); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// Compute implements overlap.Body: one local transfer.
func (p *Part) Compute() bool {
	if p.next == len(p.local) {
		return false
	}
	ij := p.local[p.next]
	p.next++
	p.plan.Transfer(p.y[ij[0]], ij[0], ij[1], p.x[ij[1]], p.work)
	return true
}

// Progress implements overlap.Progress: what the iteration still waits
// for when the loop stalls.
func (p *Part) Progress() string {
	left, sent, full := 0, 0, []string(nil)
	for d, cells := range p.sends {
		left += len(cells) - p.queued[d]
		sent += p.queued[d]
		if p.queued[d] < len(cells) && p.pushed[d]-p.acked[d] >= Window {
			full = append(full, fmt.Sprintf("PE %d (%d unacknowledged)", d, p.pushed[d]-p.acked[d]))
		}
	}
	s := fmt.Sprintf("%d of %d items arrived; %d pushed, %d left to push", p.arrived, p.expect, sent, left)
	if len(full) > 0 {
		s += "; window full towards " + strings.Join(full, ", ")
	}
	return s + fmt.Sprintf("; %d of %d local transfers done", p.next, len(p.local))
}

// Finished implements overlap.Body.
func (p *Part) Finished() bool { return p.done && p.arrived == p.expect }

// Recv treats an arrived x_j: the transfers to the local cells that have
// j in their lists.
func (p *Part) Recv(it Item) {
	ts, ok := p.targets[it.Cell]
	if !ok {
		p.Abort(fmt.Errorf("fmm: PE %d received cell %d, which none of its cells has in its list", p.PE(), it.Cell))
		return
	}
	for _, i := range ts {
		p.plan.Transfer(p.y[i], i, it.Cell, &it.X, p.work)
	}
	p.arrived++
	src := int(it.Src)
	if src < 0 || src >= p.NumPEs() {
		p.Abort(fmt.Errorf("fmm: an item from PE %d", src))
		return
	}
	if p.unacked[src]++; p.unacked[src] >= ackEvery {
		p.ack(src)
	}
}

type ackMsg struct {
	From, N int
}

func (p *Part) ack(to int) {
	n := p.unacked[to]
	p.unacked[to] = 0
	if err := chare.Send(p, p.ThisProxy().At(to), (*Part).Ack, ackMsg{From: p.PE(), N: n}); err != nil {
		p.Abort(err)
	}
}

// Ack frees window space towards a PE.
func (p *Part) Ack(m ackMsg) {
	if m.From < 0 || m.From >= len(p.acked) {
		p.Abort(fmt.Errorf("fmm: an acknowledgement from PE %d", m.From))
		return
	}
	p.acked[m.From] += m.N
}

// checkMsg asks each part to compare its last results with the
// sequential computation of iteration It.
type checkMsg struct {
	It   int
	Done chare.Callback
}

// Check contributes [cells checked, cells wrong, largest relative error].
func (p *Part) Check(m checkMsg) {
	ref := p.plan.Sequential(m.It) // every PE computes all: small problems only
	var wrong, worst float64
	for i, y := range p.last {
		for k := range y {
			d := math.Abs(y[k]-ref[i][k]) / math.Max(1, math.Abs(ref[i][k]))
			worst = math.Max(worst, d)
			if d > 1e-9 {
				wrong++
				break
			}
		}
	}
	_ = p.Contribute([]float64{float64(len(p.last)), wrong, worst}, reducer.Sum[float64](), m.Done)
}

// Runner drives iterations from the main function. Use it through a
// pointer or an addressable variable: it remembers an iteration that
// ended in an error with its results still to come.
type Runner struct {
	Ctx  chare.Context
	G    group.Proxy[Part]
	S    tram.Streamer[Part, Item]
	Size Size
	// Timeout bounds each Run and Check: a message of the parts or of
	// TRAM that never comes (a part whose loop does not end, a result or
	// completion lost) is then an error naming what is missing instead of
	// a hang. 0 means twice the longer of overlap.DefaultStall and the
	// iteration's Stall, so that a stalled loop reports itself (naming its
	// PE and items) first; set it for iterations longer than about 10 s,
	// whose tuner's stall bound grows beyond that. Negative: no bound.
	//
	// After a Timeout the iteration is not abandoned: its parts may still
	// run their loops and its TRAM step is still open, so the next Run or
	// Check first waits (within its own Timeout) for that iteration to end
	// — starting it on the parts if the step opened too late for Run to do
	// so — and takes its late results and completion, which it discards.
	// If they still do not come, that call fails too, naming the earlier
	// iteration, and nothing new is started.
	Timeout time.Duration

	late   *outstanding           // an iteration whose results are still to come
	checks []chare.Future[Result] // checks whose results are still to come
}

// outstanding is an iteration's futures and how far Run got with them:
// a future still held is one whose value has not been taken.
type outstanding struct {
	m                     IterMsg
	started, finished     chare.Future[any]
	res                   chare.Future[Result]
	haveStarted, sent     bool
	haveRes, haveFinished bool
	v                     Result
}

// drop forgets the iteration's futures, none of which will get a value
// (its step did not start).
func (o *outstanding) drop(ctx chare.Context) error {
	return errors.Join(o.started.Drop(ctx), o.finished.Drop(ctx), o.res.Drop(ctx))
}

// deadline is the end of a Run or Check whose loops have the stall bound
// stall.
func (r Runner) deadline(stall time.Duration) time.Time {
	d := r.Timeout
	switch {
	case d < 0:
		return time.Time{}
	case d == 0:
		d = 2 * max(overlap.DefaultStall, stall)
	}
	return time.Now().Add(d)
}

// await is f.GetBefore with an error that names what was awaited.
func await[T any](ctx chare.Context, f chare.Future[T], deadline time.Time, what string) (T, error) {
	v, err := f.GetBefore(ctx, deadline)
	if errors.Is(err, chare.ErrDeadlineExceeded) {
		err = fmt.Errorf("fmm: %s did not come by %s (Runner.Timeout): a part's loop is still running or a message was lost: %w",
			what, deadline.Format("15:04:05.000"), err)
	}
	return v, err
}

// Iteration is what Run reports for one iteration.
type Iteration struct {
	Wall  time.Duration // from the start of the TRAM step to the last result
	Loop  float64       // the mean over PEs of the loop's seconds
	P     float64       // the mean p used
	Tests float64       // the mean tests per PE
	// Moves is the mean per PE of the loop's turns that treated what had
	// arrived or pushed what was queued: each of them tested first.
	Moves float64
}

// Run runs one iteration: a TRAM completion step in which every part runs
// its loop. Each wait ends by the Runner's Timeout; an iteration that
// timed out before is brought to its end first (see Timeout).
func (r *Runner) Run(m IterMsg) (Iteration, error) {
	if err := r.settle(); err != nil {
		return Iteration{}, fmt.Errorf("fmm: iteration %d not started: %w", m.It, err)
	}
	n := float64(chare.PEOf(r.Ctx).NumPEs())
	o := &outstanding{m: m, started: chare.NewFuture[any](r.Ctx), finished: chare.NewFuture[any](r.Ctx), res: chare.NewFuture[Result](r.Ctx)}
	o.m.Done = o.res.Callback()
	t0 := time.Now()
	if err := r.S.Start(r.Ctx, tram.Step{Mode: tram.Completion, Producers: int(n), Started: o.started.Callback(), Finished: o.finished.Callback()}); err != nil {
		// The step did not begin (Started comes only from its Begin, and
		// Finished needs every producer's Done, which none will send), so
		// nothing will send to the iteration's futures: drop them rather
		// than leave them in PE 0's table.
		return Iteration{}, errors.Join(fmt.Errorf("fmm: iteration %d: starting TRAM's step: %w", m.It, err), o.drop(r.Ctx))
	}
	v, err := r.finish(o, r.deadline(m.Stall))
	if err != nil {
		return Iteration{}, err
	}
	if len(v) != 4 {
		return Iteration{}, errors.New("fmm: an iteration's result has the wrong length")
	}
	return Iteration{Wall: time.Since(t0), Loop: v[0] / n, P: v[1] / n, Tests: v[2] / n, Moves: v[3] / n}, nil
}

// finish takes an iteration's step from wherever it stands to its end: the
// start of the step, the parts' loops, their results and the step's
// completion. Until every future of the iteration is taken, it stays
// r.late: a wait that ends by the deadline, or in an error, leaves the
// rest for the next Run or Check.
func (r *Runner) finish(o *outstanding, deadline time.Time) (Result, error) {
	r.late = o
	it := o.m.It
	if !o.haveStarted {
		_, err := await(r.Ctx, o.started, deadline, fmt.Sprintf("iteration %d: the start of TRAM's step", it))
		if kept(err) {
			return nil, err
		}
		o.haveStarted = true
		if err != nil {
			return nil, err
		}
	}
	if !o.sent {
		// The step is open: until the parts run and say Done, it cannot
		// complete, so a late iteration is run rather than dropped.
		if err := chare.Send(r.Ctx, r.G, (*Part).Iterate, o.m); err != nil {
			return nil, err
		}
		o.sent = true
	}
	if !o.haveRes {
		v, err := await(r.Ctx, o.res, deadline, fmt.Sprintf("iteration %d: the parts' results (one per PE, summed)", it))
		if kept(err) {
			return nil, err
		}
		o.v, o.haveRes = v, true
		if err != nil {
			return nil, err // the step's completion is still to come
		}
	}
	if !o.haveFinished {
		_, err := await(r.Ctx, o.finished, deadline, fmt.Sprintf("iteration %d: the completion of TRAM's step", it))
		if kept(err) {
			return nil, err
		}
		o.haveFinished = true
		if err != nil {
			r.late = nil
			return nil, err
		}
	}
	r.late = nil
	return o.v, nil
}

// kept reports whether a wait that ended in err left its future's value
// to come (a deadline, or a wait outside a threaded context), rather than
// taking it.
func kept(err error) bool {
	return errors.Is(err, chare.ErrDeadlineExceeded) || errors.Is(err, chare.ErrNotThreaded)
}

// settle brings an iteration that timed out, and checks that did, to
// their ends and discards their results, within the Runner's Timeout.
func (r *Runner) settle() error {
	if o := r.late; o != nil {
		if _, err := r.finish(o, r.deadline(o.m.Stall)); err != nil {
			return fmt.Errorf("an earlier iteration (%d) that timed out has still not ended, and its parts may still run: %w", o.m.It, err)
		}
	}
	for len(r.checks) > 0 {
		if _, err := await(r.Ctx, r.checks[0], r.deadline(0), "the result of an earlier check that timed out"); err != nil {
			if !kept(err) {
				r.checks = r.checks[1:]
			}
			return err
		}
		r.checks = r.checks[1:]
	}
	return nil
}

// Check compares the last iteration, It, with the sequential computation
// and returns the cells checked and wrong, and the largest error. An
// iteration or check that timed out before is brought to its end first.
func (r *Runner) Check(it int) (cells, wrong int, worst float64, err error) {
	if err := r.settle(); err != nil {
		return 0, 0, 0, fmt.Errorf("fmm: the check of iteration %d not started: %w", it, err)
	}
	res := chare.NewFuture[Result](r.Ctx)
	if err := chare.Send(r.Ctx, r.G, (*Part).Check, checkMsg{It: it, Done: res.Callback()}); err != nil {
		return 0, 0, 0, errors.Join(fmt.Errorf("fmm: the check of iteration %d not sent: %w", it, err), res.Drop(r.Ctx))
	}
	v, err := await(r.Ctx, res, r.deadline(0), fmt.Sprintf("the check of iteration %d (one result per PE, summed)", it))
	if kept(err) {
		r.checks = append(r.checks, res)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	if len(v) != 3 {
		return 0, 0, 0, errors.New("fmm: a check's result has the wrong length")
	}
	return int(v[0]), int(v[1]), v[2], nil
}
