package core

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

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
	sum := sha256.Sum256([]byte(fingerprintText(reg.types)))
	return hex.EncodeToString(sum[:8])
}

// FingerprintText is the text whose hash is Fingerprint: for each chare
// type a line "ID name", and for each of its entry methods a line
// " ID method message result threaded", types spelled as programs write
// them ("chare.Callback", "<nil>" for none).
func FingerprintText() string {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return fingerprintText(reg.types)
}

// fingerprintText is what Fingerprint hashes: a line per type and one per
// entry method. Types are spelled as programs write them (typeName), so
// the text, and the fingerprint that checkpoints carry, does not depend on
// which package holds chare's types.
func fingerprintText(types []*Type) string {
	var b strings.Builder
	for _, t := range types {
		fmt.Fprintf(&b, "%d %s\n", t.ID, t.Name)
		for _, e := range t.entries {
			fmt.Fprintf(&b, " %d %s %s %s %v\n", e.ID, e.Name, typeName(e.Msg), typeName(e.Result), e.Threaded)
		}
	}
	return b.String()
}
