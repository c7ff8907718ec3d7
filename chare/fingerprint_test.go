package chare_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// The program fingerprint, which a checkpoint carries and a restart
// compares, spells the message and result types of entry methods as the
// program writes them: chare.Callback and chare.Proxy[T], as it did when
// these types lived in package chare, so checkpoints written then restart.

type fpW struct{ chare.Chare[fpW] }

type fpMain struct{ chare.Chare[fpMain] }

func (c *fpMain) Done(chare.Callback)      {}
func (c *fpMain) Watch(chare.Proxy[fpW])   {}
func (c *fpMain) Reply(int) chare.Callback { return chare.Callback{} }
func (c *fpMain) Many([]chare.Proxy[fpW])  {}
func (c *fpMain) Opt(*chare.Callback)      {}

func init() {
	chare.Register[fpW]()
	chare.Register[fpMain]()
}

func TestFingerprintSpellsChareTypesAsBefore(t *testing.T) {
	var block []string
	lines := strings.Split(core.FingerprintText(), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, " chare_test.fpMain") && !strings.HasPrefix(l, " ") {
			for _, e := range lines[i+1:] {
				if !strings.HasPrefix(e, " ") {
					break
				}
				_, rest, _ := strings.Cut(strings.TrimPrefix(e, " "), " ") // drop the entry ID
				block = append(block, rest)
			}
		}
	}
	// Every chare's exported methods, its own and those of the embedded
	// Chare, are entry methods: a change to Chare's method set changes
	// every program's fingerprint, and so is pinned here too.
	require.Equal(t, []string{
		"Abort error <nil> false",
		"Args <nil> []string false",
		"DetectQuiescence chare.Callback <nil> false",
		"Done chare.Callback <nil> false",
		"Exit int <nil> false",
		"Here <nil> *chare.PE false",
		"Index <nil> interface {} false",
		"Load <nil> chare.ObjLoad false",
		"Many []chare.Proxy[github.com/charmgo/charm/chare_test.fpW] <nil> false",
		"MemberState <nil> chare.MemberState false",
		"NumPEs <nil> int false",
		"Opt *chare.Callback <nil> false",
		"PE <nil> int false",
		"Reply int chare.Callback false",
		"ResetLoad <nil> <nil> false",
		"Self <nil> interface {} false",
		"SetLoad float64 error false",
		"SetMemberState chare.MemberState <nil> false",
		"ThisProxy <nil> chare.Proxy[github.com/charmgo/charm/chare_test.fpMain] false",
		"Watch chare.Proxy[github.com/charmgo/charm/chare_test.fpW] <nil> false",
	}, block)
	require.NotContains(t, core.FingerprintText(), "core.")
	require.Len(t, chare.Fingerprint(), 16)
}
