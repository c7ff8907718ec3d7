package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// writeCkpt writes a checkpoint file holding f, as writeCheckpoint does.
func writeCkpt(t *testing.T, f *ckptFile) string {
	t.Helper()
	body, err := msgpack.Marshal(f)
	require.NoError(t, err)
	dir := t.TempDir()
	data := append(ckptHeader(body), body...)
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
	require.ErrorContains(t, err, fmt.Sprintf("%s is truncated: it has %d bytes, its header declares %d", path, len(data)-3, len(data)))
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
	require.NoError(t, os.WriteFile(path, append(ckptHeader(junk), junk...), 0o644))
	_, err = readCheckpoint(dir)
	require.ErrorContains(t, err, "decoding")
}

// sparseFile makes a file of size bytes at path that starts with head and
// is zeros after it, without writing the zeros (a sparse file).
func sparseFile(t *testing.T, path string, head []byte, size int64) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(head)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
}

// allocatedBy returns the bytes fn allocates on the heap (of the whole
// process: the test runs alone in it, so the rest is small noise).
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadCheckpointLargeFiles: a large file is refused from its header
// and its size, with an error naming the file (and both sizes when they
// disagree), allocating a few megabytes at most whatever its size: a
// gigabyte of zeros (bad header), a valid header followed by two
// gigabytes more than it declares, a header that declares more than the
// file holds, one that declares more than the limit, and a body of half
// a gigabyte whose checksum does not match (checked as it is read, before
// the body is held). A valid file is read whole.
func TestReadCheckpointLargeFiles(t *testing.T) {
	const bound = 16 << 20 // what the reads may allocate
	good := &ckptFile{Program: Fingerprint(), PEs: 1, Nodes: 1, Seqs: []uint32{1}, Resume: ExitCallback(0)}
	body, err := msgpack.Marshal(good)
	require.NoError(t, err)
	head := ckptHeader(body)
	size := int64(len(head) + len(body))
	declaring := func(n uint64) []byte {
		h := append([]byte{}, ckptMagic...)
		h = binary.BigEndian.AppendUint64(h, n)
		return append(h, make([]byte, sha256.Size)...)
	}
	cases := []struct {
		name  string
		head  []byte
		size  int64
		wants []string
	}{
		{"zeros", nil, 1 << 30, []string{"bad header"}},
		{"valid header, 2 GiB after", append(head, body...), size + 2<<30,
			[]string{"larger than its header declares", fmt.Sprint(size + 2<<30), fmt.Sprint(size)}},
		{"declares more than the file", declaring(1 << 30), 1 << 20,
			[]string{"truncated", fmt.Sprint(1 << 20), fmt.Sprint(int64(ckptHeaderSize) + 1<<30)}},
		{"declares more than the limit", declaring(1 << 62), 1 << 30, []string{"more than the limit", fmt.Sprint(uint64(1) << 62)}},
		{"checksum of 512 MiB", declaring(512 << 20), int64(ckptHeaderSize) + 512<<20, []string{"checksum does not match"}},
		{"format 1", append(append([]byte{}, ckptMagicV1...), make([]byte, 40)...), 1 << 30, []string{"checkpoint format 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, CheckpointFile)
			sparseFile(t, path, c.head, c.size)
			var err error
			alloc := allocatedBy(func() { _, err = readCheckpoint(dir) })
			require.Error(t, err)
			require.ErrorContains(t, err, path, "the error names the file")
			for _, w := range c.wants {
				require.ErrorContains(t, err, w)
			}
			require.Less(t, alloc, uint64(bound), "refusing a file of %d bytes allocated %d bytes", c.size, alloc)
		})
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, CheckpointFile), append(head, body...), 0o644))
	f, err := readCheckpoint(dir)
	require.NoError(t, err)
	require.Equal(t, good.Seqs, f.Seqs)
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
