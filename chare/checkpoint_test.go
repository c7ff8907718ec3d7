package chare

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// writeCkpt writes a checkpoint file holding f, as writeCheckpoint does.
func writeCkpt(t *testing.T, f *ckptFile) string {
	t.Helper()
	body, err := msgpack.Marshal(f)
	require.NoError(t, err)
	sum := sha256.Sum256(body)
	dir := t.TempDir()
	data := append(append(append([]byte{}, ckptMagic...), sum[:]...), body...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, CheckpointFile), data, 0o644))
	return dir
}

func TestReadCheckpointRefusesBadInput(t *testing.T) {
	good := &ckptFile{Program: Fingerprint(), PEs: 2, Nodes: 1, Seqs: []uint32{3, 1}, Resume: ExitCallback(0)}
	dir := writeCkpt(t, good)
	f, err := readCheckpoint(dir)
	require.NoError(t, err)
	require.Equal(t, good.Seqs, f.Seqs)

	_, err = readCheckpoint(filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "checkpoint directory")

	other := *good
	other.Program = "another"
	_, err = readCheckpoint(writeCkpt(t, &other))
	require.ErrorContains(t, err, "written by another program")

	bad := *good
	bad.Seqs = []uint32{1}
	_, err = readCheckpoint(writeCkpt(t, &bad))
	require.ErrorContains(t, err, "describes 2 PEs with 1 counters")

	path := filepath.Join(dir, CheckpointFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data[:len(data)-3], 0o644))
	_, err = readCheckpoint(dir)
	require.ErrorContains(t, err, "truncated or corrupt")
	require.NoError(t, os.WriteFile(path, data[:10], 0o644))
	_, err = readCheckpoint(dir)
	require.ErrorContains(t, err, "bad header")
	flipped := append([]byte{}, data...)
	flipped[len(flipped)-1] ^= 0x40
	require.NoError(t, os.WriteFile(path, flipped, 0o644))
	_, err = readCheckpoint(dir)
	require.ErrorContains(t, err, "checksum")

	// A body that checks out but is no checkpoint.
	junk := []byte{0xc1, 0xc1}
	sum := sha256.Sum256(junk)
	require.NoError(t, os.WriteFile(path, append(append(append([]byte{}, ckptMagic...), sum[:]...), junk...), 0o644))
	_, err = readCheckpoint(dir)
	require.ErrorContains(t, err, "decoding")
}

// TestReadBoundedStopsAtTheSize: a file larger than the bound is refused
// without being read.
func TestReadBoundedStopsAtTheSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o644))
	b, err := readRegular(path, 10)
	require.NoError(t, err)
	require.Equal(t, "0123456789", string(b))
	_, err = readRegular(path, 4)
	require.ErrorContains(t, err, "larger than")
	require.ErrorContains(t, err, path)
}

// TestRestartSeqs: a restarted PE numbers new collections after every ID
// the checkpoint holds that names it as creator, and after the counter it
// had, whichever is higher; PEs beyond the old job start from the IDs.
func TestRestartSeqs(t *testing.T) {
	id := func(pe, n int) CollID { return CollID(uint64(pe)<<32 | uint64(n)) }
	f := &ckptFile{PEs: 2, Seqs: []uint32{3, 9},
		Colls: []ckptColl{
			{Spec: Spec{ID: id(0, 7)}}, // above PE 0's counter (written by another version, say)
			{Spec: Spec{ID: id(1, 2)}},
			{Spec: Spec{ID: id(3, 5)}, Objs: []ckptObj{{State: MemberState{Sections: map[CollID]int{id(3, 11): 1}}}}}, // made by PE 3 of a job before
			{Spec: Spec{ID: id(6, 4)}}, // a PE the new job does not have
		},
		Reds: []ckptRed{{Stream: id(2, 8)}}}
	require.Equal(t, []uint32{7, 9, 8, 11}, restartSeqs(f, 4))
	require.Equal(t, []uint32{7}, restartSeqs(f, 1))
}

// UnmarshalState refuses what msgpack.Unmarshal would choke on: a count
// the bytes cannot hold, nesting that would exhaust the stack, nils that
// would become whole elements; and decodes real state.
func TestUnmarshalStateChecks(t *testing.T) {
	type st struct {
		U      []float64
		Blocks [][512]float64
	}
	var v st
	require.ErrorContains(t, UnmarshalState([]byte{0x81, 0xa1, 'U', 0xdd, 0x01, 0x00, 0x00, 0x00, 0x00}, &v), "claims 16777216 values")
	deep := append([]byte{0x81, 0xa1, 'X'}, bytes.Repeat([]byte{0x91}, 20000)...)
	require.ErrorContains(t, UnmarshalState(append(deep, 0xc0), &v), "nested deeper than")
	nils := append([]byte{0x81, 0xa6, 'B', 'l', 'o', 'c', 'k', 's', 0xdc, 0x10, 0x00}, bytes.Repeat([]byte{0xc0}, 4096)...)
	require.ErrorContains(t, UnmarshalState(nils, &v), "would allocate at least")

	want := st{U: []float64{1, 2.5}, Blocks: make([][512]float64, 2)}
	b, err := msgpack.Marshal(&want)
	require.NoError(t, err)
	require.NoError(t, UnmarshalState(b, &v))
	require.Equal(t, want, v)
}
