package actor

import (
	"fmt"
	"time"
)

// Detection waves. The root (PE 0) sends a wave down the spanning tree; each
// PE takes a snapshot of its counters when the wave reaches it, and the sums
// come back up. Quiescence uses (created, processed); completion detection
// uses (produced, consumed, producers done) of one detector.

type waveKind uint8

const (
	waveQD waveKind = iota + 1
	waveCD
)

type waveDown struct {
	Kind waveKind
	ID   uint64 // detector, for waveCD
	Seq  uint64
}

type waveUp struct {
	Kind waveKind
	ID   uint64
	Seq  uint64
	Sums [3]int64
}

type waveAcc struct {
	seq  uint64
	need int
	sums [3]int64
}

func (waveDown) system() {}
func (waveUp) system()   {}

func (w waveDown) Deliver(pe *PE) {
	children := pe.rt.tree.Children(pe.id)
	id := w.ID
	if w.Kind == waveQD {
		id = w.Seq // a QD wave has no detector: its PE remembers the wave
	}
	acc := &waveAcc{seq: w.Seq, need: len(children), sums: pe.waveCounters(w.Kind, id)}
	pe.qd.acc[waveKey{w.Kind, w.ID}] = acc
	for _, c := range children {
		pe.sendSys(c, w)
	}
	pe.waveMaybeUp(w.Kind, w.ID, acc)
}

func (w waveUp) Deliver(pe *PE) {
	acc := pe.qd.acc[waveKey{w.Kind, w.ID}]
	if acc == nil || acc.seq != w.Seq {
		pe.rt.Abort(fmt.Errorf("actor: detection wave %d of kind %d out of step on PE %d", w.Seq, w.Kind, pe.id))
		return
	}
	for i := range acc.sums {
		acc.sums[i] += w.Sums[i]
	}
	acc.need--
	pe.waveMaybeUp(w.Kind, w.ID, acc)
}

type waveKey struct {
	kind waveKind
	id   uint64
}

func (pe *PE) waveMaybeUp(kind waveKind, id uint64, acc *waveAcc) {
	if acc.need > 0 {
		return
	}
	delete(pe.qd.acc, waveKey{kind, id})
	if parent := pe.rt.tree.Parent(pe.id); parent >= 0 {
		pe.sendSys(parent, waveUp{Kind: kind, ID: id, Seq: acc.seq, Sums: acc.sums})
		return
	}
	switch kind {
	case waveQD:
		pe.qdWaveDone(acc.sums)
	case waveCD:
		pe.cdWaveDone(id, acc.sums)
	}
}

func (pe *PE) waveCounters(kind waveKind, id uint64) [3]int64 {
	if kind == waveQD {
		pe.qd.armed, pe.qd.armedSeq, pe.qd.snap = true, id, [2]int64{pe.created, pe.processed}
		return [3]int64{pe.created, pe.processed}
	}
	c := pe.cd(id)
	c.poked = false // a later Consume pokes again
	return [3]int64{c.produced, c.consumed, c.done}
}

// When waves run (the contract of quiescence detection's timing).
//
// Quiescence is declared only when two consecutive waves both find
// created == processed summed over the PEs, with the same sums: a message
// in flight or held (Hold) between them keeps the sums apart or moves
// them. What follows changes when waves start, never that rule.
//
//   - A request starts a wave at once if none is running.
//   - After a wave that saw work, the root waits backoff(n) before the
//     next (n waves in a row that saw work): PEs that stay busy pay at
//     most one wave per 2 ms.
//   - After a wave that found the sums equal and new, the confirming wave
//     starts at once.
//   - Poke: a PE whose mailbox runs empty, having sent or handled counted
//     messages since the last wave reached it, tells the root (once a
//     wave). The root then starts the next wave at once instead of at the
//     end of its back-off, if its budget allows (a token per millisecond,
//     four kept; otherwise when the next token comes). So the end of a
//     burst of work is seen about two waves after the last PE goes idle,
//     and a job whose PEs idle often while quiescence is awaited runs
//     about one poked wave a millisecond, besides the back-off's.
//   - A PE that handled nothing but waves does not poke: a job that waits
//     with quiescence requested (held work, say) runs waves at the
//     back-off's pace only, and a job without a request runs none.

// backoff is how long the root waits before the next wave after n
// consecutive waves that saw activity: none for the first two, then
// doubling up to 2 ms.
func backoff(n int) time.Duration {
	if n < 2 {
		return 0
	}
	d := 50 * time.Microsecond << min(n-2, 6)
	return min(d, 2*time.Millisecond)
}

// Pokes start waves at once, from a budget: a token every pokeEvery, at
// most pokeBurst kept. A job whose PEs go idle often while quiescence is
// awaited runs at most one poked wave per pokeEvery in the long run; the
// end of a burst of work, after a quiet stretch, finds tokens left.
const (
	pokeEvery = time.Millisecond
	pokeBurst = 4
)

// pokeBudget returns the tokens held after elapsed more has passed since
// the count was tokens, and how long from now until one is held (0 when
// one is).
func pokeBudget(tokens float64, elapsed time.Duration) (float64, time.Duration) {
	tokens = min(pokeBurst, tokens+float64(elapsed)/float64(pokeEvery))
	if tokens >= 1 {
		return tokens, 0
	}
	return tokens, time.Duration((1 - tokens) * float64(pokeEvery))
}

// After runs fn on pe, as a control message, once d has passed (at once
// for 0), unless the job ended meanwhile. Any goroutine may call it.
func (pe *PE) After(d time.Duration, fn func(pe *PE)) {
	if d == 0 {
		pe.post(extMsg{funcMsg(fn)})
		return
	}
	pe.AfterTimer(d, fn)
}

// AfterTimer is After for a d > 0 that the caller may call off: Stop on
// the timer keeps fn from being posted, if it has not been yet. A wait
// with a deadline stops its timer when it ends, so that a PE waiting
// often with a distant deadline does not keep a live timer per wait.
func (pe *PE) AfterTimer(d time.Duration, fn func(pe *PE)) *time.Timer {
	return time.AfterFunc(d, func() {
		if !pe.rt.Stopped() {
			pe.post(extMsg{funcMsg(fn)})
		}
	})
}

// ---- quiescence ----

type qdState struct {
	acc     map[waveKey]*waveAcc
	waiting map[uint64]func(pe *PE) // requests made on this PE
	nextReq uint64

	// every PE: the last wave seen, the counts given to it, and whether
	// this PE may still poke the root about it (see qdPoke).
	armed    bool
	armedSeq uint64
	snap     [2]int64

	// root only
	active    bool
	requests  []qdReq
	seq       uint64
	prev      [2]int64
	prevValid bool
	failures  int
	inWave    bool    // wave seq is out
	poked     bool    // a poke came while wave seq was out
	tokens    float64 // the poke budget (pokeBudget), as of tokensAt
	tokensAt  time.Time
	due       time.Time   // when the next wave is to start
	timer     *time.Timer // the back-off's timer, if one
}

type qdReq struct {
	PE int
	ID uint64
}

func (qdReq) system() {}
func (r qdReq) Deliver(root *PE) {
	root.qd.requests = append(root.qd.requests, r)
	if !root.qd.active {
		root.qd.active, root.qd.prevValid, root.qd.failures, root.qd.poked = true, false, 0, false
		root.qdWave()
	}
}

type qdFire struct{ ID uint64 }

func (qdFire) system() {}
func (f qdFire) Deliver(pe *PE) {
	fn := pe.qd.waiting[f.ID]
	delete(pe.qd.waiting, f.ID)
	if fn != nil {
		fn(pe)
	}
}

// DetectQuiescence runs fn on pe once no PE is processing a message and no
// counted message is in flight. It must be called on pe.
func (pe *PE) DetectQuiescence(fn func(pe *PE)) {
	if pe.qd.waiting == nil {
		pe.qd.waiting = map[uint64]func(*PE){}
	}
	pe.qd.nextReq++
	pe.qd.waiting[pe.qd.nextReq] = fn
	pe.sendSys(pe.rt.tree.Root, qdReq{PE: pe.id, ID: pe.qd.nextReq})
}

func (pe *PE) qdWave() {
	pe.qd.seq++
	pe.qd.inWave = true
	waveDown{Kind: waveQD, Seq: pe.qd.seq}.Deliver(pe)
}

// qdWaveAfter starts the next wave once d has passed, unless another
// started it meanwhile (a poke brings a wave forward by scheduling it
// again).
func (pe *PE) qdWaveAfter(d time.Duration) {
	q := &pe.qd
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	seq := q.seq
	fn := func(pe *PE) {
		if pe.qd.active && !pe.qd.inWave && pe.qd.seq == seq {
			pe.qd.timer = nil
			pe.qdWave()
		}
	}
	q.due = time.Now().Add(d)
	if d <= 0 {
		pe.After(0, fn)
		return
	}
	q.timer = pe.AfterTimer(d, fn)
}

func (pe *PE) qdWaveDone(sums [3]int64) {
	q := &pe.qd
	q.inWave = false
	cur := [2]int64{sums[0], sums[1]}
	if cur[0] == cur[1] && q.prevValid && cur == q.prev {
		reqs := q.requests
		q.requests, q.active = nil, false
		for _, r := range reqs {
			pe.sendSys(r.PE, qdFire{ID: r.ID})
		}
		return
	}
	if cur[0] == cur[1] && (!q.prevValid || cur != q.prev) {
		q.failures = 0 // looks idle: confirm at once
	} else {
		q.failures++
	}
	q.prev, q.prevValid = cur, true
	d := backoff(q.failures)
	if q.poked && d > 0 {
		d = min(d, pe.qdTakeToken(time.Now()))
	}
	q.poked = false
	pe.qdWaveAfter(d)
}

// qdTakeToken spends a token of the poke budget and returns 0, or returns
// how long until there is one.
func (pe *PE) qdTakeToken(now time.Time) time.Duration {
	q := &pe.qd
	if q.tokensAt.IsZero() {
		q.tokens, q.tokensAt = pokeBurst, now
	}
	var wait time.Duration
	q.tokens, wait = pokeBudget(q.tokens, now.Sub(q.tokensAt))
	q.tokensAt = now
	if wait == 0 {
		q.tokens--
	}
	return wait
}

// qdPoke tells the root that a PE went idle after handling counted
// messages since wave Seq reached it: the state wave Seq saw may be
// over, so the next wave need not wait for the whole back-off.
type qdPoke struct{ Seq uint64 }

func (qdPoke) system() {}
func (p qdPoke) Deliver(root *PE) {
	q := &root.qd
	if !q.active || p.Seq != q.seq {
		return // stale: a later wave has seen this PE since
	}
	if q.inWave {
		q.poked = true // wave Seq may have missed that work
		return
	}
	now := time.Now()
	due := q.due.Sub(now)
	if due <= 0 {
		return // the wave is already on its way
	}
	if d := root.qdTakeToken(now); d < due {
		root.qdWaveAfter(d)
	}
}

// shouldPoke says whether a PE going idle pokes the root: it may still
// poke about the last wave it saw (armed), and its counts moved since
// the snapshot it gave that wave.
func shouldPoke(armed bool, snap [2]int64, created, processed int64) bool {
	return armed && (created != snap[0] || processed != snap[1])
}

// idle runs on pe's goroutine when its mailbox is found empty. A PE that
// has handled counted messages since the last quiescence wave reached it
// pokes the root, once a wave; one that did nothing (an idle job, or one
// whose only messages are the waves) stays quiet.
func (pe *PE) idle() {
	q := &pe.qd
	if !shouldPoke(q.armed, q.snap, pe.created, pe.processed) || pe.rt.stopped.Load() {
		return
	}
	q.armed = false
	pe.sendSys(pe.rt.tree.Root, qdPoke{Seq: q.armedSeq})
	pe.flush()
}

// Hold counts n units of work that are not messages (items waiting in a
// TRAM buffer, say) as created, so that quiescence is not declared while
// they wait; Release counts them done. Call both on pe.
func (pe *PE) Hold(n int) { pe.created += int64(n) }

// Release counts n units held with Hold as done.
func (pe *PE) Release(n int) { pe.processed += int64(n) }
