package comlib

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/comlib/schedule"
	"github.com/charmgo/charm/group"
)

// Calibration: the parameters of the complete-exchange cost model (package comlib/schedule)
// measured on the running system, between two PEs, over a grid of packet sizes.
//
// What is timed, for each size (each figure the median of Reps repetitions):
//
//   - PingPong: a packet to the peer and one back, timed at the driver.
//   - OneWay, Count 1 and Count Burst: packets posted back to back; the peer acknowledges the
//     last with an empty message, and half an empty ping-pong is taken off the round trip.
//   - Send: the driver's time to post one packet of the burst (chare.Send returns).
//   - Handle: the peer's time in its handler per packet (it reads every byte, as an unpacking
//     user would).
//   - Receive: the peer is kept busy while a burst queues in its mailbox, then takes it off at
//     its own pace: the time per packet from the first handler's start to the last one's end,
//     less the handling.
//
// schedule.Fit turns the samples into a Model.

// CalibrateOptions configure Calibrate. The zero value measures between PE 0 and a PE of
// another process if the job has several (else PE 1), on the default sizes.
type CalibrateOptions struct {
	// From drives the measurement; To answers. To = 0 means the default peer: the first PE
	// of the next process when From's process is not the only one, else From+1 (mod P).
	From, To int
	// Sizes are the packet sizes in bytes; at least two different ones (each parameter has a
	// fixed and a per-byte part). Default 16, 1 KiB, 8 KiB, 64 KiB.
	Sizes []int
	// Burst is the number of packets sent back to back (default 32, at least 2): the gap is
	// found from the difference between a burst and a single packet.
	Burst int
	// Reps repeats every figure; the median is kept (default 7).
	Reps int
}

// DefaultCalibrationSizes are the packet sizes Calibrate measures by default.
var DefaultCalibrationSizes = []int{16, 1 << 10, 8 << 10, 64 << 10}

// Calibration is what Calibrate measured.
type Calibration struct {
	Model        schedule.Model
	Samples      []schedule.Sample // what the model was fitted to, medians
	From, To     int
	CrossProcess bool // From and To live in different processes
}

func (o *CalibrateOptions) fill(pe *chare.PE) error {
	n := pe.NumPEs()
	if n < 2 {
		return errors.New("comlib: calibrate: needs at least two PEs")
	}
	if o.From < 0 || o.From >= n {
		return fmt.Errorf("comlib: calibrate: From=%d outside PEs 0..%d", o.From, n-1)
	}
	if o.To < 0 || o.To >= n || o.To == o.From && o.To != 0 {
		return fmt.Errorf("comlib: calibrate: To=%d: must be a PE in 0..%d other than From=%d", o.To, n-1, o.From)
	}
	if o.To == 0 {
		rt := pe.Job().Runtime()
		if nodes := rt.NumNodes(); nodes > 1 {
			o.To = rt.FirstPE((rt.NodeOf(o.From) + 1) % nodes)
		} else {
			o.To = (o.From + 1) % n
		}
	}
	if o.To == o.From {
		return fmt.Errorf("comlib: calibrate: From and To are both PE %d", o.From)
	}
	if o.Sizes == nil {
		o.Sizes = DefaultCalibrationSizes
	}
	distinct := map[int]bool{}
	for _, b := range o.Sizes {
		if b < 0 {
			return fmt.Errorf("comlib: calibrate: packet size %d bytes: must be ≥ 0", b)
		}
		distinct[b] = true
	}
	if len(distinct) < 2 {
		return fmt.Errorf("comlib: calibrate: sizes %v: need at least two different ones", o.Sizes)
	}
	if o.Burst == 0 {
		o.Burst = 32
	}
	if o.Burst < 2 {
		return fmt.Errorf("comlib: calibrate: Burst=%d: need at least 2 packets back to back", o.Burst)
	}
	if o.Reps == 0 {
		o.Reps = 7
	}
	if o.Reps < 1 {
		return fmt.Errorf("comlib: calibrate: Reps=%d: need at least 1", o.Reps)
	}
	return nil
}

// Calibrate measures the cost model's parameters between two PEs of the running job and fits
// a Model to them. It blocks: call it from a threaded entry method (the main chare's Start).
// Timings on a shared machine are noisy; the medians of several repetitions are fitted.
func Calibrate(from chare.Context, o CalibrateOptions) (Calibration, error) {
	pe := chare.PEOf(from)
	if pe == nil {
		return Calibration{}, chare.ErrNoContext
	}
	if err := o.fill(pe); err != nil {
		return Calibration{}, err
	}
	g, err := group.New[calib](from)
	if err != nil {
		return Calibration{}, fmt.Errorf("comlib: calibrate: %w", err)
	}
	run := func(r calReq) ([]calRep, error) {
		f := chare.NewFuture[[]calRep](from)
		r.Peer, r.Reps, r.Done = o.To, o.Reps, f.Callback()
		if err := chare.Send(from, g.At(o.From), (*calib).Run, r); err != nil {
			return nil, err
		}
		reps, err := f.Get(from)
		if err == nil && len(reps) != o.Reps {
			err = fmt.Errorf("%d repetitions came back, want %d", len(reps), o.Reps)
		}
		return reps, err
	}
	med := func(reps []calRep, f func(calRep) time.Duration) time.Duration {
		xs := make([]time.Duration, len(reps))
		for i, r := range reps {
			xs[i] = f(r)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	rtt := func(r calRep) time.Duration { return r.RTT }
	c := Calibration{From: o.From, To: o.To}
	rt := pe.Job().Runtime()
	c.CrossProcess = rt.NodeOf(o.From) != rt.NodeOf(o.To)

	// The acknowledgement of a burst is an empty message: half an empty ping-pong.
	if _, err := run(calReq{Kind: calPing}); err != nil { // warm-up: connections, code paths
		return c, fmt.Errorf("comlib: calibrate: %w", err)
	}
	pp0, err := run(calReq{Kind: calPing})
	if err != nil {
		return c, fmt.Errorf("comlib: calibrate: %w", err)
	}
	ack := med(pp0, rtt) / 2
	oneWay := func(d time.Duration) time.Duration { return max(d-ack, 1) }
	add := func(k schedule.Kind, bytes, count int, d time.Duration) {
		c.Samples = append(c.Samples, schedule.Sample{Kind: k, Bytes: bytes, Count: count, Time: max(d, 1)})
	}
	for _, b := range o.Sizes {
		pp, err := run(calReq{Kind: calPing, Bytes: b})
		if err != nil {
			return c, fmt.Errorf("comlib: calibrate: ping-pong of %d bytes: %w", b, err)
		}
		add(schedule.PingPong, b, 0, med(pp, rtt))
		one, err := run(calReq{Kind: calBurst, Bytes: b, Count: 1})
		if err != nil {
			return c, fmt.Errorf("comlib: calibrate: one packet of %d bytes: %w", b, err)
		}
		add(schedule.OneWay, b, 1, oneWay(med(one, rtt)))
		burst, err := run(calReq{Kind: calBurst, Bytes: b, Count: o.Burst})
		if err != nil {
			return c, fmt.Errorf("comlib: calibrate: %d packets of %d bytes: %w", o.Burst, b, err)
		}
		add(schedule.OneWay, b, o.Burst, oneWay(med(burst, rtt)))
		add(schedule.Send, b, 0, med(burst, func(r calRep) time.Duration { return r.Post / time.Duration(o.Burst) }))
		add(schedule.Handle, b, 0, med(burst, func(r calRep) time.Duration { return r.Handle / time.Duration(o.Burst) }))
		// Keep the peer busy long enough for the whole burst to queue behind it.
		spin := 2*med(burst, rtt) + 200*time.Microsecond
		queued, err := run(calReq{Kind: calBurst, Bytes: b, Count: o.Burst, Spin: spin})
		if err != nil {
			return c, fmt.Errorf("comlib: calibrate: %d queued packets of %d bytes: %w", o.Burst, b, err)
		}
		add(schedule.Receive, b, 0, med(queued, func(r calRep) time.Duration {
			return (r.Span - r.Handle) / time.Duration(o.Burst)
		}))
	}
	c.Model, err = schedule.Fit(c.Samples)
	if err != nil {
		return c, fmt.Errorf("comlib: calibrate between PEs %d and %d: %w", o.From, o.To, err)
	}
	return c, nil
}

const (
	calPing = iota + 1
	calBurst
)

// calReq asks the driver branch for Reps repetitions of one measurement.
type calReq struct {
	Kind, Bytes, Count, Peer, Reps int
	Spin                           time.Duration // keep the peer busy this long first
	Done                           chare.Callback
}

// calRep is one repetition, as the driver saw it.
type calRep struct {
	RTT    time.Duration // from the first post to the answer
	Post   time.Duration // posting the burst
	Handle time.Duration // the peer's time in its handlers
	Span   time.Duration // the peer's first handler start to its last handler end
}

type calData struct {
	From, Seq, Count int
	Data             []byte
}

type calAck struct{ Handle, Span time.Duration }

type calSpin struct{ D time.Duration }

// calib is the calibration group: the driver branch and its peer.
type calib struct {
	group.Branch[calib]
	req  calReq
	reps []calRep
	t0   time.Time
	post time.Duration
	data []byte
	// on the peer
	first  time.Time
	handle time.Duration
	sink   byte
}

func init() { chare.Register[calib]() }

func (c *calib) Run(r calReq) {
	c.req, c.reps = r, make([]calRep, 0, r.Reps)
	if len(c.data) != r.Bytes {
		c.data = make([]byte, r.Bytes)
		for i := range c.data {
			c.data[i] = byte(i)
		}
	}
	c.next()
}

func (c *calib) must(err error) {
	if err != nil {
		c.Abort(fmt.Errorf("comlib: calibrate on PE %d: %w", c.PE(), err))
	}
}

func (c *calib) next() {
	r := &c.req
	if len(c.reps) == r.Reps {
		c.must(r.Done.Send(c, c.reps))
		return
	}
	peer := c.ThisProxy().At(r.Peer)
	if r.Spin > 0 {
		c.must(chare.Send(c, peer, (*calib).Spin, calSpin{D: r.Spin}))
	}
	c.t0 = time.Now()
	if r.Kind == calPing {
		c.must(chare.Send(c, peer, (*calib).Ping, calData{From: c.PE(), Count: 1, Data: c.data}))
		return
	}
	for i := 0; i < r.Count; i++ {
		c.must(chare.Send(c, peer, (*calib).Data, calData{From: c.PE(), Seq: i, Count: r.Count, Data: c.data}))
	}
	c.post = time.Since(c.t0)
}

func touch(b []byte) (s byte) {
	for _, x := range b {
		s ^= x
	}
	return s
}

// Ping answers with a packet of the same size.
func (c *calib) Ping(d calData) {
	c.sink ^= touch(d.Data)
	c.must(chare.Send(c, c.ThisProxy().At(d.From), (*calib).Pong, calData{From: c.PE(), Count: 1, Data: d.Data}))
}

func (c *calib) Pong(d calData) {
	c.sink ^= touch(d.Data)
	c.reps = append(c.reps, calRep{RTT: time.Since(c.t0)})
	c.next()
}

// Spin keeps the PE busy so that a burst queues in its mailbox behind it. It spins rather than
// sleeps: the PE must not take anything off its mailbox meanwhile.
func (c *calib) Spin(s calSpin) {
	end := time.Now().Add(s.D)
	for time.Now().Before(end) {
	}
}

// Data is a packet of a burst; the last is acknowledged.
func (c *calib) Data(d calData) {
	t := time.Now()
	if d.Seq == 0 {
		c.first, c.handle = t, 0
	}
	c.sink ^= touch(d.Data)
	end := time.Now()
	c.handle += end.Sub(t)
	if d.Seq == d.Count-1 {
		c.must(chare.Send(c, c.ThisProxy().At(d.From), (*calib).Ack, calAck{Handle: c.handle, Span: end.Sub(c.first)}))
	}
}

func (c *calib) Ack(a calAck) {
	c.reps = append(c.reps, calRep{RTT: time.Since(c.t0), Post: c.post, Handle: a.Handle, Span: a.Span})
	c.next()
}
