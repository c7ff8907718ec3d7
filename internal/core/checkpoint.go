package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor"
	"github.com/charmgo/charm/internal/mpcheck"
)

// Checkpoint and restart (Charm++'s CkStartCheckpoint and +restart).
//
// Checkpoint waits for quiescence, then every PE packs its objects (singleton
// chares, the main chare among them, group branches and array elements:
// msgpack of their exported fields, or their own Pack/Unpack) and sends
// them to PE 0, which writes one file, CheckpointFile, in the directory: a
// header, a SHA-256 of the body, and the body (msgpack). Restarting the
// program with -restart DIR (Config.Restart) reads it on node 0, which
// rebuilds every collection and sends every object to its PE, with the
// same or another number of PEs and processes: array elements go to their
// home under the new PE count, group branch p gets the state of branch p
// (a PE the old job did not have gets branch 0's), singleton chares go to
// PE (old PE mod PEs). Then the checkpoint's callback runs again, as it
// ran after the checkpoint was written: the program goes on from there.
// What is not saved: messages in flight (there are none at quiescence),
// futures, threads, and package variables. Checkpoint refuses a job with an
// object whose type has fields that would not survive packing (see
// Transient); a restart reads only a regular file, checks its header
// from its first bytes and its size against the length the header
// declares before reading the body, and holds no more than the body.

// CheckpointFile is the name of the file a checkpoint writes.
const CheckpointFile = "checkpoint.charm"

// ckptMagic starts a checkpoint file of this format (2: the header
// declares the body's length); ckptMagicV1 started format 1, whose header
// did not.
var (
	ckptMagic   = []byte("CHARMGO-CKPT-2\n\x00")
	ckptMagicV1 = []byte("CHARMGO-CKPT-1\n\x00")
)

// Packer is implemented by chare types that pack their own state for
// migration and checkpoints (Charm++'s pup); without it, their exported
// fields are packed with msgpack.
//
// Unpack's bytes come from another process or from a file, and the
// runtime does not know their format: a Packer that writes msgpack should
// read it back with UnmarshalState, which checks the bytes first, rather
// than msgpack.Unmarshal, which a few corrupt bytes can make allocate
// gigabytes or recurse until the stack is exhausted (a fatal error).
type Packer interface {
	Pack() ([]byte, error)
	Unpack([]byte) error
}

// UnmarshalState decodes msgpack bytes from another process or a file
// into v (a pointer), as msgpack.Unmarshal does, after checking them:
// lengths within the bytes, nesting at most 10,000 deep, and what the
// decoding allocates at most 64 bytes per byte plus 1 MiB, counted along
// v's type (package internal/mpcheck). For Packers; the runtime checks
// the state it decodes itself.
func UnmarshalState(b []byte, v any) error {
	if err := mpcheck.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", valueTypeName(v), err)
	}
	return nil
}

// PackObject packs a chare object.
// Fields declared with Transient are left out: they unpack as their zero
// value.
func PackObject(obj any) ([]byte, error) {
	if p, ok := obj.(Packer); ok {
		return p.Pack()
	}
	if plan, ok := dropPlans.Load(reflect.TypeOf(obj)); ok {
		obj = plan.(*dropPlan).strip(obj)
	}
	return msgpack.Marshal(obj)
}

// UnpackObject unpacks a chare object's state into obj. A field that does
// not unpack (a non-nil interface value, say) is an error that names the
// type and the field, never a panic.
func UnpackObject(obj any, b []byte) error {
	if p, ok := obj.(Packer); ok {
		return p.Unpack(b)
	}
	return unpackState(obj, b)
}

// Restorer is implemented by the parts of collections: a restart hands
// them back the objects of a checkpoint.
type Restorer interface {
	Restore(pe *PE, index any, data []byte, st MemberState) error
}

type ckptObj struct {
	PE    int
	Index []byte `msgpack:",omitempty"`
	State MemberState
	Data  []byte
}

type ckptColl struct {
	Spec Spec
	Objs []ckptObj
}

type ckptRed struct {
	Stream CollID
	Next   int
}

type ckptFile struct {
	Program string // the registry's fingerprint
	PEs     int
	Nodes   int
	Written time.Time
	Colls   []ckptColl
	Seqs    []uint32 // per PE, its collection and future counter
	Reds    []ckptRed
	Resume  Callback

	path string // the file it was read from, for errors
}

// Checkpoint writes the job's state to dir once the job is quiescent, then
// sends cb (with a nil value); a restart from dir sends cb again. cb must
// be an entry callback: futures and functions do not survive a restart.
// It returns an error naming the type and the fields if an object of the
// job has state that would not survive packing (unexported, interface,
// func or channel fields not declared with Transient).
func Checkpoint(from Context, dir string, cb Callback) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	if dir == "" {
		return errors.New("chare: Checkpoint needs a directory")
	}
	if cb.Kind != CallbackEntry && cb.Kind != CallbackIgnore && cb.Kind != CallbackExit {
		return fmt.Errorf("chare: a checkpoint's callback must be an entry, ignore or exit callback, not a %v callback (futures and functions do not survive a restart)", cb.Kind)
	}
	// Every collection must be describable, now rather than halfway.
	var bad error
	pe.job.colls.Range(func(_, v any) bool {
		c := v.(*Collection)
		if c.Spec.Data == nil && c.SpecData != nil {
			if _, err := c.SpecData(); err != nil {
				bad = fmt.Errorf("chare: cannot checkpoint %s %v: %w", c.Type.Name, c.ID, err)
				return false
			}
		}
		return true
	})
	if bad != nil {
		return bad
	}
	// Every type whose state is packed must survive it: refuse before
	// anything is packed.
	pe.job.colls.Range(func(_, v any) bool {
		if c := v.(*Collection); c.Type != nil {
			bad = c.Type.PackError("a checkpoint")
		}
		return bad == nil
	})
	if bad != nil {
		return bad
	}
	pe.ap.DetectQuiescence(func(ap *actor.PE) {
		ap.Send(0, &ckptStart{Dir: dir, CB: cb})
	})
	return nil
}

// ckptStart begins a checkpoint on PE 0, once the job is quiescent.
type ckptStart struct {
	Dir string
	CB  Callback
}

func (m *ckptStart) Describe() string { return "a checkpoint" }
func (m *ckptStart) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if pe.ckpt != nil {
		pe.fail(fmt.Errorf("chare: a checkpoint to %s began while one to %s runs", m.Dir, pe.ckpt.dir))
		return
	}
	pe.ckpt = &ckptRun{dir: m.Dir, cb: m.CB, objs: map[CollID][]ckptObj{}, seqs: make([]uint32, pe.NumPEs())}
	for p := range pe.NumPEs() {
		ap.Send(p, &ckptCollect{})
	}
}

type ckptRun struct {
	dir     string
	cb      Callback
	objs    map[CollID][]ckptObj
	seqs    []uint32
	replies int
}

// ckptCollect asks a PE for its objects.
type ckptCollect struct{}

func (m *ckptCollect) Describe() string { return "a checkpoint's collection" }
func (m *ckptCollect) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	// Quiescence does not mean every reduction is complete: one that some
	// members have contributed to, and others have not yet, would be lost.
	for k, acc := range pe.reds {
		pe.fail(fmt.Errorf("chare: checkpoint: reduction %d of %v is under way on PE %d (%d contributions so far): checkpoint between reductions", k.no, k.coll, pe.ID(), acc.count))
		return
	}
	out := &ckptPart{PE: pe.ID(), Seq: pe.seq}
	ids := make([]CollID, 0, len(pe.locals))
	for id := range pe.locals {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if h, ok := pe.locals[id].(interface{ NumHeld() int }); ok && h.NumHeld() > 0 {
			pe.fail(fmt.Errorf("chare: checkpoint: %d messages on PE %d wait for elements of %v that do not exist; a checkpoint would lose them", h.NumHeld(), pe.ID(), id))
			return
		}
		each, ok := pe.locals[id].(interface{ Each(func(any)) })
		if !ok {
			continue
		}
		var objs []ckptObj
		var err error
		each.Each(func(obj any) {
			if err != nil {
				return
			}
			b := obj.(Context).base()
			o := ckptObj{PE: pe.ID(), State: b.MemberState()}
			if b.coll.Kind == KindElement {
				if o.Index, err = encodeIndex(b.index); err != nil {
					err = fmt.Errorf("encoding the index %v: %w", b.index, err)
					return
				}
			}
			if o.Data, err = PackObject(obj); err != nil {
				err = fmt.Errorf("packing %s %v: %w", b.coll.Type.Name, b.index, err)
			}
			objs = append(objs, o)
		})
		if err != nil {
			pe.fail(fmt.Errorf("chare: checkpoint on PE %d: %w", pe.ID(), err))
			return
		}
		if len(objs) > 0 {
			out.Colls = append(out.Colls, ckptColl{Spec: Spec{ID: id}, Objs: objs})
		}
	}
	ap.Send(0, out)
}

// ckptPart carries a PE's objects to PE 0.
type ckptPart struct {
	PE    int
	Seq   uint32
	Colls []ckptColl
}

func (m *ckptPart) Describe() string { return fmt.Sprintf("the checkpoint of PE %d", m.PE) }
func (m *ckptPart) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	run := pe.ckpt
	if run == nil || m.PE < 0 || m.PE >= len(run.seqs) {
		pe.fail(fmt.Errorf("chare: an unexpected checkpoint part from PE %d", m.PE))
		return
	}
	run.seqs[m.PE] = m.Seq
	for _, c := range m.Colls {
		run.objs[c.Spec.ID] = append(run.objs[c.Spec.ID], c.Objs...)
	}
	if run.replies++; run.replies < pe.NumPEs() {
		return
	}
	pe.ckpt = nil
	if err := pe.writeCheckpoint(run); err != nil {
		pe.fail(err)
		return
	}
	pe.TraceInstant("checkpoint", "checkpoint written", "dir", run.dir)
	if err := run.cb.Send(ContextOf(pe), nil); err != nil {
		pe.fail(fmt.Errorf("chare: the checkpoint's callback: %w", err))
	}
}

func (pe *PE) writeCheckpoint(run *ckptRun) error {
	f := ckptFile{Program: Fingerprint(), PEs: pe.NumPEs(), Nodes: pe.job.rt.NumNodes(), Written: time.Now().UTC(),
		Seqs: run.seqs, Resume: run.cb}
	var err error
	pe.job.colls.Range(func(_, v any) bool {
		c := v.(*Collection)
		s := c.Spec
		s.ID, s.Kind, s.Tree = c.ID, c.Kind, c.Tree
		if c.Type != nil {
			s.Type = c.Type.ID
		}
		if s.Data == nil && c.SpecData != nil {
			if s.Data, err = c.SpecData(); err != nil {
				err = fmt.Errorf("chare: checkpoint of %s %v: %w", c.Type.Name, c.ID, err)
				return false
			}
		}
		s.Init, s.InitMsg = 0, nil // restored objects are not constructed again
		f.Colls = append(f.Colls, ckptColl{Spec: s, Objs: run.objs[c.ID]})
		return true
	})
	if err != nil {
		return err
	}
	sort.Slice(f.Colls, func(i, j int) bool { return f.Colls[i].Spec.ID < f.Colls[j].Spec.ID })
	for s, o := range pe.redNext {
		f.Reds = append(f.Reds, ckptRed{Stream: s.coll, Next: o.next})
	}
	sort.Slice(f.Reds, func(i, j int) bool { return f.Reds[i].Stream < f.Reds[j].Stream })
	body, err := msgpack.Marshal(&f)
	if err != nil {
		return fmt.Errorf("chare: encoding the checkpoint: %w", err)
	}
	if err := os.MkdirAll(run.dir, 0o755); err != nil {
		return fmt.Errorf("chare: checkpoint directory: %w", err)
	}
	var buf bytes.Buffer
	buf.Write(ckptHeader(body))
	buf.Write(body)
	path := filepath.Join(run.dir, CheckpointFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("chare: writing the checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("chare: writing the checkpoint: %w", err)
	}
	return nil
}

// readCheckpoint reads and checks a checkpoint directory.
func readCheckpoint(dir string) (*ckptFile, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("chare: restart: checkpoint directory %s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("chare: restart: %s is not a directory", dir)
	}
	path := filepath.Join(dir, CheckpointFile)
	body, err := readCheckpointFile(path, maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("chare: restart: no checkpoint in %s: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("chare: restart: %w", err)
	}
	// The checksum is right: what follows reads a file that is whole but
	// may be wrong (edited, or written by another version), see check.
	f := ckptFile{path: path}
	if err := mpcheck.Unmarshal(body, &f); err != nil {
		return nil, fmt.Errorf("chare: restart: decoding %s: %w", path, err)
	}
	if fp := Fingerprint(); f.Program != fp {
		return nil, fmt.Errorf("chare: restart: %s was written by another program (its chare types and entry methods differ: fingerprint %s, this program's %s)", path, f.Program, fp)
	}
	if err := f.check(path); err != nil {
		return nil, err
	}
	return &f, nil
}

// maxCheckpointBytes bounds the body a restart reads (it is held in
// memory on node 0).
const maxCheckpointBytes = 64 << 30

// ckptHeaderSize is the size of a checkpoint file's header: the magic,
// the body's length (8 bytes, big-endian) and the body's SHA-256.
var ckptHeaderSize = len(ckptMagic) + 8 + sha256.Size

// ckptHeader returns the header of a checkpoint file whose body is body.
func ckptHeader(body []byte) []byte {
	sum := sha256.Sum256(body)
	h := append([]byte{}, ckptMagic...)
	h = binary.BigEndian.AppendUint64(h, uint64(len(body)))
	return append(h, sum[:]...)
}

// readCheckpointFile returns the body of the checkpoint file at path
// after checking it, in this order, so that memory stays bounded by the
// body the header declares and nothing large is held before the body is
// known to be whole: the file is a regular one (not a FIFO or a device);
// its first bytes are a header of this format; the body's declared length
// is at most limit and the file has exactly the header's size plus that
// length; the body's checksum, computed as the file is read, matches.
// Only then is the body read into memory.
func readCheckpointFile(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): a checkpoint is one", path, fileKind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The path may have changed between Stat and Open: check what was
	// opened.
	if st2, err := f.Stat(); err != nil {
		return nil, err
	} else if !os.SameFile(st, st2) || !st2.Mode().IsRegular() {
		return nil, fmt.Errorf("%s changed while it was opened", path)
	}
	size := st.Size()
	head := make([]byte, ckptHeaderSize)
	if n, err := io.ReadFull(f, head); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if bytes.HasPrefix(ckptMagic, head[:min(n, len(ckptMagic))]) {
				return nil, fmt.Errorf("%s is truncated (bad header): it has %d bytes, a header alone has %d", path, size, ckptHeaderSize)
			}
			return nil, fmt.Errorf("%s is not a checkpoint of this framework, or is truncated (bad header)", path)
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if magic := head[:len(ckptMagic)]; !bytes.Equal(magic, ckptMagic) {
		if bytes.Equal(magic, ckptMagicV1) {
			return nil, fmt.Errorf("%s was written by an earlier version of this framework (checkpoint format 1), which this one does not read (bad header)", path)
		}
		return nil, fmt.Errorf("%s is not a checkpoint of this framework, or is corrupt (bad header)", path)
	}
	declared := binary.BigEndian.Uint64(head[len(ckptMagic):])
	if declared > uint64(limit) {
		return nil, fmt.Errorf("%s is corrupt or too large: its header declares a body of %d bytes, more than the limit of %d", path, declared, limit)
	}
	want := int64(ckptHeaderSize) + int64(declared)
	switch {
	case size < want:
		return nil, fmt.Errorf("%s is truncated: it has %d bytes, its header declares %d (a body of %d bytes)", path, size, want, declared)
	case size > want:
		return nil, fmt.Errorf("%s is larger than its header declares, so it is corrupt: it has %d bytes, its header declares %d (a body of %d bytes)", path, size, want, declared)
	}
	sum := head[len(ckptMagic)+8:]
	// First pass: the checksum, without holding the body.
	h := sha256.New()
	if n, err := io.Copy(h, io.LimitReader(f, int64(declared))); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	} else if n < int64(declared) {
		return nil, fmt.Errorf("%s shrank while it was read: it has %d bytes, its header declares %d", path, int64(ckptHeaderSize)+n, want)
	}
	if !bytes.Equal(h.Sum(nil), sum) {
		return nil, fmt.Errorf("%s is corrupt (its checksum does not match)", path)
	}
	// Second pass: the body, now known to be whole.
	if _, err := f.Seek(int64(ckptHeaderSize), io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	body := make([]byte, declared)
	if _, err := io.ReadFull(f, body); err != nil {
		return nil, fmt.Errorf("%s changed while it was read: %w", path, err)
	}
	if n, _ := f.Read(make([]byte, 1)); n > 0 {
		return nil, fmt.Errorf("%s grew while it was read (it had %d bytes)", path, size)
	}
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%s changed while it was read (its checksum no longer matches)", path)
	}
	return body, nil
}

// fileKind names the type of a file that is not a regular one.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

// restartBoot rebuilds a checkpoint's collections on PE 0 and sends every
// object to its PE; once every PE has its objects, the checkpoint's
// callback runs.
func (pe *PE) restartBoot(f *ckptFile) error {
	rt := pe.job.rt
	np := pe.NumPEs()
	seqs := restartSeqs(f, np)
	pe.seq = seqs[0]
	type batch struct {
		coll CollID
		pe   int
	}
	out := map[batch][]ckptObj{}
	var order []batch
	add := func(c CollID, p int, o ckptObj) {
		k := batch{c, p}
		if _, ok := out[k]; !ok {
			order = append(order, k)
		}
		out[k] = append(out[k], o)
	}
	var totals []CollID
	for _, cc := range f.Colls {
		s := cc.Spec
		s.Restored = true
		var oldPE int
		if len(s.Tree) > 0 {
			oldPE = s.Tree[0]
		}
		switch s.Builder {
		case "chare":
			s.Tree = []int{oldPE % np}
		case "group":
			s.Tree = nil
			for p := range np {
				s.Tree = append(s.Tree, p)
			}
		case "nodegroup":
			s.Tree = nil
			for n := range rt.NumNodes() {
				s.Tree = append(s.Tree, rt.FirstPE(n))
			}
		default:
			s.Tree = nil
		}
		c, err := rebuild(rt, s)
		if err != nil {
			return fmt.Errorf("chare: restart from %s: rebuilding %v: %w", f.path, s.ID, err)
		}
		pe.job.colls.Store(c.ID, c)
		if rt.NumNodes() > 1 {
			pe.announce(c)
		}
		switch s.Builder {
		case "chare":
			for _, o := range cc.Objs {
				add(c.ID, c.Tree[0], o)
			}
		case "group", "nodegroup":
			byOld := map[int]ckptObj{}
			for _, o := range cc.Objs {
				byOld[o.PE] = o
			}
			for _, p := range c.Tree {
				old := p
				if s.Builder == "nodegroup" {
					old = -1 // node n's branch lived on the old first PE of node n
					if n := rt.NodeOf(p); n < f.Nodes {
						old = firstPEOf(f, n)
					}
				}
				o, ok := byOld[old]
				if !ok {
					o, ok = byOld[firstOf(byOld)]
				}
				if ok {
					add(c.ID, p, o)
				}
			}
		default:
			if c.Place == nil || c.DecodeIndex == nil {
				return fmt.Errorf("chare: restart from %s: collection %v (%s) cannot place its objects", f.path, c.ID, s.Builder)
			}
			seen := make(map[any]int, len(cc.Objs))
			for j, o := range cc.Objs {
				idx, err := c.DecodeIndex(o.Index)
				if err != nil {
					return fmt.Errorf("chare: restart from %s: %s number %d of %v: %w", f.path, c.Type.Name, j, c.ID, err)
				}
				if k, dup := seen[idx]; dup {
					return fmt.Errorf("chare: restart from %s: %s %v of %v is listed twice (numbers %d and %d)", f.path, c.Type.Name, idx, c.ID, k, j)
				}
				seen[idx] = j
				p, err := c.Place(idx)
				if err == nil && (p < 0 || p >= np) {
					err = fmt.Errorf("placed on PE %d of %d", p, np)
				}
				if err != nil {
					return fmt.Errorf("chare: restart from %s: %s %v of %v: %w", f.path, c.Type.Name, idx, c.ID, err)
				}
				add(c.ID, p, o)
			}
			totals = append(totals, c.ID)
			out[batch{c.ID, -1}] = cc.Objs // counted on the root below
		}
	}
	for p := 1; p < np; p++ {
		pe.ap.Send(p, &restoreMsg{Seq: seqs[p], SetSeq: true})
	}
	for _, k := range order {
		pe.ap.Send(k.pe, &restoreMsg{Coll: k.coll, Objs: out[k], File: f.path})
	}
	for _, id := range totals {
		pe.ap.Send(reductionRoot, &restoreMsg{Coll: id, Total: len(out[batch{id, -1}]), SetTotal: true})
	}
	for _, r := range f.Reds {
		pe.redNext[redStream{r.Stream}] = &redOrder{next: r.Next, top: r.Next, done: map[int]func(){}}
	}
	pe.restart = &restartRun{cb: f.Resume, file: f.path}
	for p := range np {
		pe.ap.Send(p, &restoreFence{})
	}
	return nil
}

// restartSeqs is where each PE of a restarted job of np PEs starts
// numbering the collections it makes: after the number it had given out in
// the checkpointed job, and after every ID the checkpoint holds that names
// it as its creator (a checkpoint of a restarted job holds collections
// made by PEs of the job before, which may be PEs the checkpointed job did
// not have): a new collection never takes a restored one's ID.
func restartSeqs(f *ckptFile, np int) []uint32 {
	seqs := make([]uint32, np)
	copy(seqs, f.Seqs)
	saw := func(id CollID) {
		if p := int(uint64(id) >> 32); p < np {
			seqs[p] = max(seqs[p], uint32(id))
		}
	}
	for _, cc := range f.Colls {
		saw(cc.Spec.ID)
		for _, o := range cc.Objs {
			for sec := range o.State.Sections {
				saw(sec)
			}
		}
	}
	for _, r := range f.Reds {
		saw(r.Stream)
	}
	return seqs
}

// firstPEOf is the first PE of node n in the checkpointed job.
func firstPEOf(f *ckptFile, n int) int {
	lo, _ := actor.PERange(n, f.Nodes, f.PEs)
	return lo
}

func firstOf(m map[int]ckptObj) int {
	first := -1
	for p := range m {
		if first < 0 || p < first {
			first = p
		}
	}
	return first
}

type restartRun struct {
	cb   Callback
	file string
	acks int
}

// restoreMsg gives a PE its objects (or its counter, or an array's count
// of elements on the root).
type restoreMsg struct {
	Coll     CollID
	Objs     []ckptObj
	Seq      uint32
	SetSeq   bool
	Total    int
	SetTotal bool
	File     string // the checkpoint, for errors
}

func (m *restoreMsg) Describe() string { return fmt.Sprintf("the restart of %v", m.Coll) }
func (m *restoreMsg) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if m.SetSeq {
		pe.seq = max(pe.seq, m.Seq)
		return
	}
	var run func()
	run = func() {
		if _, err := JobCollection(pe.job, m.Coll); err != nil {
			// Node 0 announces every restored collection, whichever PE
			// made it in the old job; wait for the announcement.
			pe.hold(m.Coll, m, run)
			return
		}
		l, err := PartOrHold(pe, m.Coll, m, run)
		if err != nil || l == nil {
			if err != nil {
				pe.fail(fmt.Errorf("chare: restart: %w", err))
			}
			return
		}
		if m.SetTotal {
			if t, ok := l.(interface{ RestoreCount(int) }); ok {
				t.RestoreCount(m.Total)
			}
			return
		}
		r, ok := l.(Restorer)
		if !ok {
			pe.fail(fmt.Errorf("chare: restart: collection %v cannot take back objects", m.Coll))
			return
		}
		c, err := JobCollection(pe.job, m.Coll)
		if err != nil {
			pe.fail(err)
			return
		}
		for _, o := range m.Objs {
			var idx any = pe.ID()
			if c.Kind == KindElement {
				if idx, err = c.DecodeIndex(o.Index); err != nil {
					pe.fail(fmt.Errorf("chare: restart from %s: %w", m.File, err))
					return
				}
			} else if c.Kind == KindBranch && c.Spec.Builder == "nodegroup" {
				idx = pe.job.rt.NodeOf(pe.ID())
			}
			if err := r.Restore(pe, idx, o.Data, o.State); err != nil {
				pe.fail(fmt.Errorf("chare: restart from %s: %s %v of %v on PE %d: %w", m.File, c.Type.Name, idx, c.ID, pe.ID(), err))
				return
			}
		}
	}
	run()
}

// restoreFence comes after a PE's objects; its answer tells PE 0 the PE
// is ready.
type restoreFence struct{}

func (restoreFence) Describe() string { return "the end of a restart" }
func (restoreFence) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	if len(pe.pending) > 0 {
		// Objects still wait for an announcement: answer after them.
		for id := range pe.pending {
			pe.hold(id, restoreFence{}, func() { restoreFence{}.Deliver(ap) })
			return
		}
	}
	ap.Send(0, restoreAck{})
}

type restoreAck struct{}

func (restoreAck) Describe() string { return "a PE's restart" }
func (restoreAck) Deliver(ap *actor.PE) {
	pe := peOf(ap)
	run := pe.restart
	if run == nil {
		pe.fail(errors.New("chare: an unexpected restart acknowledgement"))
		return
	}
	if run.acks++; run.acks < pe.NumPEs() {
		return
	}
	pe.restart = nil
	if err := run.cb.Send(ContextOf(pe), nil); err != nil {
		pe.fail(fmt.Errorf("chare: restart from %s: the checkpoint's callback: %w", run.file, err))
	}
}

// Restore implements Restorer for a singleton chare.
func (s *single) Restore(_ *PE, _ any, data []byte, st MemberState) error {
	if err := UnpackObject(s.obj, data); err != nil {
		return err
	}
	s.obj.(Context).base().SetMemberState(st)
	return nil
}

// Each calls fn on the chare.
func (s *single) Each(fn func(any)) { fn(s.obj) }
