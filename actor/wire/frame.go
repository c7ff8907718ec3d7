package wire

import (
	"errors"
	"math"
	"strconv"

	"github.com/charmgo/charm/internal/bigbuf"
	"github.com/charmgo/charm/internal/msgp"
)

// Version is the frame format this program speaks. It is the first field of
// every frame, so a node running a different build is told so plainly
// instead of having its frames misread.
const Version = 2

// MaxFrame is the largest frame the runtime sends whole: gRPC's default
// 4 MB receive limit, minus headroom for the protobuf wrapper and for the
// remote layer's own envelope around it. [Split] keeps data frames under
// it where messages can be cut between; a longer frame (a message longer
// than MaxFrame) travels as fragments ([Fragments], [Reassembler]).
const MaxFrame = 3 << 20

// FrameKind says what a frame carries.
type FrameKind uint8

const (
	KindData   FrameKind = iota + 1 // messages for PEs, in Items
	KindHello                       // a node asks to join: Body holds the node's info
	KindTable                       // the job's node table, from node 0
	KindReady                       // a node has created its PEs
	KindStart                       // node 0: start
	KindExit                        // the job ends: Code, and the reason in Body
	KindBeat                        // heartbeat
	KindCredit                      // flow control: Body, a uvarint, is the bytes of data frames from the receiver that this node has processed; Code 1 says PEs of this node wait for credit
	KindPart                        // a piece of a frame longer than MaxFrame (see Fragments)
)

var kindNames = [...]string{
	KindData:   "data",
	KindHello:  "hello",
	KindTable:  "table",
	KindReady:  "ready",
	KindStart:  "start",
	KindExit:   "exit",
	KindBeat:   "beat",
	KindCredit: "credit",
	KindPart:   "part",
}

// Valid reports whether k is one of the kinds above.
func (k FrameKind) Valid() bool { return k >= KindData && k <= KindPart }

func (k FrameKind) String() string {
	if k.Valid() {
		return kindNames[k]
	}
	return "FrameKind(" + strconv.Itoa(int(k)) + ")"
}

// Frame is the unit that travels between the nodes of one job.
type Frame struct {
	Kind  FrameKind
	Token string // the job's token; the receiver, not the codec, rejects a wrong one
	From  int    // the sending node
	// Seq is, in a fragment (KindPart), the id of the frame it is a piece
	// of. Other frames leave it 0: the runtime numbers no frames, as the
	// order of one goroutine's frames to one peer holds while the
	// connection lives, and a lost connection ends the job.
	Seq   uint64
	Code  int    // exit code (KindExit)
	Body  []byte // kind-specific payload (hello info, table, exit reason), opaque here
	Items []Item // KindData: the messages
}

// Item is one message for one PE, or a run of messages of one kind for one
// PE that share a head.
//
// A run carries what its messages have in common (for a chare envelope:
// the collection, the entry method, the route) once, in Head, and each
// message's own part (its index, its message) as a tail: Body then holds
// Tails msgpack binaries, one after another ([AppendTail] writes one,
// [NextTail] reads them back).
type Item struct {
	PE    int32  // destination PE
	Kind  uint16 // the message's registered kind, opaque here
	Tails int    // 0: Body is one message; n > 0: a run of n tails
	Head  []byte // a run's shared head, opaque here
	Body  []byte // the message, or a run's tails, encoded by its kind's codec
}

// ErrCorrupt is wrapped by every error [DecodeFrame] returns, so that a
// receiver can count the frames it rejected with errors.Is.
var ErrCorrupt = errors.New("wire: corrupt frame")

// corruptError carries a message that says what is wrong and where, and
// unwraps to ErrCorrupt.
type corruptError struct{ msg string }

func (e *corruptError) Error() string { return e.msg }
func (e *corruptError) Unwrap() error { return ErrCorrupt }

// AppendTail appends tail to a run's Body as one msgpack binary.
func AppendTail(body, tail []byte) []byte {
	return bigbuf.Append(msgp.AppendBinHeader(body, len(tail)), tail)
}

// BeginTail starts a tail that the caller appends to body in place; pass
// the returned mark to [EndTail] when it is written. This saves encoding a
// tail elsewhere and copying it.
func BeginTail(body []byte) ([]byte, int) {
	return append(body, msgp.Bin8, 0), len(body)
}

// EndTail completes the tail begun at mark: it writes the tail's length
// into its header, moving the tail if the length needs a longer header.
func EndTail(body []byte, mark int) []byte {
	n := len(body) - mark - 2
	if n <= math.MaxUint8 {
		body[mark+1] = byte(n)
		return body
	}
	hdr := msgp.AppendBinHeader(nil, n)
	extra := len(hdr) - 2
	body = bigbuf.Grow(body, extra)[:len(body)+extra]
	bigbuf.Move(body, mark+len(hdr), mark+2, n) // a long tail in pieces
	copy(body[mark:], hdr)
	return body
}

// NextTail returns the first tail of a run's body and the rest; ok is false
// when body holds no complete tail. A decoded frame's runs are checked, so
// their tails always read.
func NextTail(body []byte) (tail, rest []byte, ok bool) {
	d := decoder{Reader: msgp.Reader{B: body}, item: noItem}
	t, err := d.tail()
	if err != nil {
		return nil, body, false
	}
	return t, body[d.Off:], true
}
