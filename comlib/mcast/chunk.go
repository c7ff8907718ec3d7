package mcast

import "fmt"

// Split cuts payload into chunks of size bytes, the last one possibly shorter. The chunks share
// payload's memory (each with its capacity clipped, so appending to one cannot overwrite the
// next). An empty payload gives one empty chunk, so that every message has at least one.
func Split(payload []byte, size int) ([][]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("mcast: chunk size %d: must be positive", size)
	}
	if len(payload) == 0 {
		return [][]byte{payload[:0:0]}, nil
	}
	out := make([][]byte, 0, (len(payload)+size-1)/size)
	for lo := 0; lo < len(payload); lo += size {
		hi := min(lo+size, len(payload))
		out = append(out, payload[lo:hi:hi])
	}
	return out, nil
}

// DefaultMaxBytes is the Reassembler's limit when NewReassembler is given 0 or less.
const DefaultMaxBytes = 64 << 20

// ChunkOverhead is what each chunk held by a Reassembler counts against its limit on top of its
// length, for the bookkeeping it costs; so a flood of tiny chunks is bounded as well as a few
// large ones.
const ChunkOverhead = 64

// Reassembler puts chunked messages back together on the receiving PE. Chunks may arrive in any
// order and messages interleaved; a message is returned whole when its last missing chunk comes.
// The memory it holds for incomplete messages (their bytes plus ChunkOverhead per chunk) never
// exceeds its limit, whatever the frames say, so a corrupt or hostile frame costs an error, not
// the process's memory. A Reassembler belongs to
// one PE and is not safe for concurrent use.
type Reassembler struct {
	max   int
	bytes int
	msgs  map[uint64]*partial
}

// partial is one incomplete message.
type partial struct {
	total  int
	size   int            // payload bytes held
	chunks map[int][]byte // by index; a map, so a huge claimed total costs nothing up front
}

// NewReassembler returns a Reassembler that holds at most maxBytes for incomplete messages
// (DefaultMaxBytes if maxBytes <= 0), counting ChunkOverhead per chunk: a message of t chunks
// can be at most maxBytes − t·ChunkOverhead bytes long.
func NewReassembler(maxBytes int) *Reassembler {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Reassembler{max: maxBytes, msgs: map[uint64]*partial{}}
}

// Add files chunk index of total of message id (an opaque key, such as the source PE and a
// sequence number) and returns the whole payload when it was the last one missing. The chunk is
// copied unless it completes a one-chunk message, which is returned as it is. A rejected chunk
// changes nothing: the message's other chunks stay pending (Discard drops them).
func (r *Reassembler) Add(id uint64, index, total int, chunk []byte) (whole []byte, done bool, err error) {
	switch {
	case total < 1:
		return nil, false, fmt.Errorf("mcast: message %#x: chunk total %d: must be at least 1", id, total)
	case index < 0 || index >= total:
		return nil, false, fmt.Errorf("mcast: message %#x: chunk index %d outside 0..%d", id, index, total-1)
	case total > 1 && len(chunk) == 0:
		// Split only makes an empty chunk for an empty one-chunk message; refusing others
		// bounds the chunks held by the bytes held.
		return nil, false, fmt.Errorf("mcast: message %#x: chunk %d of %d is empty", id, index, total)
	case total > r.max/(1+ChunkOverhead):
		return nil, false, fmt.Errorf("mcast: message %#x: %d chunks cannot fit in the %d-byte limit", id, total, r.max)
	}
	p := r.msgs[id]
	if p != nil {
		if p.total != total {
			return nil, false, fmt.Errorf("mcast: message %#x: chunk %d says %d chunks, earlier chunks said %d", id, index, total, p.total)
		}
		if _, dup := p.chunks[index]; dup {
			return nil, false, fmt.Errorf("mcast: message %#x: duplicate chunk %d of %d", id, index, total)
		}
	}
	if total == 1 { // nothing to hold
		if len(chunk) > r.max {
			return nil, false, fmt.Errorf("mcast: message %#x: %d bytes, above the %d-byte limit", id, len(chunk), r.max)
		}
		return chunk, true, nil
	}
	if held := r.bytes + len(chunk) + ChunkOverhead; held > r.max {
		return nil, false, fmt.Errorf("mcast: message %#x: chunk %d (%d bytes) would hold %d bytes for incomplete messages, above the %d-byte limit",
			id, index, len(chunk), held, r.max)
	}
	if p == nil {
		p = &partial{total: total, chunks: map[int][]byte{}}
		r.msgs[id] = p
	}
	p.chunks[index] = append([]byte(nil), chunk...)
	p.size += len(chunk)
	r.bytes += len(chunk) + ChunkOverhead
	if len(p.chunks) < total {
		return nil, false, nil
	}
	whole = make([]byte, 0, p.size)
	for i := 0; i < total; i++ {
		whole = append(whole, p.chunks[i]...)
	}
	r.bytes -= p.size + total*ChunkOverhead
	delete(r.msgs, id)
	return whole, true, nil
}

// Pending is the number of incomplete messages.
func (r *Reassembler) Pending() int { return len(r.msgs) }

// Bytes is what the incomplete messages count against the limit: their bytes plus
// ChunkOverhead per chunk.
func (r *Reassembler) Bytes() int { return r.bytes }

// Discard drops the chunks of message id, for a sender known to have failed or a message
// declared corrupt; it reports whether there were any.
func (r *Reassembler) Discard(id uint64) bool {
	p, ok := r.msgs[id]
	if ok {
		r.bytes -= p.size + len(p.chunks)*ChunkOverhead
		delete(r.msgs, id)
	}
	return ok
}
