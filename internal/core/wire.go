package core

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/internal/wirekind"
)

// Messages between processes. Inside one process envelopes are handed
// over; to another process they are encoded (wireenv.go) and decoded on
// the destination PE into a typed envelope (wiretyped.go), or into an
// envDyn, which calls the entry method through its description. Indices
// travel as bytes (wireindex.go) and are decoded with the collection's
// own index type when they are used, so that a node can carry a proxy
// for a collection it does not know yet. Collections are announced to
// the other processes before any message for them (announce.go);
// proxies and callbacks inside messages are encoded as wireroute.go
// says; creation, futures and reductions as wiremsgs.go says.

// The kinds of chare's messages between processes are in package
// internal/wirekind.

func init() {
	actor.RegisterWire(wirekind.Envelope, "chare envelope", decodeEnvelope)
	actor.RegisterWireRun(wirekind.Envelope, "chare envelope", decodeEnvHead)
	actor.RegisterWireRunAll(wirekind.Envelope, "chare envelope", decodeEnvRun)
	actor.RegisterWireChecked(wirekind.Create, "collection creation", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		var c CollID
		err := dec.Decode(&c)
		return createMsg{c}, err
	})
	actor.RegisterWireChecked(wirekind.Announce, "collection announcement", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		m := &announceMsg{}
		err := dec.Decode(&m.spec)
		return m, err
	})
	actor.RegisterWireChecked(wirekind.Future, "future value", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		var w wireFuture
		if err := dec.Decode(&w); err != nil {
			return nil, err
		}
		return &futureMsg{ref: futureRef{w.PE, w.ID}, val: rawValue(w.Val)}, nil
	})
	actor.RegisterWireChecked(wirekind.Reduction, "reduction", decodeReduction)
	actor.RegisterStruct[ckptStart](wirekind.CkptStart, "checkpoint start")
	actor.RegisterStruct[ckptCollect](wirekind.CkptCollect, "checkpoint collection")
	actor.RegisterStruct[ckptPart](wirekind.CkptPart, "checkpoint part")
	actor.RegisterStruct[restoreMsg](wirekind.Restore, "restart objects")
	actor.RegisterWire(wirekind.RestoreFence, "restart fence", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		return restoreFence{}, decodeEmpty(dec)
	})
	actor.RegisterWire(wirekind.RestoreAck, "restart acknowledgement", func(_ *actor.PE, dec *msgpack.Decoder) (actor.Message, error) {
		return restoreAck{}, decodeEmpty(dec)
	})
}

// decodeEmpty reads the body of a kind that carries nothing: one nil.
// Skip would recurse once per level of whatever a corrupt body nests,
// and tens of megabytes of array headers overflow the stack, which no
// recover catches.
func decodeEmpty(dec *msgpack.Decoder) error {
	if err := dec.DecodeNil(); err != nil {
		return fmt.Errorf("the body is not nil: %w", err)
	}
	if _, err := dec.PeekCode(); err != io.EOF {
		return errors.New("bytes after the body's nil")
	}
	return nil
}

// Fingerprint identifies the program's chare types and entry methods, so
// that nodes running different programs refuse to form a job.
func Fingerprint() string {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	h := sha256.New()
	for _, t := range reg.types {
		fmt.Fprintf(h, "%d %s\n", t.ID, t.Name)
		for _, e := range t.entries {
			fmt.Fprintf(h, " %d %s %v %v %v\n", e.ID, e.Name, e.Msg, e.Result, e.Threaded)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
