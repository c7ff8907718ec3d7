package wire

import (
	"errors"
	"strconv"
)

// Version is the frame format this program speaks. It is the first field of
// every frame, so a node running a different build is told so plainly
// instead of having its frames misread.
const Version = 1

// MaxFrame is the largest frame the runtime sends: gRPC's default 4 MB
// receive limit, minus headroom for the protobuf wrapper and for the remote
// layer's own envelope around it. Use [Split] to keep data frames under it.
const MaxFrame = 3 << 20

// FrameKind says what a frame carries.
type FrameKind uint8

const (
	KindData  FrameKind = iota + 1 // messages for PEs, in Items
	KindHello                      // a node asks to join: Body holds the node's info
	KindTable                      // the job's node table, from node 0
	KindReady                      // a node has created its PEs
	KindStart                      // node 0: start
	KindExit                       // the job ends: Code, and the reason in Body
	KindBeat                       // heartbeat
)

var kindNames = [...]string{
	KindData:  "data",
	KindHello: "hello",
	KindTable: "table",
	KindReady: "ready",
	KindStart: "start",
	KindExit:  "exit",
	KindBeat:  "beat",
}

// Valid reports whether k is one of the kinds above.
func (k FrameKind) Valid() bool { return k >= KindData && k <= KindBeat }

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
	Seq   uint64 // per sender→receiver sequence number, so the receiver can detect loss
	Code  int    // exit code (KindExit)
	Body  []byte // kind-specific payload (hello info, table, exit reason), opaque here
	Items []Item // KindData: the messages
}

// Item is one message for one PE.
type Item struct {
	PE   int32  // destination PE
	Kind uint16 // the message's registered kind, opaque here
	Body []byte // the message, encoded by its kind's codec, opaque here
}

// ErrCorrupt is wrapped by every error [DecodeFrame] returns, so that a
// receiver can count the frames it rejected with errors.Is.
var ErrCorrupt = errors.New("wire: corrupt frame")

// corruptError carries a message that says what is wrong and where, and
// unwraps to ErrCorrupt.
type corruptError struct{ msg string }

func (e *corruptError) Error() string { return e.msg }
func (e *corruptError) Unwrap() error { return ErrCorrupt }
