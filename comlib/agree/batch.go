package agree

// Batcher gathers one PE's reports so that it sends the Decider one
// message per reported segment instead of one per iteration.
//
// The Decider scores a segment by its first Length−Lead iterations (the
// scored part) and announces the next segment as soon as the last of them
// is measured; the Lead iterations after them only give the announcement
// time to travel. So a PE holds its reports of the scored part and sends
// them together when it has them all: the Decider learns of the last
// scored iteration exactly when it would have from a report per
// iteration, and the announcement is not delayed. The reports of the lead
// iterations are not needed for scoring; they are held and go with the
// next reported segment's message (the Decider still checks their value,
// and comlib still learns every PE's ω from them), so a PE sends one
// message per reported segment.
//
// When the scored part is not whole here — an iteration of it ran no
// exchange (a recovery), or the PE joined in the middle — the Decider
// fills the segment's score with the lead iterations, as it did with a
// report per iteration: the held reports then go at the first lead
// iteration, and the segment's later reports one by one.
//
// After a PE's last iteration, the last segment's lead reports (or a
// scored part it stopped in) stay held until Flush. The Decider loses no
// evaluation by the lead reports (it scores without lead iterations
// unless a segment's every scored iteration was passed); a scored part
// the job stopped in is an evaluation that could not close anyway. What
// it misses is their values (Used): comlib's FanOuts on PE 0 lacks those
// iterations of other processes' PEs. comlib's Instance.Flush sends them
// (comlib's package doc says why nothing sends them by itself); Flush may
// be called at any time: every report is still sent once, in order.
type Batcher struct {
	length, scored int
	seg            int  // the segment whose scored part is being gathered
	got            int  // its scored iterations seen here
	started        bool // seg is set
	held           []Report
}

// DefaultLead is the lead a Decider takes for segments of length
// iterations when Options.Lead is 0: ⌈length/4⌉, at most length−1.
func DefaultLead(length int) int {
	if length <= 1 {
		return 0
	}
	return min((length+3)/4, length-1)
}

// NewBatcher returns a Batcher for a Decider with segments of length
// iterations and the given lead (Decider.Length, Decider.Lead). Mismatched
// values only make messages more or the announcement later, never break
// the agreement: every report is still sent once.
func NewBatcher(length, lead int) *Batcher {
	length = max(length, 1)
	lead = min(max(lead, 0), length-1)
	return &Batcher{length: length, scored: length - lead}
}

// Add takes the report of an iteration this PE finished and that its
// range reports (Follower.Reported), and returns the reports to send the
// Decider now, in one message and in this order, or nil while they are
// held.
func (b *Batcher) Add(r Report) []Report {
	seg := Segment(r.Iter, b.length)
	pos := r.Iter - seg*b.length
	overdue := false
	switch {
	case !b.started || seg > b.seg:
		// A new segment. Reports held while the last segment's scored
		// part was not whole here are overdue (they normally left at its
		// first lead iteration; this PE ran none of them).
		overdue = b.started && b.got < b.scored && len(b.held) > 0
		b.started, b.seg, b.got = true, seg, 0
	case seg < b.seg:
		// A late iteration of an older segment: nothing waits for it.
		return append(b.take(), r)
	}
	b.held = append(b.held, r)
	if pos < b.scored {
		b.got++
		if b.got == b.scored || overdue || len(b.held) >= b.length {
			return b.take()
		}
		return nil
	}
	// A lead iteration: held if the scored part went out whole, else the
	// Decider may need it to fill the segment's score.
	if b.got < b.scored || overdue || len(b.held) >= b.length {
		return b.take()
	}
	return nil
}

// Held is the number of reports held.
func (b *Batcher) Held() int { return len(b.held) }

// Flush returns the reports held (nil if none), to send now.
func (b *Batcher) Flush() []Report { return b.take() }

func (b *Batcher) take() []Report {
	if len(b.held) == 0 {
		return nil
	}
	out := b.held
	b.held = nil
	return out
}
