// Package wire encodes and decodes the frames that carry messages between
// the nodes (processes) of one job.
//
// # Frames
//
// A [Frame] is encoded with msgpack into bytes, and those bytes travel
// inside a protobuf BytesValue through protoactor-go's remote layer
// (which accepts only protobuf messages; docs/design/wire-format.md says
// why the runtime frames its own messages). One frame carries many
// messages for the PEs of one node ([KindData]); the other kinds carry
// the job's control protocol (hello, node table, ready, start, exit,
// heartbeat) and its flow control ([KindCredit]: bytes processed, and
// whether the sender's PEs wait).
//
// gRPC's default 4 MB receive limit applies to whole frames, so the sender
// keeps each frame under [MaxFrame], cutting long lists of messages with
// [Split]. (The remote layer may also batch several frames into one gRPC
// message; the transport must raise gRPC's limits or cap the batch for
// that, which is beyond this package.)
//
// # Fragments
//
// One message longer than [MaxFrame] cannot be cut between messages: its
// frame is cut instead. [Fragments] turns the encoding of a long frame
// into fragment frames ([KindPart]) of at most a given length (MaxFrame
// or less), each carrying the long frame's id (in Seq), its length and
// the offset of its piece; the sender sends them one after another from
// one goroutine. [FrameFragments] does the same from the frame itself,
// without encoding it whole first: a message of hundreds of megabytes is
// copied once, into the fragments, in pieces that the scheduler can
// preempt between.
// The receiver keeps a [Reassembler] per sending node, gives it every
// fragment, and decodes the frame it returns with [DecodeFrame] as if it
// had come whole. Frames up to MaxFrame are not touched: they cost
// nothing more.
//
// The transport keeps one goroutine's frames to one peer in order while
// the connection lives, and no more: other goroutines' frames (and their
// fragments) come in between. So a Reassembler joins several frames at
// once, each of whose fragments must come in order, without gaps or
// repeats. It bounds its memory by the length of a frame (MaxSize) and the
// frames open at once (MaxOpen), and allocates a frame whole only once its
// first fragment is in. A fragment out of order, repeated, of a frame
// whose start never came, or over a bound is an error that names the
// sender, the frame and the offset, wrapping [ErrCorrupt] or
// [ErrTooLarge]; it never panics (see FuzzReassemble).
//
// # Format
//
// A frame is one msgpack array of 8 elements, the version first:
//
//	[Version, Kind, Token, From, Seq, Code, Body, Items]
//
//	Version  integer, always 2 in this format ([Version])
//	Kind     integer, a [FrameKind]
//	Token    string, the job's token
//	From     integer >= 0, the sending node
//	Seq      integer >= 0 (uint64); a fragment's frame id, else 0
//	Code     integer (exit code)
//	Body     binary, or nil
//	Items    array of items, or nil; each item either one message, an
//	         array of 3 elements:
//	         [PE (integer >= 0, int32), Kind (integer, uint16), Body (binary or nil)]
//	         or a run of messages of one kind for one PE, an array of 4:
//	         [PE, Kind, Head (binary or nil), Tails (array of at least one binary)]
//
// A fragment ([KindPart]) has Code 0, nil Items, and as Body the long
// frame's length and the piece's offset (two unsigned varints) followed by
// the piece.
//
// A run carries what its messages share once (for chare envelopes the
// collection, entry method and route, 25 bytes), and per message only its
// tail (flags, index, message).
//
// Fields are positional: no names travel, and the version, read first,
// says how to read the rest. Integers take msgpack's shortest form, so a
// typical item with a 32-byte body costs 37 bytes. nil and empty slices
// are told apart (nil is msgpack nil, empty is a zero-length binary or
// array), so a frame decodes to exactly what was encoded.
//
// # Encoding and decoding
//
// [AppendFrame] writes msgpack itself, into a buffer sized once for the
// frame ([Size]), byte for byte what msgpack/v5's encoder writes field by
// field (a test compares the two). [DecodeFrame] is a strict reader of
// the same msgpack, rather than msgpack/v5's lenient Decoder, because
// frames come from the network. Both go through the runtime's one
// msgpack writer and strict reader (package internal/msgp, shared with
// the generated codecs of package codec and the element indices).
// DecodeFrame checks each field's type and range, checks every length
// before allocating, rejects trailing bytes, never panics, and
// returns errors that wrap [ErrCorrupt] and say what is wrong and where.
//
// Bodies in a decoded frame alias the input: the receiver decodes each
// message right away, so a copy would be wasted.
//
// The codec checks the form of a frame, not its meaning: the job's token,
// the sequence numbers and which kinds may carry items are the receiver's
// business.
package wire
