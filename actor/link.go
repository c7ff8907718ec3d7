package actor

import (
	"time"

	pa "github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/charmgo/charm/actor/wire"
)

// The receiving end of a node's frames. Other nodes address the link by a
// well-known name; the process registered under that name (linkProcess)
// handles the frames that carry the job's messages at once, on the
// goroutine that received them (protoactor-go's stream reader for the
// connection, or a node's own sender when both nodes share one endpoint):
// data frames go straight to their PEs' mailboxes, so a message from
// another process crosses one mailbox, not two. Frames of the join, exit
// frames and lost connections go through the link actor's mailbox as
// before, in the order they came, since their handlers may block.

// linkProcess is the process registered under the link's name.
type linkProcess struct {
	rt    *Runtime
	actor pa.Process // the link actor's own process
	pid   *pa.PID    // the link actor, under its private name
}

// SendUserMessage implements pa.Process.
func (p *linkProcess) SendUserMessage(_ *pa.PID, m any) {
	if bv, ok := m.(*wrapperspb.BytesValue); ok {
		if f, size := p.rt.receiveFrame(bv.Value); f != nil {
			p.actor.SendUserMessage(p.pid, linkFrame{f, size})
		}
		return
	}
	p.actor.SendUserMessage(p.pid, m)
}

// SendSystemMessage implements pa.Process.
func (p *linkProcess) SendSystemMessage(_ *pa.PID, m any) { p.actor.SendSystemMessage(p.pid, m) }

// Stop implements pa.Process.
func (p *linkProcess) Stop(*pa.PID) { p.actor.Stop(p.pid) }

// linkFrame is a decoded frame for the link actor, of size bytes.
type linkFrame struct {
	f    *wire.Frame
	size int
}

// receiveFrame decodes and checks a frame from another node, then handles
// it as handleFrame does. A frame that does not decode or does not come
// from another node of the job is counted, logged and dropped.
func (rt *Runtime) receiveFrame(b []byte) (*wire.Frame, int) {
	ns := rt.node
	f, err := wire.DecodeFrame(b)
	if err != nil {
		ns.Rejected.Add(1)
		rt.log.Warn("rejected a frame", "node", ns.cfg.Node, "err", err)
		return nil, 0
	}
	if f.Token != ns.cfg.Token || !ns.otherNode(f.From) {
		ns.Rejected.Add(1)
		rt.log.Warn("rejected a frame from outside the job", "node", ns.cfg.Node, "from", f.From)
		return nil, 0
	}
	return rt.handleFrame(f, len(b))
}

// otherNode reports whether n is a node of the job other than this one.
func (ns *nodeState) otherNode(n int) bool {
	return n >= 0 && n < ns.cfg.Nodes && n != ns.cfg.Node
}

// handleFrame handles a frame of size bytes from another node of the job:
// data, credit and heartbeat frames (and fragments of them) at once, and
// returns nil; it returns any other frame, and its size, for the link
// actor. Any goroutine may call it; frames from one node are handled in
// the order the calls come.
func (rt *Runtime) handleFrame(f *wire.Frame, size int) (*wire.Frame, int) {
	ns := rt.node
	ns.seen[f.From].Store(time.Now().UnixNano())
	if f.Kind == wire.KindPart {
		// The fragments of a node are joined under a lock: with both
		// nodes in one process (tests), they come from its PEs'
		// goroutines.
		ns.partsMu.Lock()
		f, size = rt.joinFrame(f)
		ns.partsMu.Unlock()
		if f == nil {
			return nil, 0
		}
	}
	switch f.Kind {
	case wire.KindData:
		rt.deliverRemote(f, size)
	case wire.KindCredit:
		if !rt.onCredit(f) {
			ns.Rejected.Add(1)
			rt.log.Warn("rejected a credit frame", "node", ns.cfg.Node, "from", f.From)
		}
	case wire.KindBeat:
	default:
		return f, size
	}
	return nil, 0
}
