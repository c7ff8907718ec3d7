package wire

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateCorpus = flag.Bool("update-corpus", false,
	"rewrite the generated seeds in testdata/fuzz/FuzzDecodeFrame")

// FuzzDecodeFrame feeds arbitrary bytes to DecodeFrame: it must never
// panic, and whatever it accepts must re-encode to an equal frame. The
// seeds in testdata/fuzz/FuzzDecodeFrame hold valid frames of every kind
// and broken ones (see TestFuzzCorpus), plus any crasher fuzzing found.
func FuzzDecodeFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
	})
}

// corpusSeeds are the generated seeds, by file name.
func corpusSeeds(t *testing.T) map[string][]byte {
	seeds := map[string][]byte{}
	for _, tc := range sampleFrames() {
		b := encode(t, &tc.f)
		if len(b) > 4096 { // keep the corpus small
			continue
		}
		name := "valid-" + strings.ReplaceAll(tc.name, " ", "-")
		name = strings.ReplaceAll(name, "/", "-")
		seeds[name] = b
	}
	data := encode(t, &Frame{Kind: KindData, Token: "job", From: 1, Seq: 7,
		Items: []Item{{PE: 1, Kind: 2, Body: []byte("abc")}, {PE: 300, Kind: 4000, Body: []byte{}}}})
	seeds["broken-truncated"] = data[:len(data)-2]
	seeds["broken-trailing"] = append(append([]byte{}, data...), 0x00)
	seeds["broken-version-7"] = append([]byte{0x98, 0x07}, data[2:]...)
	seeds["broken-kind-10"] = append([]byte{0x98, 0x02, 0x0a}, data[3:]...)
	seeds["broken-huge-items"] = append(append([]byte{}, header...), 0xc0, 0xdd, 0xff, 0xff, 0xff, 0xff, 0x93, 0x00)
	seeds["broken-huge-body"] = append(append([]byte{}, header...), 0xc6, 0x7f, 0xff, 0xff, 0xff, 0x00)
	seeds["broken-negative-pe"] = append(append([]byte{}, header...), 0xc0, 0x91, 0x93, 0xff, 0x00, 0xc0)
	seeds["broken-token-as-bin"] = []byte{0x98, 0x02, 0x01, 0xc4, 0x01, 't', 0x00, 0x00, 0x00, 0xc0, 0xc0}
	seeds["broken-empty"] = []byte{}
	return seeds
}

func corpusFile(b []byte) string {
	return fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
}

// TestFuzzCorpus keeps the generated seeds in step with the format; run it
// with -args -update-corpus after changing the format.
func TestFuzzCorpus(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the seeds are generated where int has 64 bits")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeFrame")
	for name, b := range corpusSeeds(t) {
		path := filepath.Join(dir, name)
		if *updateCorpus {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(corpusFile(b)), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./actor/wire -run TestFuzzCorpus -args -update-corpus")
		require.Equal(t, corpusFile(b), string(got), "%s is stale: run go test ./actor/wire -run TestFuzzCorpus -args -update-corpus", path)
		_, err = DecodeFrame(b)
		require.Equal(t, strings.HasPrefix(name, "valid-"), err == nil, "%s: %v", name, err)
	}
}
